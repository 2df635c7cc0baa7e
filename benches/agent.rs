//! Agent-core benchmarks: loop overhead per iteration with an in-process
//! backend and a 1,000-message context; resume (load) of a 10,000-message
//! session; append of one message. Real SQLite files in a temp dir.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use criterion::{Criterion, criterion_group, criterion_main};
use navi::agent::{Agent, AgentParts};
use navi::config::{Config, Paths};
use navi::llm::scripted::{ScriptedBackend, text_chunks};
use navi::llm::{ChatMessage, LlmBackend};
use navi::profile::{ProfileRegistry, parse};
use navi::protocol::EventSink;
use navi::session::{MessageKind, SessionStore, StoredMessage};
use navi::tools::{ApprovalGate, ToolEnv, ToolRegistry, builtin};
use std::sync::{Arc, RwLock};
use std::time::Duration;

fn paths(dir: &std::path::Path) -> Paths {
    Paths {
        config_file: None,
        config_dir: dir.join("cfg"),
        data_dir: dir.join("data"),
        db_path: dir.join("data/navi.db"),
        log_dir: dir.join("data/logs"),
    }
}

fn fill(store: &SessionStore, id: &str, n: usize) {
    for i in 0..n {
        let m = if i % 2 == 0 {
            ChatMessage::user(format!(
                "question {i}: how do I configure the thing number {i}?"
            ))
        } else {
            ChatMessage::assistant(format!(
                "answer {i}: set the option in the config file and restart; {}",
                "detail ".repeat(20)
            ))
        };
        store
            .append_both(id, &StoredMessage::new(m, MessageKind::Message))
            .ok();
    }
}

fn bench_store(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let store = SessionStore::open(&dir.path().join("navi.db")).unwrap_or_else(|e| panic!("{e}"));
    let big = store.create("developer").unwrap_or_else(|e| panic!("{e}"));
    fill(&store, &big.id, 5_000); // 5,000 per buffer = 10,000 messages
    c.bench_function("session_resume_10k_messages", |b| {
        b.iter(|| {
            store
                .load(&big.id)
                .ok()
                .flatten()
                .map(|s| s.display.len() + s.context.len())
        })
    });
    let small = store.create("developer").unwrap_or_else(|e| panic!("{e}"));
    let msg = StoredMessage::new(
        ChatMessage::assistant("a typical streamed answer of a few dozen words ".repeat(4)),
        MessageKind::Message,
    );
    c.bench_function("session_append_one_message_both_buffers", |b| {
        b.iter(|| store.append_both(&small.id, &msg).ok())
    });
}

fn bench_loop(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let p = paths(dir.path());
    let mut cfg = Config::default();
    cfg.llm.num_ctx = 1_000_000;
    let config = Arc::new(cfg);
    let store = Arc::new(SessionStore::open(&p.db_path).unwrap_or_else(|e| panic!("{e}")));
    let mut profiles = ProfileRegistry::default();
    let json = r#"{"id":"b","name":"B","description":"bench","model":"test-model","enabled_tools":["todo","scratchpad"],
        "planning_phase1_enabled":false,"planning_phase3_enabled":false}"#;
    profiles.insert(
        parse(json, "You are a benchmark.", None, "bench", "b", "built-in")
            .unwrap_or_else(|e| panic!("{e}")),
    );
    let mut tools = ToolRegistry::new();
    builtin::register_all(&mut tools);
    let mut backend = ScriptedBackend::new().with_context(1_000_000);
    backend.fallback = Some(text_chunks("ok"));
    backend.record = false;
    let backend = Arc::new(backend);
    let script = backend.clone();
    let agent = Agent::new(AgentParts {
        config: config.clone(),
        store: store.clone(),
        profiles: Arc::new(profiles),
        tools: Arc::new(RwLock::new(tools)),
        env: Arc::new(ToolEnv::new(config.clone(), p.clone())),
        gate: Arc::new(ApprovalGate::new(&config.security, false)),
        persona: "persona ".repeat(200),
        model_override: None,
        backend_forced: false,
        backend: Some(backend as Arc<dyn LlmBackend>),
    });
    // A 10-iteration turn (9 `todo read` tool calls, then an answer) on a
    // fresh 1,000-message session; the figure divided by 10 is the loop
    // overhead per iteration: build the request from the whole context,
    // stream, run a tool, persist every message, emit events.
    c.bench_function("agent_turn_10_iterations_1000_message_context", |b| {
        b.iter_batched(
            || {
                let s = store.create("b").unwrap_or_else(|e| panic!("{e}"));
                fill(&store, &s.id, 1_000);
                for _ in 0..9 {
                    script.push_tool_calls(&[("todo", serde_json::json!({"action": "read"}))]);
                }
                script.push_text("done");
                agent
                    .open_session(&s.id, dir.path().to_path_buf())
                    .unwrap_or_else(|e| panic!("{e}"))
            },
            |id| {
                rt.block_on(async {
                    let (sink, mut rx) = EventSink::channel(4096);
                    let drain = tokio::spawn(async move { while rx.recv().await.is_some() {} });
                    let out = agent
                        .run_stream(
                            &id,
                            "next?",
                            &sink,
                            &tokio_util::sync::CancellationToken::new(),
                        )
                        .await;
                    drop(sink);
                    let _ = drain.await;
                    assert_eq!(
                        script.pending(),
                        0,
                        "every scripted reply was consumed: {:?}",
                        out.as_ref().map(|o| o.completed)
                    );
                    out.map(|o| o.text.len()).unwrap_or(0)
                })
            },
            criterion::BatchSize::PerIteration,
        )
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20).measurement_time(Duration::from_secs(4)).warm_up_time(Duration::from_secs(1));
    targets = bench_store, bench_loop
}
criterion_main!(benches);
