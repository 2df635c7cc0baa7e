//! The composition root: config → stores → registries → backends → agent,
//! built once; and the door to sessions: [`App::open_handle`] opens one (in
//! any working directory) as a [`SessionHandle`], [`App::sessions`] lists
//! them, [`App::delete_session`] deletes one. Everything done *to* an open
//! session is an [`Op`](crate::protocol::Op) on its handle.
//!
//! Nothing here touches the network; opening the database is the only I/O.
pub(crate) mod auto_memory;
mod checkpoints;
pub(crate) mod first_run;
mod frontend;
mod handle;
pub(crate) mod launch;
mod lines;
pub(crate) mod model_cache;
mod open;
mod ops;
pub(crate) mod probe;
mod run;

/// Wording of the core that front ends show as it is (pure functions): the
/// one place they get it from, so no front end imports the agent, the
/// tools or the checkpoints for a sentence.
pub(crate) mod words {
    pub(crate) use crate::agent::budget::render as budget_lines;
    pub(crate) use crate::agent::compact_run::{compressed_line, preview_lines};
    pub(crate) use crate::checkpoint::summary::{HINT as FILES_HINT, line as files_line};
    pub(crate) use crate::llm::url_auth::redact_userinfo as shown_url;
    pub(crate) use crate::tools::builtin::todo::render as todo_lines;
    pub(crate) use crate::tools::sandbox_denial::{NOTE_MARK as SANDBOX_NOTE, denial_line};
}

pub use crate::agent::account::ContextAccount;
pub(crate) use crate::agent::tweaks::TurnTweaks;
pub use frontend::{Lookups, fetch_models, same_model};
pub(crate) use frontend::{Transcript, server_models, stored_session_ids};
pub use handle::{OpenOptions, Prepared, Reply, SessionHandle};
pub(crate) use lines::preview;

use crate::agent::{Agent, AgentParts};
use crate::config::{Config, Overrides, Paths};
use crate::llm::LlmBackend;
use crate::memory::MemoryStore;
use crate::memory::extract::{ExtractReport, Extractor};
use crate::profile::{ProfileRegistry, UnknownProfile};
use crate::session::{LockError, SessionStore, StoreError};
use crate::tools::{ApprovalGate, ToolEnv, ToolRegistry, builtin};
use std::path::PathBuf;
use std::sync::{Arc, RwLock};
use tokio_util::sync::CancellationToken;

/// How the front end wants the app built.
#[derive(Clone, Default)]
pub struct AppOptions {
    /// The front end can answer approval requests.
    pub interactive: bool,
    pub approve: Vec<String>,
    pub approve_all: bool,
    /// `--full-auto`: what the sandbox contains runs without asking.
    pub full_auto: bool,
    /// `--backend` was given on the command line.
    pub backend_forced: bool,
    /// Inject a backend instead of building one from config (tests, benches).
    pub backend: Option<Arc<dyn LlmBackend>>,
    /// Keep sessions in memory only (`navi run --no-save`): nothing is
    /// written to the database file.
    pub ephemeral: bool,
    /// One turn and out (`navi run`): reads share the writer's database
    /// connection instead of opening their own (one schema parse and one
    /// page cache fewer at start; a one-shot run has nothing to read while
    /// it writes).
    pub one_connection: bool,
    /// The directory sessions work in unless they are opened with their
    /// own; `None`: the process's current directory.
    pub work_dir: Option<PathBuf>,
    /// `--model`: stored as the model of each session this app opens, so
    /// the session keeps it (`navi run -c` without `--model` goes on with it).
    pub session_model: Option<String>,
}

/// See the module docs.
pub struct App {
    config: Arc<Config>,
    paths: Paths,
    store: Arc<SessionStore>,
    profiles: Arc<ProfileRegistry>,
    agent: Arc<Agent>,
    /// User tools that failed to load (file: why).
    tool_errors: Vec<String>,
    /// Long-term memory; `None` when `[memory].enabled = false`.
    memory: Option<Arc<MemoryStore>>,
    /// User profiles that enable tools that do not exist (file: key: name).
    profile_warnings: Vec<String>,
    /// Where sessions opened without a directory of their own work.
    work_dir: PathBuf,
    /// See [`AppOptions::session_model`].
    session_model: Option<String>,
}

