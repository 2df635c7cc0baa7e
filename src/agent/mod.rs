//! The agent: planning, the tool-calling loop, thinking mechanics, context
//! building and token accounting. Knows no terminal: it emits `AgentEvent`s
//! into an [`EventSink`] and reads a [`CancellationToken`] for cooperative stop.
//!
//! Invariants: every tool call in the context gets exactly one tool result
//! (on stop: "operation cancelled by user"); every message is persisted when
//! it happens; a run never aborts because of a tool failure.

pub(crate) mod account;
pub mod budget;
mod cache_warm;
pub mod compact_run;
pub(crate) mod compaction;
pub(crate) mod context;
pub(crate) mod conversation;
pub mod delegate;
mod echo;
mod echo_align;

mod fit;
pub(crate) mod integrity;
mod lean;
pub(crate) mod measure;
pub(crate) mod mechanics;
pub(crate) mod on_demand;
pub(crate) mod oversize;
mod persistent;
pub(crate) mod planning;
pub(crate) mod repetition;
mod request;
pub mod session;
mod session_tools;
mod small;
mod squeeze;
mod steer;
mod stream;
pub(crate) mod summary_prefix;
pub(crate) mod tokens;
mod turn;
pub(crate) mod tweaks;
mod vision;

use crate::config::{BackendKind, Config};
use crate::llm::guard::GuardConfig;
use crate::llm::select::{self, Selection};
use crate::llm::{LlmBackend, LlmError, build_backend, catalog};
use crate::profile::{Profile, ProfileRegistry};
use crate::protocol::{AgentOrigin, EventSink};
use crate::session::{SessionStore, StoreError};
use crate::tools::{ApprovalGate, ToolEnv, ToolRegistry};
use session::ModelChoice;
pub use session::Session;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock};
use tokio_util::sync::CancellationToken;

#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    #[error(transparent)]
    Llm(#[from] LlmError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("no session {0}; see `navi sessions list`")]
    NoSession(String),
    #[error(
        "session {0} changed since the compaction was planned (a turn ran in between); nothing was changed — run /compact again"
    )]
    Stale(String),
    #[error(
        "no compaction preview to apply for session {0}; run /compact --preview first (or /compact to compact at once)"
    )]
    NoPlan(String),
    #[error(
        "nothing compacted: a summary of the {replaced} older messages would not make the context smaller ({} → {} tokens); the context is unchanged",
        account::short(*tokens_before),
        account::short(*tokens_after)
    )]
    NothingSaved {
        replaced: usize,
        tokens_before: u64,
        tokens_after: u64,
    },
    #[error(transparent)]
    NoProfile(#[from] crate::profile::UnknownProfile),
    #[error(
        "the context is full ({used} of {window} tokens, over the {limit}% hard limit) even after compacting the earlier turns and cutting this turn's biggest items; nothing was sent. Unpin messages (/unpin), use a leaner profile (see `navi context`), or start a new session (with automatic compaction off, /compact first)"
    )]
    ContextFull { used: u64, window: u64, limit: u32 },
    #[error(
        "the request needs about {needed} tokens but {model} has a {window}-token window (persona, profile prompt and tools of profile {profile} alone take about {base}); nothing was sent. Give the model a bigger window (llama-server -c {}, Ollama num_ctx / OLLAMA_NUM_CTX) or use a leaner profile (see `navi context`)",
        suggest_window(*needed)
    )]
    PromptTooLarge {
        needed: u64,
        base: u64,
        window: u64,
        model: String,
        profile: String,
    },
    #[error(
        "{model} on {server} accepts only text and cannot take images ({evidence}); nothing was sent. Use a vision model (/model NAME, or --model NAME) or send the message without the image"
    )]
    NoVision {
        model: String,
        server: String,
        evidence: String,
    },
    #[error(
        "{server} refused the image: {reason}. {model} takes only text: the image stays in the transcript but is not sent again, and the session goes on. Use a vision model (/model NAME, or --model NAME) or send the message without the image"
    )]
    ImageRefused {
        model: String,
        server: String,
        reason: String,
        /// The refused image came with the user's message (not from a
        /// tool): the message goes back to the front end.
        from_user: bool,
    },
    #[error(
        "the chat template of {model} refused the request: {message}. navi sent the roles {roles}. Hint: start llama-server with --jinja (and --chat-template-file with a template that supports tools if the model's own does not), or pick another model. The session is kept as it was, but this server will refuse the same history again: change the server or model, or /rewind to an earlier message"
    )]
    TemplateRejected {
        model: String,
        message: String,
        roles: String,
    },
}

