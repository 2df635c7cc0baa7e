//! TUI benchmarks: frame render with a 10,000-message transcript, a frame
//! while streaming, loading a long history, and keystroke-to-frame latency
//! while tokens stream at 5,000/s (in process, through the real event loop).
//!
//! `cargo bench --bench tui` — numbers go in docs/performance.md.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use criterion::{Criterion, criterion_group};
use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use futures_util::StreamExt;
use navi::app::{App, AppOptions, SessionChoice};
use navi::config::{BackendKind, Config, Overrides, Paths};
use navi::llm::{
    ChatChunk, ChatMessage, ChatRequest, ChunkStream, LlmBackend, LlmError, ModelInfo, ToolCall,
};
use navi::protocol::AgentEvent;
use navi::session::{MessageKind, SessionMeta, StoredMessage, now_ms};
use navi::ui::tui::event_loop::{EventLoop, LoopOptions};
use navi::ui::tui::render::render;
use navi::ui::tui::state::TuiState;
use navi::ui::tui::theme::Theme;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::json;
use std::hint::black_box;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

fn meta() -> SessionMeta {
    SessionMeta {
        id: "bench-session-0001".into(),
        profile_id: "developer".into(),
        title: "A very long conversation".into(),
        pinned: false,
        created_at: now_ms(),
        last_active: now_ms(),
        context_token_count: 12_000,
        message_count: 10_000,
        cwd: None,
        project: None,
    }
}

/// 10,000 display messages: user questions, Markdown answers (lists, code),
/// tool calls with results, notices.
fn history(n: usize) -> Vec<StoredMessage> {
    let mut out = Vec::with_capacity(n);
    let mut i = 0;
    while out.len() < n {
        out.push(StoredMessage::new(
            ChatMessage::user(format!(
                "Question {i}: why does step {i} of the build fail on CI but not locally?"
            )),
            MessageKind::Message,
        ));
        let mut a = ChatMessage::assistant(format!(
            "Step {i} fails because **the cache key** differs.\n\n- CI uses `--locked`\n- local builds do not\n\n```rust\nfn key(i: u32) -> String {{\n    format!(\"build-{{i}}\")\n}}\n```\n\nRun the build again with the same flags."
        ));
        if i % 3 == 0 {
            a.push_tool_call(ToolCall {
                id: format!("call_{i}"),
                name: "terminal".into(),
                arguments: json!({"command": format!("cargo build --locked -p crate{i}")}),
            });
            out.push(StoredMessage::new(a.clone(), MessageKind::Message));
            let mut r = StoredMessage::new(
                ChatMessage::tool_result(
                    a.tool_calls().next().unwrap(),
                    "Compiling crate\nFinished dev profile in 3.2s",
                ),
                MessageKind::Message,
            );
            r.success = Some(i % 2 == 0);
            out.push(r);
        } else {
            out.push(StoredMessage::new(a, MessageKind::Message));
        }
        if i % 50 == 0 {
            out.push(StoredMessage::new(
                ChatMessage::system("stopped by user"),
                MessageKind::Notice,
            ));
        }
        i += 1;
    }
    out.truncate(n);
    out
}

fn state_10k() -> TuiState {
    navi::ui::tui::highlight::warm_up();
    let mut st = TuiState::new(Theme::load("dark", None, false).unwrap());
    st.switch_session(
        &meta(),
        &navi::session::replay::events(&history(10_000), &Default::default()),
    );
    st
}

