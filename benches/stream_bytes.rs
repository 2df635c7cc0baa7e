//! Bytes written to the session database while one long answer streams.
//!
//! The real agent streams a 100 KB answer from the fake Ollama server on
//! 127.0.0.1 (1,000 chunks of 100 bytes, 25 ms apart, so every chunk reaches
//! the store's 20 ms flush) into a session in a real SQLite file. What is
//! counted is `wchar` of `/proc/self/io`: every byte this process handed to
//! `write`/`pwrite` (WAL frames, checkpoints, and the loopback HTTP traffic).
//! The same turn is then run against an in-memory store, which writes no
//! file, and its count is subtracted: what remains is what the database cost.
//!
//! Not a timing benchmark; it prints one table. Linux only (`/proc`).
//! ```text
//! cargo bench --profile dev --bench stream_bytes
//! ```
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[allow(dead_code)]
#[path = "../tests/support/fake_llm.rs"]
mod fake_llm;

use fake_llm::{FakeLlm, Reply};
use navi::agent::{Agent, AgentParts};
use navi::config::{Config, Paths};
use navi::llm::LlmBackend;
use navi::llm::ollama::OllamaBackend;
use navi::profile::{ProfileRegistry, parse};
use navi::protocol::EventSink;
use navi::session::SessionStore;
use navi::tools::{ApprovalGate, ToolEnv, ToolRegistry};
use std::sync::{Arc, RwLock};

const CHUNKS: usize = 1_000;
const CHUNK_BYTES: usize = 100;
const DELAY_MS: u64 = 25;

fn wchar() -> u64 {
    let io = std::fs::read_to_string("/proc/self/io").unwrap_or_default();
    io.lines()
        .find_map(|l| l.strip_prefix("wchar:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0)
}

fn answer() -> String {
    // Words of 99 visible characters and a space: the fake server sends one
    // word per chunk.
    (0..CHUNKS)
        .map(|i| {
            let word = format!("w{i:05}");
            let pad = "x".repeat(CHUNK_BYTES - 1 - word.len());
            format!("{word}{pad} ")
        })
        .collect()
}

fn agent(dir: &std::path::Path, store: Arc<SessionStore>, url: &str) -> Agent {
    let paths = Paths {
        config_file: None,
        config_dir: dir.join("cfg"),
        data_dir: dir.join("data"),
        db_path: dir.join("data/navi.db"),
        log_dir: dir.join("data/logs"),
    };
    let config = Arc::new(Config::default());
    let mut profiles = ProfileRegistry::default();
    let json = r#"{"id":"b","name":"B","description":"bench","model":"test-model","enabled_tools":[],
        "planning_phase1_enabled":false,"planning_phase3_enabled":false,
        "iteration_budget_enabled":false,"goal_anchoring_enabled":false}"#;
    profiles.insert(parse(json, "You are a benchmark.", None, "bench", "b", "built-in").unwrap());
    let backend = OllamaBackend::new(url).unwrap();
    Agent::new(AgentParts {
        config: config.clone(),
        store,
        profiles: Arc::new(profiles),
        tools: Arc::new(RwLock::new(ToolRegistry::new())),
        env: Arc::new(ToolEnv::new(config.clone(), paths)),
        gate: Arc::new(ApprovalGate::new(&config.security, false)),
        persona: "persona".into(),
        model_override: None,
        backend_forced: false,
        backend: Some(Arc::new(backend) as Arc<dyn LlmBackend>),
    })
}

/// Runs one streamed turn; returns (bytes written, answer length stored).
async fn turn(fake: &FakeLlm, store: Arc<SessionStore>, dir: &std::path::Path) -> (u64, usize) {
    let agent = agent(dir, store.clone(), &fake.ollama_url());
    let s = store.create("b").unwrap();
    fake.push(Reply::text(answer()).with_delay(DELAY_MS));
    let (sink, mut rx) = EventSink::channel(4096);
    let drain = tokio::spawn(async move { while rx.recv().await.is_some() {} });
    let before = wchar();
    let open = agent.open_session(&s.id, dir.to_path_buf()).unwrap();
    let out = agent
        .run_stream(
            &open,
            "tell a long story",
            &sink,
            &tokio_util::sync::CancellationToken::new(),
        )
        .await
        .unwrap();
    let written = wchar() - before;
    drop(sink);
    let _ = drain.await;
    assert_eq!(out.text.len(), CHUNKS * CHUNK_BYTES);
    let loaded = store.load(&s.id).unwrap().unwrap();
    let stored = loaded.display.last().map_or(0, |m| m.msg.text().len());
    (written, stored)
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        println!("stream_bytes: bench");
        return;
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let fake = FakeLlm::start().await;
        let dir = tempfile::tempdir().unwrap();
        let file = Arc::new(SessionStore::open(&dir.path().join("data/navi.db")).unwrap());
        let (on_file, stored) = turn(&fake, file.clone(), dir.path()).await;
        let memory = Arc::new(SessionStore::open_in_memory().unwrap());
        let (in_memory, _) = turn(&fake, memory, dir.path()).await;
        let db = on_file.saturating_sub(in_memory);
        let answer = CHUNKS * CHUNK_BYTES;
        println!("answer: {answer} bytes in {CHUNKS} chunks, {DELAY_MS} ms apart; stored {stored}");
        println!("written with a file store:   {on_file} bytes");
        println!("written with a memory store: {in_memory} bytes (HTTP traffic)");
        println!(
            "database bytes written:      {db} ({:.1} x the answer)",
            db as f64 / answer as f64
        );
    });
}