/// Which session a front end starts on.
#[derive(Clone, Debug, PartialEq)]
pub enum SessionChoice {
    New,
    /// The most recently active one that holds an answer (never one left
    /// empty or holding only an error), or a new one when there is none:
    /// what `navi` opens by default.
    Latest,
    /// The most recently active one with any message (one whose last turn
    /// failed included: the user goes on from it), or a new one: `-c`.
    Continue,
    Id(String),
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
    #[error(transparent)]
    NoProfile(#[from] UnknownProfile),
    /// A working directory a session cannot use.
    #[error("{0}")]
    WorkDir(String),
    /// MCP servers given for one session that cannot be used.
    #[error("{0}")]
    McpServers(String),
    /// The configured backend cannot be built.
    #[error("{0}")]
    Backend(String),
    /// The backend's server did not answer as it should.
    #[error("{0}")]
    Server(String),
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

/// Lets this process keep what model servers said in the data dir (the
/// binary's entry; see `llm/server_cache.rs`).
pub fn use_server_cache() {
    crate::llm::server_cache::enable();
}

/// Waits (a few seconds at most) for the checks of model servers started
/// after answers (`llm/server_cache.rs`), before a process exits.
pub async fn finish_server_checks() {
    crate::llm::server_cache::finish_checks(crate::llm::server_cache::CHECK_WAIT).await;
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
        let session_model = opts.session_model.clone();
        if !opts.ephemeral {
            // What model servers said is kept with the data (`server_cache.rs`).
            crate::llm::server_cache::install(&paths.data_dir);
        }
        let store = Arc::new(if opts.ephemeral {
            SessionStore::open_in_memory()?
        } else {
            SessionStore::open_with(&paths.db_path, opts.one_connection)?
        });
        let profiles = Arc::new(ProfileRegistry::load(Some(
            &paths.config_dir.join("profiles"),
        )));
        let work_dir = opts
            .work_dir
            .clone()
            .unwrap_or_else(|| std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")));
        let env = Arc::new(ToolEnv::new(config.clone(), paths.clone()));
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
        let mut gate = ApprovalGate::new(&config.security, opts.interactive)
            .with_preapproved(opts.approve, opts.approve_all);
        if opts.full_auto {
            gate = gate.with_full_auto(crate::sandbox::confines_commands(&config.sandbox));
        }
        let gate = Arc::new(gate);
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
        agent.mcp.attach(&agent.tools);
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
            work_dir,
            session_model,
        })
    }

    /// The engine, for tests and benchmarks of the agent itself (they run
    /// turns on a [`Session`](crate::agent::Session) directly). Front ends
    /// never call it: they act on sessions through [`SessionHandle`]s
    /// (`tests/layering.rs` checks it).
    #[doc(hidden)]
    pub fn engine(&self) -> &Arc<Agent> {
        &self.agent
    }

    /// The configuration the app was built from.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Where navi keeps its configuration and data.
    pub fn paths(&self) -> &Paths {
        &self.paths
    }

    /// Adjusts the turns of every session that has no tweaks of its own
    /// (`--no-plan` before the subcommand).
    pub(crate) fn set_default_tweaks(&self, t: TurnTweaks) {
        self.agent.set_turn_tweaks(t);
    }

    /// What went wrong loading profiles and user tools, and what the
    /// sandbox says, as warnings to print at start-up.
    pub(crate) fn startup_warnings(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .profiles
            .errors
            .iter()
            .map(|e| format!("skipped {e}"))
            .collect();
        out.extend(
            self.tool_errors
                .iter()
                .map(|e| format!("skipped user tool {e}")),
        );
        out.extend(self.profile_warnings.iter().cloned());
        out.extend(crate::sandbox::startup_warning(&self.config.sandbox));
        out
    }