impl AgentError {
    /// No model was reached: the server could not be reached, has no such
    /// model, or the request could not be made (no key, unknown provider).
    pub(crate) fn reached_no_model(&self) -> bool {
        matches!(
            self,
            AgentError::Llm(
                LlmError::Unreachable { .. }
                    | LlmError::ModelNotFound { .. }
                    | LlmError::NoKey { .. }
                    | LlmError::UnknownProvider { .. }
            )
        )
    }

    /// The user stopped it (Ctrl-C, /stop): not a failure to report.
    pub(crate) fn is_cancelled(&self) -> bool {
        matches!(self, AgentError::Llm(LlmError::Cancelled))
    }

    /// The user's message was refused as it is (an image the model cannot
    /// take): front ends give the typed text and attachments back.
    pub(crate) fn returns_input(&self) -> bool {
        matches!(
            self,
            AgentError::NoVision { .. }
                | AgentError::ImageRefused {
                    from_user: true,
                    ..
                }
        )
    }
}

/// A window size to suggest: the next power of two with room for an answer.
fn suggest_window(needed: u64) -> u64 {
    (needed + needed / 2).max(4096).next_power_of_two()
}

/// How a turn ended.
#[derive(Clone, Debug, PartialEq)]
pub struct TurnOutcome {
    /// The final answer (partial when stopped).
    pub text: String,
    /// The user stopped the run.
    pub stopped: bool,
    /// False when the iteration cap was hit.
    pub completed: bool,
}

/// Everything the agent is built from (the composition root fills this).
pub struct AgentParts {
    pub config: Arc<Config>,
    pub store: Arc<SessionStore>,
    pub profiles: Arc<ProfileRegistry>,
    pub tools: Arc<RwLock<ToolRegistry>>,
    pub env: Arc<ToolEnv>,
    pub gate: Arc<ApprovalGate>,
    pub persona: String,
    /// `--model` / `OLLAMA_DEFAULT_MODEL`: wins over the profile's list.
    pub model_override: Option<String>,
    /// `--backend` given: wins over a user profile's `llm_backend`.
    pub backend_forced: bool,
    /// A ready backend (tests inject one); otherwise built from config on demand.
    pub backend: Option<Arc<dyn LlmBackend>>,
}

pub struct Agent {
    pub(crate) config: Arc<Config>,
    pub(crate) store: Arc<SessionStore>,
    pub(crate) profiles: Arc<ProfileRegistry>,
    pub tools: Arc<RwLock<ToolRegistry>>,
    pub env: Arc<ToolEnv>,
    /// The configured MCP servers (an empty hub when none is configured;
    /// starts nothing by itself). Kept here, not in the tools' environment:
    /// MCP tools are built on the tools layer, never the other way round.
    pub(crate) mcp: Arc<crate::mcp::McpHub>,
    pub(crate) gate: Arc<ApprovalGate>,
    persona: String,
    model_override: Option<String>,
    backend_forced: bool,
    backends: Mutex<HashMap<BackendKind, Arc<dyn LlmBackend>>>,
    selections: Mutex<HashMap<String, Selection>>,
    windows: Mutex<HashMap<String, u64>>,
    guard: GuardConfig,
    /// Long-term memory, when enabled (set once by the composition root).
    memory: std::sync::OnceLock<Arc<crate::memory::MemoryStore>>,
    /// The adjustments of turns of sessions without their own (`--no-plan`).
    tweaks: RwLock<tweaks::TurnTweaks>,
    /// Models whose server refused an image in this process (see `vision.rs`).
    text_only: Mutex<std::collections::HashSet<String>>,
}

impl Agent {
    pub fn new(parts: AgentParts) -> Self {
        let mut backends = HashMap::new();
        if let Some(b) = parts.backend {
            backends.insert(b.kind(), b);
        }
        Agent {
            guard: GuardConfig::from_config(&parts.config.llm),
            config: parts.config,
            store: parts.store,
            profiles: parts.profiles,
            tools: parts.tools,
            mcp: crate::mcp::McpHub::new(&parts.env.config, &parts.env.paths),
            env: parts.env,
            gate: parts.gate,
            persona: parts.persona,
            model_override: parts.model_override,
            backend_forced: parts.backend_forced,
            backends: Mutex::new(backends),
            selections: Mutex::new(HashMap::new()),
            windows: Mutex::new(HashMap::new()),
            memory: std::sync::OnceLock::new(),
            tweaks: RwLock::new(tweaks::TurnTweaks::default()),
            text_only: Mutex::new(Default::default()),
        }
    }

