//! The TUI event-loop harness: the real `App` (SQLite in a temp dir) whose
//! backend the test drives call by call, keys through a channel, frames
//! drawn to a `TestBackend`. Each model call the agent makes opens a
//! "call" the test feeds chunks to and ends; what the UI shows comes from
//! the real agent and the real session handle.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use crate::tui_support::*;
use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use futures_util::StreamExt;
use navi::app::{App, AppOptions, SessionChoice, SessionHandle};
use navi::config::{BackendKind, Config, Overrides, Paths};
use navi::llm::{
    ChatChunk, ChatRequest, ChunkStream, LlmBackend, LlmError, ModelInfo, Role, ToolCall, Usage,
};
use navi::ui::tui::cells::CellKind;
use navi::ui::tui::event_loop::{EventLoop, LoopOptions};
use navi::ui::tui::state::TuiState;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;

type Chunk = Result<ChatChunk, LlmError>;

#[derive(Default)]
pub struct Log {
    /// The last user message of every model call, in order.
    pub turns: Vec<String>,
    /// Feeds each call's stream; closed once the agent let the call go.
    pub senders: Vec<mpsc::UnboundedSender<Chunk>>,
    /// (run state label, cell summaries) after each frame.
    pub frames: Vec<(String, Vec<String>)>,
    /// The side pane's todo count after each frame.
    pub todos: Vec<usize>,
}

/// A backend whose answers the test writes as the call runs.
pub struct Gated(pub Arc<Mutex<Log>>);

#[async_trait::async_trait]
impl LlmBackend for Gated {
    fn kind(&self) -> BackendKind {
        BackendKind::Ollama
    }

    fn base_url(&self) -> &str {
        "gated://"
    }

    async fn stream_chat(&self, req: &ChatRequest) -> Result<ChunkStream, LlmError> {
        let last_user = req
            .messages
            .iter()
            .rev()
            .find(|m| m.role == Role::User)
            .map(|m| m.text().into_owned())
            .unwrap_or_default();
        let (tx, rx) = mpsc::unbounded_channel();
        let mut l = self.0.lock().unwrap();
        l.turns.push(last_user);
        l.senders.push(tx);
        Ok(Box::pin(futures_util::stream::unfold(
            rx,
            |mut rx| async move { rx.recv().await.map(|c| (c, rx)) },
        )))
    }

    async fn list_models(&self) -> Result<Vec<ModelInfo>, LlmError> {
        Ok(vec![self.model_info("test-model").await?])
    }

    async fn model_info(&self, model: &str) -> Result<ModelInfo, LlmError> {
        Ok(ModelInfo {
            name: model.into(),
            context_length: Some(1000),
            capabilities: vec![],
        })
    }
}

/// The transcript's cells in short, then the steers waiting to go in.
pub fn summary(st: &TuiState) -> Vec<String> {
    let mut out: Vec<String> = st
        .transcript
        .cells
        .iter()
        .map(|c| match &c.kind {
            CellKind::User(t) => format!("user:{t}"),
            CellKind::Assistant(d) => format!("assistant:{}", d.text),
            CellKind::Notice(t) => format!("notice:{t}"),
            CellKind::Info(l) => format!("info:{}", l.join("|")),
            CellKind::Error(t) => format!("error:{t}"),
            CellKind::Tool(t) => format!("tool:{}:{:?}", t.tool, t.status),
            other => format!("{other:?}").chars().take(20).collect(),
        })
        .collect();
    out.extend(st.steers.iter().map(|s| format!("steer:{s}")));
    out
}

pub struct Harness {
    pub log: Arc<Mutex<Log>>,
    pub keys: mpsc::UnboundedSender<Event>,
}

