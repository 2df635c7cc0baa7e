//! Shared set-up for agent-level tests: a real SQLite file in a temp dir, a
//! scripted in-process backend, test profiles and a few test tools.
#![allow(clippy::unwrap_used, clippy::expect_used)]
#![allow(dead_code)]

use navi::agent::{Agent, AgentParts, Session};
use navi::config::{Config, Paths};
use navi::llm::LlmBackend;
use navi::llm::scripted::ScriptedBackend;
use navi::profile::{ProfileRegistry, parse};
use navi::protocol::{AgentEvent, EventSink};
use navi::session::SessionStore;
use navi::tools::{ApprovalGate, Tool, ToolContext, ToolEnv, ToolRegistry, ToolResult, builtin};
use serde_json::{Value, json};
use std::sync::{Arc, RwLock};

pub const PERSONA: &str = "PERSONA-TEXT";

pub struct Harness {
    pub dir: tempfile::TempDir,
    pub agent: Arc<Agent>,
    pub store: Arc<SessionStore>,
    pub backend: Arc<ScriptedBackend>,
}

/// A profile config with planning off unless `extra` turns it on.
pub fn profile_json(id: &str, extra: Value) -> String {
    let mut base = json!({
        "id": id, "name": format!("Profile {id}"), "description": "test profile",
        "model": ["test-model"], "enabled_tools": ["todo", "scratchpad", "echo", "sleepy"],
        "planning_phase1_enabled": false, "planning_phase3_enabled": false,
        "iteration_budget_enabled": false, "goal_anchoring_enabled": false, "anti_stall_enabled": false,
        "think_enabled": false
    });
    if let (Value::Object(b), Value::Object(e)) = (&mut base, extra) {
        b.extend(e);
    }
    base.to_string()
}

pub struct EchoTool;
#[async_trait::async_trait]
impl Tool for EchoTool {
    fn name(&self) -> &str {
        "echo"
    }
    fn description(&self) -> &str {
        "Echoes its 'text' argument."
    }
    fn parameters(&self) -> Value {
        json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]})
    }
    async fn execute(&self, args: &Value, _ctx: &ToolContext) -> ToolResult {
        match args.get("text").and_then(Value::as_str) {
            Some(t) => ToolResult::ok(format!("echo: {t}")),
            None => ToolResult::err("missing required argument 'text'"),
        }
    }
}

/// Waits until the run is cancelled.
pub struct SleepyTool;
#[async_trait::async_trait]
impl Tool for SleepyTool {
    fn name(&self) -> &str {
        "sleepy"
    }
    fn description(&self) -> &str {
        "Sleeps until cancelled."
    }
    fn parameters(&self) -> Value {
        json!({"type": "object", "properties": {}})
    }
    async fn execute(&self, _args: &Value, ctx: &ToolContext) -> ToolResult {
        tokio::select! {
            _ = ctx.cancel.cancelled() => ToolResult::err("operation cancelled by user"),
            _ = tokio::time::sleep(std::time::Duration::from_secs(60)) => ToolResult::ok("woke up"),
        }
    }
}

pub fn harness_with(profiles: &[(&str, String)], backend: ScriptedBackend) -> Harness {
    let dir = tempfile::tempdir().unwrap();
    let paths = Paths {
        config_file: None,
        config_dir: dir.path().join("config"),
        data_dir: dir.path().join("data"),
        db_path: dir.path().join("data/navi.db"),
        log_dir: dir.path().join("data/logs"),
    };
    let config = Arc::new(Config::default());
    let store = Arc::new(SessionStore::open(&paths.db_path).unwrap());
    let mut reg = ProfileRegistry::default();
    for (id, json) in profiles {
        reg.insert(parse(json, &format!("PROMPT-{id}"), None, "test", id, "built-in").unwrap());
    }
    let mut tools = ToolRegistry::new();
    builtin::register_all(&mut tools);
    tools.register_builtin(Arc::new(EchoTool));
    tools.register_builtin(Arc::new(SleepyTool));
    let env = Arc::new(ToolEnv::new(config.clone(), paths));
    let backend = Arc::new(backend);
    let agent = Arc::new(Agent::new(AgentParts {
        config: config.clone(),
        store: store.clone(),
        profiles: Arc::new(reg),
        tools: Arc::new(RwLock::new(tools)),
        env,
        gate: Arc::new(ApprovalGate::new(&config.security, false)),
        persona: PERSONA.into(),
        model_override: None,
        backend_forced: false,
        backend: Some(backend.clone() as Arc<dyn LlmBackend>),
    }));
    Harness {
        dir,
        agent,
        store,
        backend,
    }
}

impl Harness {
    /// Opens stored session `id` as its writer (the lock is held while the
    /// value lives), its tools working in the temp dir.
    pub fn open(&self, id: &str) -> Arc<Session> {
        self.agent
            .open_session(id, self.dir.path().to_path_buf())
            .unwrap()
    }

    /// A new stored session of `profile`, open.
    pub fn new_session(&self, profile: &str) -> Arc<Session> {
        let id = self.store.create(profile).unwrap().id;
        self.open(&id)
    }
}

pub fn harness(extra: Value) -> Harness {
    harness_with(&[("p", profile_json("p", extra))], ScriptedBackend::new())
}

/// Runs a turn of stored session `session` (opened for the turn, closed
/// after it), collecting every event.
pub async fn turn(
    h: &Harness,
    session: &str,
    msg: &str,
) -> (
    Result<navi::agent::TurnOutcome, navi::agent::AgentError>,
    Vec<AgentEvent>,
) {
    let open = h.open(session);
    turn_in(h, &open, msg).await
}

/// Runs a turn of the open `session`, collecting every event.
pub async fn turn_in(
    h: &Harness,
    session: &Arc<Session>,
    msg: &str,
) -> (
    Result<navi::agent::TurnOutcome, navi::agent::AgentError>,
    Vec<AgentEvent>,
) {
    let (sink, mut rx) = EventSink::channel(10_000);
    let cancel = tokio_util::sync::CancellationToken::new();
    let out = h.agent.run_stream(session, msg, &sink, &cancel).await;
    drop(sink);
    let mut events = Vec::new();
    while let Some(e) = rx.recv().await {
        events.push(e);
    }
    (out, events)
}

pub fn kinds(events: &[AgentEvent]) -> Vec<&'static str> {
    events.iter().map(|e| e.kind()).collect()
}