fn benches(c: &mut Criterion) {
    let mut g = c.benchmark_group("tui");
    let mut term = Terminal::new(TestBackend::new(120, 40)).unwrap();

    let mut st = state_10k();
    term.draw(|f| render(f, &mut st)).unwrap();
    g.bench_function("frame_10k_follow", |b| {
        b.iter(|| {
            term.draw(|f| render(f, &mut st)).unwrap();
        });
    });

    let mut st = state_10k();
    term.draw(|f| render(f, &mut st)).unwrap();
    st.handle_key(
        KeyEvent::new(KeyCode::Home, KeyModifiers::CONTROL),
        Instant::now(),
    );
    for _ in 0..300 {
        st.handle_key(
            KeyEvent::new(KeyCode::PageDown, KeyModifiers::NONE),
            Instant::now(),
        );
    }
    term.draw(|f| render(f, &mut st)).unwrap();
    g.bench_function("frame_10k_scrolled_mid", |b| {
        b.iter(|| {
            term.draw(|f| render(f, &mut st)).unwrap();
        });
    });

    // Every frame at a new width: the visible cells re-wrap from scratch.
    let mut st = state_10k();
    let mut wide = Terminal::new(TestBackend::new(120, 40)).unwrap();
    let mut narrow = Terminal::new(TestBackend::new(119, 40)).unwrap();
    let mut flip = false;
    g.bench_function("frame_10k_after_resize", |b| {
        b.iter(|| {
            flip = !flip;
            let t = if flip { &mut wide } else { &mut narrow };
            t.draw(|f| render(f, &mut st)).unwrap();
        });
    });

    // Rows → events is part of what a resume costs.
    let h = history(10_000);
    g.bench_function("load_10k_history", |b| {
        b.iter(|| {
            let mut st = TuiState::new(Theme::load("dark", None, false).unwrap());
            let events = navi::session::replay::events(black_box(&h), &Default::default());
            st.switch_session(&meta(), &events);
            st
        });
    });

    // One 60 fps frame of a 5,000 tokens/s stream: 84 deltas, then a draw,
    // on a 10k-message transcript with an answer growing to ~5,000 tokens.
    let mut st = state_10k();
    st.begin_turn("stream please");
    let words: Vec<String> = (0..5_000)
        .map(|i| match i % 97 {
            0 => "\n\n".to_string(),
            50 => "\n\n```rust\nlet x = 1;\n```\n\n".to_string(),
            _ => format!("word{i} "),
        })
        .collect();
    let mut k = 0usize;
    g.bench_function("stream_frame_84_deltas", |b| {
        b.iter(|| {
            for _ in 0..84 {
                let delta = words[k % words.len()].clone();
                k += 1;
                st.apply(&AgentEvent::StreamDelta {
                    delta,
                    is_subagent: false,
                    agent: None,
                });
            }
            if k > 5_000 {
                // Start a fresh answer so it stays at realistic sizes.
                st.apply(&AgentEvent::ToolStarted {
                    id: format!("t{k}"),
                    tool: "todo".into(),
                    args: json!({}),
                    is_subagent: false,
                    agent: None,
                    call: None,
                });
                k = 0;
            }
            term.draw(|f| render(f, &mut st)).unwrap();
        });
    });
    g.finish();
}

criterion_group!(tui, benches);

/// A backend whose one answer is fed by the benchmark.
struct StreamBackend {
    rx: Mutex<Option<mpsc::UnboundedReceiver<ChatChunk>>>,
}

#[async_trait::async_trait]
impl LlmBackend for StreamBackend {
    fn kind(&self) -> BackendKind {
        BackendKind::Ollama
    }
    fn base_url(&self) -> &str {
        "bench://"
    }
    async fn stream_chat(&self, _req: &ChatRequest) -> Result<ChunkStream, LlmError> {
        let rx = self.rx.lock().unwrap().take().ok_or(LlmError::Cancelled)?;
        Ok(Box::pin(futures_util::stream::unfold(
            rx,
            |mut rx| async move { rx.recv().await.map(|c| (Ok(c), rx)) },
        )))
    }
    async fn list_models(&self) -> Result<Vec<ModelInfo>, LlmError> {
        Ok(vec![self.model_info("bench-model").await?])
    }
    async fn model_info(&self, model: &str) -> Result<ModelInfo, LlmError> {
        Ok(ModelInfo {
            name: model.into(),
            context_length: Some(1_000_000),
            capabilities: vec![],
        })
    }
}

/// The app in `dir` with a planning-free profile on `backend`.
fn bench_app(dir: &std::path::Path, backend: Arc<StreamBackend>) -> App {
    let p = dir.join("cfg/profiles/plain");
    std::fs::create_dir_all(&p).unwrap();
    let cfg = json!({
        "id": "plain", "name": "Plain", "description": "bench profile",
        "model": ["bench-model"], "enabled_tools": [],
        "planning_enabled": false, "planning_phase1_enabled": false,
        "planning_phase3_enabled": false, "think_enabled": false
    });
    std::fs::write(p.join("config.json"), cfg.to_string()).unwrap();
    let paths = Paths {
        config_file: None,
        config_dir: dir.join("cfg"),
        data_dir: dir.join("data"),
        db_path: dir.join("data/navi.db"),
        log_dir: dir.join("data/logs"),
    };
    let opts = AppOptions {
        backend: Some(backend as Arc<dyn LlmBackend>),
        work_dir: Some(dir.to_path_buf()),
        ..AppOptions::default()
    };
    App::build(Config::default(), paths, Overrides::default(), opts).unwrap()
}

