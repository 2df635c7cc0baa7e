//! The composition root: config → stores → registries → backends → agent,
//! built once, and the one place that spawns agent runs.
//!
//! Nothing here touches the network; opening the database is the only I/O.
pub(crate) mod auto_memory;
mod checkpoints;
mod frontend;
mod handle;
pub(crate) mod launch;
pub(crate) mod model_cache;
mod port;
pub(crate) mod probe;
pub mod submit;

pub use frontend::{Lookups, fetch_models, same_model};
pub(crate) use frontend::{PinEntry, PinTarget};
pub use handle::{OpenOptions, Prepared, SessionHandle};
pub use port::{Run, SessionPort};

use crate::agent::{Agent, AgentError, AgentParts, TurnOutcome};
use crate::config::{Config, Overrides, Paths};
use crate::llm::LlmBackend;
use crate::memory::MemoryStore;
use crate::memory::extract::{ExtractReport, Extractor};
use crate::profile::ProfileRegistry;
use crate::protocol::{AgentEvent, EventSink};
use crate::session::{LockError, SessionMeta, SessionStore, StoreError};
use crate::tools::{ApprovalGate, ToolEnv, ToolRegistry, builtin};
use std::path::PathBuf;
use std::sync::{Arc, RwLock};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// How the front end wants the app built.
#[derive(Clone, Default)]
pub struct AppOptions {
    /// The front end can answer approval requests.
    pub interactive: bool,
    pub approve: Vec<String>,
    pub approve_all: bool,
    /// `--backend` was given on the command line.
    pub backend_forced: bool,
    /// Inject a backend instead of building one from config (tests, benches).
    pub backend: Option<Arc<dyn LlmBackend>>,
    /// Keep sessions in memory only (`navi run --no-save`): nothing is
    /// written to the database file.
    pub ephemeral: bool,
    /// The directory tools work in; `None`: the process's current directory.
    /// (An editor's sessions each name theirs; the process never changes
    /// directory for them.)
    pub work_dir: Option<PathBuf>,
}

pub struct App {
    pub config: Arc<Config>,
    pub(crate) paths: Paths,
    pub store: Arc<SessionStore>,
    pub profiles: Arc<ProfileRegistry>,
    pub agent: Arc<Agent>,
    /// User tools that failed to load (file: why).
    pub(crate) tool_errors: Vec<String>,
    /// Long-term memory; `None` when `[memory].enabled = false`.
    pub(crate) memory: Option<Arc<MemoryStore>>,
    /// User profiles that enable tools that do not exist (file: key: name).
    pub(crate) profile_warnings: Vec<String>,
    /// The turns running now (for [`App::submit`]'s stop).
    pub runs: Arc<submit::Runs>,
}

/// Which session a front end starts on.
#[derive(Clone, Debug, PartialEq)]
pub enum SessionChoice {
    New,
    /// The most recently active one, or a new one when there is none.
    Latest,
    Id(String),
}

/// A running turn.
pub struct RunHandle {
    pub events: mpsc::Receiver<AgentEvent>,
    pub cancel: CancellationToken,
    pub task: JoinHandle<Result<TurnOutcome, AgentError>>,
}

#[derive(Debug, thiserror::Error)]
pub enum AppError {
    #[error("cannot read persona file {path}: {source}; fix [persona].file / NAVI_PERSONA_FILE")]
    Persona {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("unknown profile '{id}'; available: {available}")]
    NoProfile { id: String, available: String },
}

impl AppError {
    /// The session is open in another navi: its id and that navi's pid.
    pub fn busy(&self) -> Option<(&str, Option<u32>)> {
        match self {
            AppError::Store(StoreError::Lock(LockError::Busy { session, pid })) => {
                Some((session, *pid))
            }
            _ => None,
        }
    }
}

/// The persona: inline text, else the named file, else `persona.txt` in the
/// config dir, else the built-in one.
pub(crate) fn load_persona(config: &Config, paths: &Paths) -> Result<String, AppError> {
    if !config.persona.text.trim().is_empty() {
        return Ok(config.persona.text.clone());
    }
    if !config.persona.file.trim().is_empty() {
        let path = PathBuf::from(&config.persona.file);
        return std::fs::read_to_string(&path).map_err(|source| AppError::Persona { path, source });
    }
    let user = paths.config_dir.join("persona.txt");
    if let Ok(text) = std::fs::read_to_string(&user) {
        return Ok(text);
    }
    Ok(crate::embedded::get("persona.txt")
        .unwrap_or_default()
        .to_string())
}

