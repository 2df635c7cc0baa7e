//! Shared by the context-management tests: a small-window session on the
//! fake server, a turn that collects its events, the agent's token estimate
//! of a recorded request, and the `navi` binary on the same dirs.
#![allow(dead_code)]

use crate::support::FakeLlm;
use navi::agent::{AgentError, Session, TurnOutcome};
use navi::app::{App, AppOptions};
use navi::config::{BackendKind, Config, Overrides, Paths};
use navi::protocol::{AgentEvent, EventSink};
use navi::session::SessionStore;
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use tokio_util::sync::CancellationToken;

pub const WINDOW: u64 = 2048;

/// A profile with a short prompt, one tool and no planning, so the window
/// is mostly conversation.
pub fn write_profile(config_dir: &std::path::Path) {
    let p = config_dir.join("profiles/tester");
    std::fs::create_dir_all(&p).unwrap();
    let cfg = json!({
        "id": "tester", "name": "Tester", "description": "test profile",
        "model": ["test-model"], "temperature": 0.2,
        "enabled_tools": ["todo"],
        "planning_phase1_enabled": false, "planning_phase3_enabled": false,
        "iteration_budget_enabled": false, "goal_anchoring_enabled": false
    });
    std::fs::write(p.join("config.json"), cfg.to_string()).unwrap();
    std::fs::write(p.join("system_prompt.txt"), "TESTER-PROMPT").unwrap();
    std::fs::write(config_dir.join("persona.txt"), "TEST-PERSONA").unwrap();
    // The same with the filesystem tool (no short description, so it is not
    // listed in the tester's prompt).
    let r = config_dir.join("profiles/reader");
    std::fs::create_dir_all(&r).unwrap();
    let mut cfg = cfg;
    cfg["id"] = json!("reader");
    cfg["name"] = json!("Reader");
    cfg["enabled_tools"] = json!(["filesystem"]);
    std::fs::write(r.join("config.json"), cfg.to_string()).unwrap();
    std::fs::write(r.join("system_prompt.txt"), "READER-PROMPT").unwrap();
}

pub struct Ctx {
    pub _dir: tempfile::TempDir,
    pub app: App,
    pub fake: FakeLlm,
    pub sid: String,
    /// The database, opened beside the app to look at (and seed) what is
    /// stored.
    pub store: SessionStore,
    /// The session, open in this process while a test works on it.
    open: Mutex<Option<Arc<Session>>>,
}

impl Ctx {
    /// The session, opened as its writer (once; again after [`release`]).
    pub fn session(&self) -> Arc<Session> {
        let mut open = self.open.lock().unwrap();
        open.get_or_insert_with(|| {
            self.app
                .engine()
                .open_session(&self.sid, self._dir.path().to_path_buf())
                .unwrap()
        })
        .clone()
    }

    /// Lets the session go (its lock with it), as a front end that closed
    /// it: another navi (the binary) may open it now.
    pub fn release(&self) {
        self.open.lock().unwrap().take();
    }
}

pub async fn setup(kind: BackendKind, edit: impl FnOnce(&mut Config)) -> Ctx {
    setup_with(kind, edit, false).await
}

/// `approve_all`: tools that ask (file writes) are allowed, as with
/// `navi run --approve-all`.
pub async fn setup_with(
    kind: BackendKind,
    edit: impl FnOnce(&mut Config),
    approve_all: bool,
) -> Ctx {
    let fake = FakeLlm::start().await;
    fake.set_models(vec![("test-model".into(), Some(WINDOW))]);
    let dir = tempfile::tempdir().unwrap();
    let paths = Paths {
        config_file: None,
        config_dir: dir.path().join("config"),
        data_dir: dir.path().join("data"),
        db_path: dir.path().join("data/navi.db"),
        log_dir: dir.path().join("data/logs"),
    };
    write_profile(&paths.config_dir);
    let mut c = Config::default();
    c.llm.backend = kind;
    c.llm.ollama_host = fake.ollama_url();
    c.llm.openai_base_url = fake.openai_url();
    edit(&mut c);
    let opts = AppOptions {
        approve_all,
        // As `--backend`: the profiles' own backend does not override it.
        backend_forced: true,
        ..AppOptions::default()
    };
    let app = App::build(c, paths, Overrides::default(), opts).unwrap();
    Ctx::new(dir, app, fake, "tester")
}

