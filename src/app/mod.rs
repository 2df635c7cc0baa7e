//! The composition root: config → stores → registries → backends → agent,
//! built once, and the one place that spawns agent runs.
//!
//! Nothing here touches the network; opening the database is the only I/O.
use crate::agent::events::{AgentEvent, EventSink};
use crate::agent::{Agent, AgentError, AgentParts, TurnOutcome};
use crate::config::{Config, Overrides, Paths};
use crate::llm::LlmBackend;
use crate::profile::ProfileRegistry;
use crate::session::{SessionMeta, SessionStore, StoreError};
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
}

pub struct App {
    pub config: Arc<Config>,
    pub paths: Paths,
    pub store: Arc<SessionStore>,
    pub profiles: Arc<ProfileRegistry>,
    pub agent: Arc<Agent>,
    /// User tools that failed to load (file: why).
    pub tool_errors: Vec<String>,
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

/// The persona: inline text, else the named file, else `persona.txt` in the
/// config dir, else the built-in one.
pub fn load_persona(config: &Config, paths: &Paths) -> Result<String, AppError> {
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
        let store = Arc::new(SessionStore::open(&paths.db_path)?);
        let profiles = Arc::new(ProfileRegistry::load(Some(
            &paths.config_dir.join("profiles"),
        )));
        let work_dir = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
        let env = Arc::new(ToolEnv::new(config.clone(), paths.clone(), work_dir));
        let mut registry = ToolRegistry::new();
        builtin::register_all(&mut registry);
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
        Ok(App {
            config,
            paths,
            store,
            profiles,
            agent,
            tool_errors,
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

    /// Opens or creates the session a front end starts on. A given profile
    /// applies to a new session, or switches an existing one.
    pub fn open_session(
        &self,
        choice: &SessionChoice,
        profile: Option<&str>,
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
                Ok(self.store.create(&p)?)
            }
        }
    }

    /// Releases what a session holds outside the database (shared SSH
    /// connections). Call when leaving a session or exiting.
    pub async fn end_session(&self, session_id: &str) {
        crate::tools::builtin::ssh_exec::close_session(&self.agent.env, session_id).await;
    }

    /// Starts a turn on its own task. Stop it with `cancel`; never abort it.
    pub fn start_turn(&self, session_id: &str, message: &str) -> RunHandle {
        let (sink, events) = EventSink::channel(1024);
        let cancel = CancellationToken::new();
        let agent = self.agent.clone();
        let (sid, msg, c) = (session_id.to_string(), message.to_string(), cancel.clone());
        let task = tokio::spawn(async move { agent.run_stream(&sid, &msg, &sink, &c).await });
        RunHandle {
            events,
            cancel,
            task,
        }
    }
}