    /// Turns long-term memory on for this agent (its summary goes into every
    /// request). Without it, no summary is read.
    pub(crate) fn set_memory(&self, memory: Arc<crate::memory::MemoryStore>) {
        let _ = self.memory.set(memory);
    }

    /// The AGENTS.md instructions for a session (empty when `[project]
    /// instructions = false`).
    pub fn instructions(&self, session: &Session) -> crate::project::instructions::Instructions {
        self.instructions_in(session.work_dir())
    }

    /// The AGENTS.md instructions for a session working in `dir`.
    pub fn instructions_in(
        &self,
        dir: &std::path::Path,
    ) -> crate::project::instructions::Instructions {
        let cfg = &self.config.project;
        if !cfg.instructions {
            return Default::default();
        }
        crate::project::instructions::Instructions::load(
            &self.env.paths.config_dir,
            dir,
            cfg.instructions_max_bytes,
        )
    }

    /// The current memory summary; a read error is logged, never fatal.
    pub(crate) fn memory_summary(&self) -> Option<String> {
        match self.memory.get()?.summary() {
            Ok(s) => s,
            Err(e) => {
                tracing::warn!("memory: cannot read the summary: {e}");
                None
            }
        }
    }

    pub(crate) fn guard(&self) -> &GuardConfig {
        &self.guard
    }

    /// Sets the adjustments of turns of sessions without their own.
    pub(crate) fn set_turn_tweaks(&self, t: tweaks::TurnTweaks) {
        if let Ok(mut w) = self.tweaks.write() {
            *w = t;
        }
    }

    /// The adjustments turns of `session` run with: its own, else the
    /// process's (`--no-plan`).
    pub(crate) fn turn_tweaks(&self, session: &Session) -> tweaks::TurnTweaks {
        session
            .tweaks()
            .unwrap_or_else(|| self.tweaks.read().map(|t| t.clone()).unwrap_or_default())
    }

    /// Opens stored session `id` as its one writer, its tools working in
    /// `work_dir` (for front ends: `App::open`).
    pub fn open_session(&self, id: &str, work_dir: PathBuf) -> Result<Arc<Session>, AgentError> {
        let lock = self.store.lock(id)?;
        Ok(Arc::new(Session::stored(
            self.store.clone(),
            lock,
            work_dir,
            None,
            self.model_override.is_some(),
        )))
    }

    /// The model given with `--model` / `OLLAMA_DEFAULT_MODEL`.
    pub(crate) fn model_override(&self) -> Option<String> {
        self.model_override.clone()
    }

    pub(crate) fn persona(&self) -> &str {
        &self.persona
    }

    pub(crate) fn profile(&self, id: &str) -> Result<&Profile, AgentError> {
        Ok(self.profiles.find(id)?)
    }

    /// The backend a profile talks to: `--backend` wins; then a user profile's
    /// `llm_backend`; then `[llm].backend`.
    pub(crate) fn backend_for(&self, profile: &Profile) -> Result<Arc<dyn LlmBackend>, AgentError> {
        let kind = if !self.backend_forced && profile.source != "built-in" {
            BackendKind::parse(&profile.llm_backend).unwrap_or(self.config.llm.backend)
        } else {
            self.config.llm.backend
        };
        let mut map = self.backends.lock().map_err(|_| LlmError::Cancelled)?;
        if let Some(b) = map.get(&kind) {
            return Ok(b.clone());
        }
        let mut cfg = (*self.config).clone();
        cfg.llm.backend = kind;
        let b = build_backend(&cfg)?;
        map.insert(kind, b.clone());
        Ok(b)
    }

    /// Resolves the model of a turn of `session` (a subagent passes its
    /// parent's): the model chosen for the session, else `--model`, else the
    /// profile's priority list (cached per process), else
    /// `[llm].default_model`, else the only model the server has.
    pub(crate) async fn select_model(
        &self,
        session: Option<&Session>,
        backend: &dyn LlmBackend,
        profile: &Profile,
    ) -> Result<Selection, AgentError> {
        let choice = session.and_then(Session::model_choice);
        if let Some(sel) = choice.as_ref().and_then(Self::chosen) {
            return Ok(sel);
        }
        if choice.is_none()
            && let Some(m) = &self.model_override
        {
            return Ok(Selection {
                model: m.clone(),
                reason: format!("using {m} (set with --model or OLLAMA_DEFAULT_MODEL)"),
            });
        }
        let key = format!("{}|{}", backend.base_url(), profile.model.join(","));
        if let Some(s) = self
            .selections
            .lock()
            .ok()
            .and_then(|m| m.get(&key).cloned())
        {
            return Ok(s);
        }
        let available = backend.find_models(&profile.model).await?;
        let place = |m: &str| backend.provider_of(m);
        let name = &place(&self.config.llm.default_model);
        let chosen = match select::choose(&profile.model, &available, &place) {
            Ok(s) => s,
            Err(err) => {
                let fallback = &self.config.llm.default_model;
                if let Ok(mut s) =
                    select::choose(std::slice::from_ref(fallback), &available, &place)
                {
                    s.reason = format!(
                        "using {} ([llm].default_model) because none of the profile's models ({}) is available on {name}",
                        s.model,
                        profile.model.join(", ")
                    );
                    s
                } else if let [only] = available.as_slice() {
                    Selection {
                        model: only.name.clone(),
                        reason: format!(
                            "using {} because it is the only model on {name}; the profile wants {}",
                            only.name,
                            profile.model.join(", ")
                        ),
                    }
                } else {
                    return Err(err.into());
                }
            }
        };
        if let Ok(mut m) = self.selections.lock() {
            m.insert(key, chosen.clone());
        }
        Ok(chosen)
    }