impl App {
    pub fn build(
        config: Config,
        paths: Paths,
        overrides: Overrides,
        opts: AppOptions,
    ) -> Result<App, AppError> {
        let config = Arc::new(config);
        let persona = load_persona(&config, &paths)?;
        let store = Arc::new(if opts.ephemeral {
            SessionStore::open_in_memory()?
        } else {
            SessionStore::open(&paths.db_path)?
        });
        let profiles = Arc::new(ProfileRegistry::load(Some(
            &paths.config_dir.join("profiles"),
        )));
        let work_dir = opts
            .work_dir
            .clone()
            .unwrap_or_else(|| std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")));
        let env = Arc::new(ToolEnv::new(config.clone(), paths.clone(), work_dir));
        env.attach_store(store.clone());
        let mut registry = ToolRegistry::new();
        builtin::register_all(&mut registry);
        let memory = config
            .memory
            .enabled
            .then(|| Arc::new(MemoryStore::new(store.clone())));
        if let Some(m) = &memory {
            builtin::register_memory(&mut registry, m);
        }
        let tool_errors =
            crate::tools::user::reload_into(&mut registry, &crate::tools::user::tools_dir(&env));
        let registry = Arc::new(RwLock::new(registry));
        builtin::register_self_extension(&registry);
        env.mcp.attach(&registry);
        let gate = Arc::new(
            ApprovalGate::new(&config.security, opts.interactive)
                .with_preapproved(opts.approve, opts.approve_all),
        );
        let agent = Arc::new(Agent::new(AgentParts {
            config: config.clone(),
            store: store.clone(),
            profiles: profiles.clone(),
            tools: registry,
            env,
            gate,
            persona,
            model_override: overrides.model,
            backend_forced: opts.backend_forced,
            backend: opts.backend,
        }));
        crate::agent::delegate::register(&agent);
        if let Some(m) = &memory {
            agent.set_memory(m.clone());
        }
        let profile_warnings = match agent.tools.read() {
            Ok(reg) => profiles.unknown_tool_warnings(&|n| reg.get(n).is_some()),
            Err(_) => Vec::new(),
        };
        for w in &profile_warnings {
            tracing::warn!("{w}");
        }
        Ok(App {
            memory,
            config,
            paths,
            store,
            profiles,
            agent,
            tool_errors,
            profile_warnings,
            runs: Default::default(),
        })
    }

    fn check_profile(&self, id: &str) -> Result<(), AppError> {
        if self.profiles.get(id).is_some() {
            Ok(())
        } else {
            Err(AppError::NoProfile {
                id: id.to_string(),
                available: self.profiles.ids().join(", "),
            })
        }
    }

    /// Opens or creates the session a front end starts on, as its one writer
    /// (the session's lock is taken; a session another navi has open fails
    /// with [`StoreError::Lock`] naming that navi's pid). A given profile
    /// applies to a new session, or switches an existing one.
    pub fn open_session(
        &self,
        choice: &SessionChoice,
        profile: Option<&str>,
    ) -> Result<SessionMeta, AppError> {
        self.open_with(choice, profile, false)
    }

    /// `pending`: a new session is only [pending](SessionStore::create_pending)
    /// (no row, no lock) until its first turn.
    pub(crate) fn open_with(
        &self,
        choice: &SessionChoice,
        profile: Option<&str>,
        pending: bool,
    ) -> Result<SessionMeta, AppError> {
        if let Some(p) = profile {
            self.check_profile(p)?;
        }
        let existing = match choice {
            SessionChoice::New => None,
            SessionChoice::Latest => self.store.latest()?,
            SessionChoice::Id(id) => Some(self.store.resolve(id)?),
        };
        match existing {
            Some(meta) => {
                self.store.lock(&meta.id)?;
                if let Some(p) = profile.filter(|p| *p != meta.profile_id) {
                    self.store.set_profile(&meta.id, p)?;
                    return Ok(self.store.resolve(&meta.id)?);
                }
                Ok(meta)
            }
            None => {
                let p = profile
                    .map(String::from)
                    .unwrap_or_else(|| self.profiles.default_id());
                if pending {
                    return Ok(self.store.create_pending(&p));
                }
                let meta = self.store.create(&p)?;
                self.store.lock(&meta.id)?;
                Ok(meta)
            }
        }
    }

    /// What the interactive front ends open: like [`open_session`](Self::open_session),
    /// but a new session stays pending (no row, no lock) until the first
    /// message is sent; and when the most recent session is busy in another navi (the user did
    /// not name it) a new session is started instead, with a note saying why.
    /// A session named with `--session` that is busy stays an error.
    pub(crate) fn open_interactive(
        &self,
        choice: &SessionChoice,
        profile: Option<&str>,
    ) -> Result<(SessionMeta, Option<String>), AppError> {
        match self.open_with(choice, profile, true) {
            Err(AppError::Store(StoreError::Lock(e @ LockError::Busy { .. })))
                if *choice == SessionChoice::Latest =>
            {
                let meta = self.open_with(&SessionChoice::New, profile, true)?;
                Ok((meta, Some(format!("{e}: started a new session"))))
            }
            other => other.map(|m| (m, None)),
        }
    }

    /// A check of the backend a profile uses, for a front end to run after
    /// its first frame: the model it resolves and its window, or why the
    /// backend cannot serve.
    pub fn check_backend(
        &self,
        profile_id: &str,
    ) -> Option<impl std::future::Future<Output = Result<(String, u64), String>> + Send + 'static>
    {
        let agent = self.agent.clone();
        let profile = agent.profile(profile_id).ok()?.clone();
        Some(probe::check_backend(agent, profile))
    }

    /// Starts the configured MCP servers and waits until each is ready or
    /// failed (each bounded by its start-up timeout).
    pub async fn start_mcp(&self) {
        self.agent.env.mcp.start();
        self.agent.env.mcp.wait_started().await;
    }

    /// Stops the MCP servers (their process groups with them).
    pub fn stop_mcp(&self) {
        self.agent.env.mcp.shutdown();
    }

    /// Releases what a session holds outside the database (shared SSH
    /// connections). Call when leaving a session or exiting.
    pub(crate) async fn end_session(&self, session_id: &str) {
        crate::tools::builtin::ssh_exec::close_session(&self.agent.env, session_id).await;
    }

    /// Extracts facts from every stale session except `exclude` (the open
    /// ones). `Ok(None)` when memory is off.
    pub(crate) async fn extract_memory(
        &self,
        exclude: &[&str],
        cancel: &CancellationToken,
    ) -> Result<Option<ExtractReport>, String> {
        match &self.memory {
            Some(m) => extract_with(m, &self.agent, exclude, cancel)
                .await
                .map(Some),
            None => Ok(None),
        }
    }

    /// Starts extraction of stale sessions in the background (interactive
    /// front ends, at start and on a new session). Never awaited by a frame
    /// or a prompt; failures only reach the log.
    pub(crate) fn spawn_memory_extraction(&self, open_session: &str) {
        let Some(memory) = self.memory.clone() else {
            return;
        };
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let agent = self.agent.clone();
        let open = open_session.to_string();
        rt.spawn(async move {
            // Let the first frame / prompt go first.
            tokio::time::sleep(std::time::Duration::from_millis(500)).await;
            let cancel = CancellationToken::new();
            match extract_with(&memory, &agent, &[&open], &cancel).await {
                Ok(r) if !r.sessions.is_empty() => tracing::info!(
                    "memory: extracted {} session(s): {} new, {} changed, {} malformed line(s)",
                    r.sessions.len(),
                    r.added,
                    r.updated,
                    r.malformed
                ),
                Ok(_) => {}
                Err(e) => tracing::warn!("memory: background extraction did not run: {e}"),
            }
        });
    }

    /// Starts a turn with a prepared user message (attachments).
    pub(crate) fn start_turn_message(
        &self,
        session_id: &str,
        message: crate::llm::ChatMessage,
    ) -> RunHandle {
        spawn_turn(&self.agent, &self.runs, session_id, message)
    }

    /// Starts a turn on its own task. Stop it with `cancel`; never abort it.
    pub(crate) fn start_turn(&self, session_id: &str, message: &str) -> RunHandle {
        self.start_turn_message(session_id, crate::llm::ChatMessage::user(message))
    }
}

/// Starts a turn on its own task, listed in `runs` while it runs.
pub(crate) fn spawn_turn(
    agent: &Arc<Agent>,
    runs: &Arc<submit::Runs>,
    session_id: &str,
    message: crate::llm::ChatMessage,
) -> RunHandle {
    let (sink, events) = EventSink::channel(1024);
    let cancel = CancellationToken::new();
    let agent = agent.clone();
    let (sid, c) = (session_id.to_string(), cancel.clone());
    let listed = runs.register(session_id, cancel.clone());
    let task = tokio::spawn(async move {
        let _listed = listed;
        agent.run_stream_message(&sid, message, &sink, &c).await
    });
    RunHandle {
        events,
        cancel,
        task,
    }
}

/// One extraction pass with the default profile's backend and model.
async fn extract_with(
    memory: &MemoryStore,
    agent: &Agent,
    exclude: &[&str],
    cancel: &CancellationToken,
) -> Result<ExtractReport, String> {
    // Nothing stale: no backend, no model lookup, no network.
    let idle = (agent.config.memory.idle_minutes as i64).saturating_mul(60_000);
    if memory
        .stale_sessions(idle, exclude)
        .map_err(|e| e.to_string())?
        .is_empty()
    {
        return Ok(ExtractReport::default());
    }
    let profile = agent
        .profile(&agent.profiles.default_id())
        .map_err(|e| e.to_string())?
        .clone();
    let backend = agent.backend_for(&profile).map_err(|e| e.to_string())?;
    let model = agent
        .select_model(None, &*backend, &profile)
        .await
        .map_err(|e| e.to_string())?
        .model;
    let owner = format!(
        "{}-{}",
        std::process::id(),
        &uuid::Uuid::new_v4().simple().to_string()[..8]
    );
    Extractor {
        memory,
        backend: &*backend,
        model: &model,
        guard: agent.guard(),
        config: &agent.config.memory,
        owner: &owner,
        cancel,
    }
    .run(exclude)
    .await
    .map_err(|e| e.to_string())
}