    /// Profiles that failed to load.
    pub fn profile_errors(&self) -> Vec<String> {
        self.profiles.errors.iter().map(|e| e.to_string()).collect()
    }

    /// The ids of the profiles sessions can use.
    pub fn profile_ids(&self) -> Vec<String> {
        self.profiles.ids()
    }

    /// The profile new sessions start with.
    pub fn default_profile(&self) -> String {
        self.profiles.default_id()
    }

    /// The profiles as `navi profiles list` prints them (serde).
    pub(crate) fn profiles_json(&self) -> serde_json::Value {
        let list: Vec<_> = self.profiles.all().collect();
        serde_json::json!({
            "profiles": list,
            "errors": self.profile_errors(),
        })
    }

    /// One line per profile: id, name, what it is for, its models.
    pub(crate) fn profile_lines(&self, current: Option<&str>) -> Vec<String> {
        self.profiles
            .all()
            .map(|p| match current {
                Some(c) => format!(
                    "{} {:<15} {}",
                    if p.id == c { ">" } else { " " },
                    p.id,
                    p.short_description
                ),
                None => format!(
                    "{:<15} {:<22} {}  [{}]",
                    p.id,
                    p.name,
                    p.short_description,
                    p.model.join(" → ")
                ),
            })
            .collect()
    }

    /// The models a profile asks for, in order.
    pub fn profile_models(&self, profile: &str) -> Vec<String> {
        self.profiles
            .get(profile)
            .map(|p| p.model.clone())
            .unwrap_or_default()
    }

    /// The approval mode and the sandbox in a few words (the status line).
    pub fn guard_label(&self) -> String {
        format!(
            "{} · {}",
            self.agent.gate.mode_label(),
            crate::sandbox::short_label(&self.config.sandbox)
        )
    }

    /// The approval mode and the sandbox in words, for banners:
    /// `approval ask · sandbox workspace-write`.
    pub fn guard_words(&self) -> String {
        format!(
            "approval {} · sandbox {}",
            self.agent.gate.mode_label(),
            crate::sandbox::short_label(&self.config.sandbox)
        )
    }

    /// Whether risky calls run without asking beyond tools the user named
    /// (`auto`, `--full-auto`, `--approve-all`): front ends keep saying so.
    pub fn approvals_relaxed(&self) -> bool {
        let label = self.agent.gate.mode_label();
        label.starts_with("auto") || label == "approve-all" || label == "full-auto"
    }

    /// Every tool name registered now (built-ins, user tools, ready MCP tools).
    pub(crate) fn tool_names(&self) -> Vec<String> {
        self.agent
            .tools
            .read()
            .map(|r| r.names())
            .unwrap_or_default()
    }

    /// Whether `name` is a configured MCP server.
    pub(crate) fn has_mcp_server(&self, name: &str) -> bool {
        self.config.mcp_servers.contains_key(name)
    }

    /// Long-term memory; `None` when it is turned off.
    pub(crate) fn memory(&self) -> Option<Arc<MemoryStore>> {
        self.memory.clone()
    }

    /// The AGENTS.md instructions of a session started here (`navi context`).
    pub(crate) fn instructions(&self) -> crate::project::instructions::Instructions {
        self.agent.instructions_in(&self.work_dir)
    }

    /// The fixed cost of a profile's requests (`navi context`).
    pub(crate) async fn base_cost(
        &self,
        profile: &str,
    ) -> Result<crate::agent::budget::BaseCost, String> {
        self.agent
            .count_base(profile)
            .await
            .map_err(|e| e.to_string())
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

    /// Starts the configured MCP servers in the background (an interactive
    /// front end's first frame or prompt never waits for them).
    pub fn spawn_mcp(&self) {
        self.agent.mcp.start();
    }

    /// Stops the MCP servers (their process groups with them).
    pub fn stop_mcp(&self) {
        self.agent.mcp.shutdown();
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