    /// The model's context window: the server's figure, else the catalog,
    /// else 8192 (cached per process).
    pub(crate) async fn context_window(&self, backend: &dyn LlmBackend, model: &str) -> u64 {
        if let Some(w) = self.windows.lock().ok().and_then(|m| m.get(model).copied()) {
            return w;
        }
        let from_server = backend
            .model_info(model)
            .await
            .ok()
            .and_then(|i| i.context_length);
        // A server that sizes its context per request (Ollama, num_ctx) has
        // at most [llm].num_ctx.
        let w = backend.descriptor_for(model).planned_window(
            catalog::context_window(model, from_server),
            self.config.llm.num_ctx,
        );
        if let Ok(mut m) = self.windows.lock() {
            m.insert(model.to_string(), w);
        }
        w
    }

    /// A window the server showed by refusing a request as too long: used
    /// for `model` from now on in this process.
    pub(crate) fn learn_window(&self, model: &str, window: u64) {
        if let Ok(mut m) = self.windows.lock() {
            m.insert(model.to_string(), window);
        }
    }

    /// Runs one user turn of `session`, streaming events into `sink`.
    pub async fn run_stream(
        &self,
        session: &Arc<Session>,
        user_message: &str,
        sink: &EventSink,
        cancel: &CancellationToken,
    ) -> Result<TurnOutcome, AgentError> {
        let msg = crate::llm::ChatMessage::user(user_message);
        persistent::run_persistent(self, session, msg, user_message, sink, cancel).await
    }

    /// Like [`Agent::run_stream`] with a prepared user message (attachments:
    /// inline files and images).
    pub(crate) async fn run_turn(
        &self,
        session: &Arc<Session>,
        user_message: crate::llm::ChatMessage,
        typed: &str,
        sink: &EventSink,
        cancel: &CancellationToken,
    ) -> Result<TurnOutcome, AgentError> {
        persistent::run_persistent(self, session, user_message, typed, sink, cancel).await
    }

    /// Runs a subagent: in-memory context, its own scratchpad slot
    /// (`subagent_<uuid12>`), the state (todo list, approvals, model choice,
    /// checkpoints) of `parent`. Events go to `sink` tagged with the
    /// subagent's origin. Returns `(text, completed_normally)`.
    pub(crate) async fn run_ephemeral(
        &self,
        user_message: &str,
        profile_id: &str,
        parent: &Arc<Session>,
        depth: u32,
        sink: &EventSink,
        cancel: &CancellationToken,
    ) -> Result<(String, bool), AgentError> {
        let id = format!(
            "subagent_{}",
            &uuid::Uuid::new_v4().simple().to_string()[..12]
        );
        let origin = AgentOrigin {
            id,
            depth: depth.max(1),
            profile_id: profile_id.to_string(),
        };
        // Front ends show the subagent at once, not at its first reply.
        sink.emit(crate::protocol::AgentEvent::SubagentStarted {
            agent: origin.clone(),
        })
        .await;
        let out = turn::run_ephemeral(self, user_message, profile_id, parent, origin, sink, cancel)
            .await?;
        Ok((out.text, out.completed && !out.stopped))
    }

    /// The selection a named choice makes (no server call).
    fn chosen(choice: &ModelChoice) -> Option<Selection> {
        match choice {
            ModelChoice::Named(m) => Some(Selection {
                model: m.clone(),
                reason: format!(
                    "using {m} (chosen with /model; \"/model default\" goes back to the profile's list)"
                ),
            }),
            ModelChoice::ProfileList => None,
        }
    }
}