impl Ctx {
    /// A context over `app` (built in `dir`) with a new stored session of
    /// `profile`.
    pub fn new(dir: tempfile::TempDir, app: App, fake: FakeLlm, profile: &str) -> Ctx {
        let store = SessionStore::open(&app.paths().db_path).unwrap();
        let sid = store.create(profile).unwrap().id;
        Ctx {
            _dir: dir,
            app,
            fake,
            sid,
            store,
            open: Mutex::new(None),
        }
    }
}

pub async fn turn(ctx: &Ctx, msg: &str) -> (Result<TurnOutcome, AgentError>, Vec<AgentEvent>) {
    let (sink, mut rx) = EventSink::channel(4096);
    let drain = tokio::spawn(async move {
        let mut out = Vec::new();
        while let Some(e) = rx.recv().await {
            out.push(e);
        }
        out
    });
    let out = ctx
        .app
        .engine()
        .run_stream(&ctx.session(), msg, &sink, &CancellationToken::new())
        .await;
    drop(sink);
    (out, drain.await.unwrap())
}

/// ~900 characters: long enough to fill the window in a few turns, short
/// enough to serve as a summary too.
pub fn long_answer(i: usize) -> String {
    let mut s = String::new();
    for k in 0..12 {
        s.push_str(&format!(
            "- point {i}.{k}: the build uses cargo and the tests run in CI\n"
        ));
    }
    s
}

/// The request's size with the agent's estimator: characters / 4 with 16
/// characters of framing per message, tool schemas as JSON text.
pub fn estimated(body: &Value) -> u64 {
    let mut chars = 0usize;
    for m in body["messages"].as_array().unwrap() {
        chars += match &m["content"] {
            Value::String(s) => s.len(),
            Value::Null => 0,
            other => other.to_string().len(),
        };
        chars += 16;
        for c in m["tool_calls"].as_array().into_iter().flatten() {
            let f = if c["function"].is_object() {
                &c["function"]
            } else {
                c
            };
            chars += f["name"].as_str().map_or(0, str::len);
            chars += match &f["arguments"] {
                Value::String(s) => s.len(),
                v => v.to_string().len(),
            };
        }
    }
    let tools: usize = body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| t.to_string().len())
        .sum();
    ((chars + tools) / 4) as u64
}

/// A summary call: a fresh summariser prompt, or the session's own prefix
/// with the compaction instruction at the end.
pub fn is_summary_request(body: &Value) -> bool {
    body["messages"][0]["content"]
        .as_str()
        .is_some_and(|s| s.starts_with("You compress a conversation"))
        || is_prefix_summary_request(body)
}

/// A summary call built on the session's own prefix (KV cache reuse).
pub fn is_prefix_summary_request(body: &Value) -> bool {
    body["messages"]
        .as_array()
        .and_then(|m| m.last())
        .and_then(|m| m["content"].as_str())
        .is_some_and(|s| s.starts_with("[navi: compaction]"))
}

pub fn warnings(ev: &[AgentEvent]) -> Vec<String> {
    ev.iter()
        .filter_map(|e| match e {
            AgentEvent::Warning { message } => Some(message.clone()),
            _ => None,
        })
        .collect()
}

/// `navi` with the test's config and data dirs, against the fake server.
pub fn navi(dir: &std::path::Path, fake: &FakeLlm, args: &[&str]) -> std::process::Output {
    navi_command(dir, fake, args).output().unwrap()
}

/// `navi --backend openai <args>` on the test's dirs, stdin closed.
pub fn navi_command(dir: &std::path::Path, fake: &FakeLlm, args: &[&str]) -> std::process::Command {
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_navi"));
    c.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", dir)
        .env("NAVI_DATA_DIR", dir.join("data"))
        .env("NAVI_CONFIG_DIR", dir.join("config"))
        .env("OPENAI_BASE_URL", fake.openai_url())
        .env("LLM_STREAM_FIRST_CHUNK_TIMEOUT", "20")
        .args(["--backend", "openai"])
        .args(args)
        .stdin(std::process::Stdio::null());
    c
}