/// Keystroke-to-frame latency while 5,000 tokens/s stream in: the real
/// event loop (TestBackend, 60 fps cap) on a 10k-message transcript; a key
/// every 23 ms for `keys` keys; latency = key sent → first frame showing it.
async fn latency(keys: usize) -> Vec<Duration> {
    let (ev_tx, ev_rx) = mpsc::unbounded_channel::<ChatChunk>();
    let backend = Arc::new(StreamBackend {
        rx: Mutex::new(Some(ev_rx)),
    });
    let dir = tempfile::tempdir().unwrap();
    let app = bench_app(dir.path(), backend);
    let session = navi::ui::tui::open_session(&app, &SessionChoice::New, Some("plain"))
        .ok()
        .unwrap();
    // The session is new; the screen shows a 10k-message transcript.
    let mut st = navi::ui::tui::initial_state(&app, &session).ok().unwrap();
    let mut m = session.info().unwrap();
    m.title = meta().title;
    st.switch_session(
        &m,
        &navi::session::replay::events(&history(10_000), &Default::default()),
    );
    let (ktx, krx) = mpsc::unbounded_channel::<Event>();
    let mut input = Box::pin(futures_util::stream::unfold(krx, |mut rx| async move {
        rx.recv().await.map(|e| (Ok(e), rx))
    }))
    .fuse();
    let mut term = Terminal::new(TestBackend::new(120, 40)).unwrap();
    let mut lp = EventLoop::new(&app, session, st);
    let sent: Arc<Mutex<Vec<Instant>>> = Arc::new(Mutex::new(Vec::new()));
    let seen: Arc<Mutex<Vec<Duration>>> = Arc::new(Mutex::new(Vec::new()));
    let opts = LoopOptions {
        max_fps: 60,
        check_backend: false,
    };
    let (s2, seen2) = (sent.clone(), seen.clone());
    let driver = async move {
        // Start the turn: type a message and press Enter.
        for c in "go".chars() {
            ktx.send(Event::Key(KeyEvent::new(
                KeyCode::Char(c),
                KeyModifiers::NONE,
            )))
            .unwrap();
        }
        ktx.send(Event::Key(KeyEvent::new(
            KeyCode::Enter,
            KeyModifiers::NONE,
        )))
        .unwrap();
        let streaming = tokio::spawn(async move {
            // 5 tokens per millisecond.
            let mut tick = tokio::time::interval(Duration::from_millis(1));
            let mut i = 0u64;
            loop {
                tick.tick().await;
                for _ in 0..5 {
                    i += 1;
                    let delta = if i.is_multiple_of(400) {
                        "\n\n".to_string()
                    } else {
                        format!("tok{i} ")
                    };
                    if ev_tx.send(ChatChunk::Text(delta)).is_err() {
                        return i;
                    }
                }
            }
        });
        tokio::time::sleep(Duration::from_millis(200)).await;
        for n in 0..keys {
            s2.lock().unwrap().push(Instant::now());
            let c = char::from(b'a' + (n % 26) as u8);
            ktx.send(Event::Key(KeyEvent::new(
                KeyCode::Char(c),
                KeyModifiers::NONE,
            )))
            .unwrap();
            tokio::time::sleep(Duration::from_millis(23)).await;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        streaming.abort();
        // Quit: Ctrl-C clears the composer, stops the turn; the grace
        // period ends the loop.
        for _ in 0..3 {
            ktx.send(Event::Key(KeyEvent::new(
                KeyCode::Char('c'),
                KeyModifiers::CONTROL,
            )))
            .unwrap();
        }
        drop(ktx);
    };
    let on_frame = move |st: &TuiState| {
        let typed = st.composer.text.len();
        let sent = sent.lock().unwrap();
        let mut seen = seen2.lock().unwrap();
        let now = Instant::now();
        while seen.len() < typed.min(sent.len()) {
            let i = seen.len();
            seen.push(now - sent[i]);
        }
    };
    let (r, ()) = tokio::join!(
        lp.run(&mut term, &mut input, &opts, |_| {}, on_frame),
        driver
    );
    r.unwrap();
    seen.lock().unwrap().clone()
}

fn pct(v: &[Duration], p: f64) -> Duration {
    let i = ((v.len() as f64 - 1.0) * p).round() as usize;
    v[i.min(v.len() - 1)]
}

fn latency_report() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let mut v = rt.block_on(latency(400));
    v.sort();
    if v.is_empty() {
        println!("tui/keystroke_to_frame: no samples");
        return;
    }
    println!(
        "tui/keystroke_to_frame_at_5000_tok_s: n={} p50={:.2?} p90={:.2?} p99={:.2?} max={:.2?}",
        v.len(),
        pct(&v, 0.5),
        pct(&v, 0.9),
        pct(&v, 0.99),
        v[v.len() - 1]
    );
}

fn main() {
    latency_report();
    tui();
    Criterion::default().configure_from_args().final_summary();
}