impl Harness {
    pub fn key(&self, code: KeyCode, m: KeyModifiers) {
        self.keys.send(Event::Key(KeyEvent::new(code, m))).unwrap();
    }
    pub fn typed(&self, s: &str) {
        for c in s.chars() {
            self.key(KeyCode::Char(c), KeyModifiers::NONE);
        }
    }
    pub fn enter(&self) {
        self.key(KeyCode::Enter, KeyModifiers::NONE);
    }
    pub fn ctrl_c(&self) {
        self.key(KeyCode::Char('c'), KeyModifiers::CONTROL);
    }
    fn chunk(&self, call: usize, c: ChatChunk) {
        let tx = self.log.lock().unwrap().senders[call].clone();
        let _ = tx.send(Ok(c));
    }
    /// Streams `text` as call `call`'s answer.
    pub fn text(&self, call: usize, text: &str) {
        self.chunk(call, ChatChunk::Text(text.to_string()));
    }
    /// Call `call` asks for a tool.
    pub fn tool_call(&self, call: usize, id: &str, name: &str, args: Value) {
        self.chunk(
            call,
            ChatChunk::ToolCalls(vec![ToolCall {
                id: id.into(),
                name: name.into(),
                arguments: args,
            }]),
        );
    }
    /// Call `call` ends normally (its usage first: the status line's figure).
    pub fn end(&self, call: usize) {
        self.chunk(
            call,
            ChatChunk::Usage(Usage {
                prompt_tokens: 90,
                completion_tokens: 10,
                ..Usage::default()
            }),
        );
        self.chunk(
            call,
            ChatChunk::Done {
                finish_reason: Some("stop".into()),
            },
        );
    }
    /// Whether the agent let call `call` go (stopped: its stream dropped).
    pub fn dropped(&self, call: usize) -> bool {
        self.log.lock().unwrap().senders[call].is_closed()
    }
    /// Waits until the log satisfies `f`.
    pub async fn until_log(&self, what: &str, f: impl Fn(&Log) -> bool) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        while !f(&self.log.lock().unwrap()) {
            assert!(
                tokio::time::Instant::now() < deadline,
                "timed out waiting for: {what}"
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
    /// Waits until the agent made call `call`.
    pub async fn until_call(&self, call: usize) {
        self.until_log(&format!("model call {call}"), |l| l.senders.len() > call)
            .await;
    }
    /// Waits until a frame satisfies `f`.
    pub async fn until(&self, what: &str, f: impl Fn(&str, &[String]) -> bool) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        loop {
            {
                let l = self.log.lock().unwrap();
                if let Some((state, cells)) = l.frames.last()
                    && f(state, cells)
                {
                    return;
                }
                if tokio::time::Instant::now() > deadline {
                    panic!(
                        "timed out waiting for: {what}; last frame: {:?}",
                        l.frames.last()
                    );
                }
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
}

/// A profile with the terminal tool and no planning: one model call per
/// message unless a tool is called.
fn write_profile(config_dir: &std::path::Path) {
    let p = config_dir.join("profiles/plain");
    std::fs::create_dir_all(&p).unwrap();
    let cfg = json!({
        "id": "plain", "name": "Plain", "description": "test profile",
        "model": ["test-model"], "enabled_tools": ["terminal"],
        "planning_enabled": false, "planning_phase1_enabled": false,
        "planning_phase3_enabled": false, "iteration_budget_enabled": false,
        "goal_anchoring_enabled": false, "anti_stall_enabled": false,
        "think_enabled": false
    });
    std::fs::write(p.join("config.json"), cfg.to_string()).unwrap();
    std::fs::write(p.join("system_prompt.txt"), "Answer briefly.").unwrap();
}

/// The app in `dir` on the gated backend (approvals asked, theme dark).
pub fn app(dir: &std::path::Path, log: &Arc<Mutex<Log>>) -> App {
    let paths = Paths {
        config_file: None,
        config_dir: dir.join("cfg"),
        data_dir: dir.join("data"),
        db_path: dir.join("data/navi.db"),
        log_dir: dir.join("data/logs"),
    };
    write_profile(&paths.config_dir);
    let c = Config::default();
    let opts = AppOptions {
        interactive: true,
        backend: Some(Arc::new(Gated(log.clone())) as Arc<dyn LlmBackend>),
        work_dir: Some(dir.to_path_buf()),
        ..AppOptions::default()
    };
    App::build(c, paths, Overrides::default(), opts).unwrap()
}

/// Runs the loop on a new session of profile `plain` with `script` driving
/// it; returns the final screen and the log.
pub async fn run<F, Fut>(script: F) -> (String, Arc<Mutex<Log>>)
where
    F: FnOnce(Harness) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    run_on(SessionChoice::New, |_| {}, script).await
}

/// Runs the loop on `choice` (seeded by `seed` in the app's database first).
pub async fn run_on<F, Fut>(
    choice: SessionChoice,
    seed: impl FnOnce(&App),
    script: F,
) -> (String, Arc<Mutex<Log>>)
where
    F: FnOnce(Harness) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let dir = tempfile::tempdir().unwrap();
    let log = Arc::new(Mutex::new(Log::default()));
    let app = app(dir.path(), &log);
    seed(&app);
    let session = navi::ui::tui::open_session(&app, &choice, Some("plain"))
        .ok()
        .unwrap();
    let st = navi::ui::tui::initial_state(&app, &session).ok().unwrap();
    let (screen, _) = drive(&app, session, st, &log, None, script).await;
    (screen, log)
}

/// The loop over `session` until the script quit it; the final screen and
/// state.
pub async fn drive<F, Fut>(
    app: &App,
    session: SessionHandle,
    st: TuiState,
    log: &Arc<Mutex<Log>>,
    probe: Option<Box<dyn FnOnce() -> navi::ui::tui::background::Probe + '_>>,
    script: F,
) -> (String, TuiState)
where
    F: FnOnce(Harness) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    navi::ui::tui::highlight::warm_up();
    let (ktx, krx) = mpsc::unbounded_channel::<Event>();
    let mut input = Box::pin(futures_util::stream::unfold(krx, |mut rx| async move {
        rx.recv().await.map(|e| (Ok(e), rx))
    }))
    .fuse();
    let mut terminal = Terminal::new(TestBackend::new(100, 24)).unwrap();
    let mut lp = EventLoop::new(app, session, st);
    lp.probe_background = probe;
    let opts = LoopOptions {
        max_fps: 120,
        check_backend: true,
    };
    let frames = log.clone();
    let h = Harness {
        log: log.clone(),
        keys: ktx,
    };
    let looped = lp.run(
        &mut terminal,
        &mut input,
        &opts,
        |_| {},
        |st| {
            let mut l = frames.lock().unwrap();
            l.frames.push((st.run.label(), summary(st)));
            l.todos.push(st.side.todos.len());
        },
    );
    let (res, ()) = tokio::time::timeout(Duration::from_secs(30), async {
        tokio::join!(looped, script(h))
    })
    .await
    .expect("the loop did not quit");
    res.unwrap();
    lp.session().close().await;
    let screen = text_of(terminal.backend().buffer());
    (screen, lp.state)
}
