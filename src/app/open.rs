//! Opening, listing and deleting sessions: what [`App`] does with sessions
//! as a whole. Everything done to one open session goes through its
//! [`SessionHandle`].
use super::handle::{OpenOptions, SessionHandle};
use super::{App, AppError, SessionChoice};
use crate::agent::Session;
use crate::agent::session::{ModelChoice, SessionMcp};
use crate::attach::FilesPolicy;
use crate::config::McpServerConfig;
use crate::protocol::SessionMeta;
use crate::session::{LockError, StoreError};
use crate::tools::ToolRegistry;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, RwLock};
use tokio::sync::mpsc;

impl App {
    /// Opens a session as its one writer and returns its handle: a new
    /// one, the most recent one, or one by id (full, prefix or list
    /// number). A session open elsewhere — in another navi or in another
    /// handle of this one — is refused as busy, naming the holder's pid. A
    /// given profile applies to a new session, or switches an existing one.
    pub fn open_handle(
        &self,
        choice: &SessionChoice,
        opts: OpenOptions,
    ) -> Result<SessionHandle, AppError> {
        if let Some(p) = &opts.profile {
            self.profiles.check(p)?;
        }
        let work_dir = self.session_dir(opts.work_dir.as_deref())?;
        let project = project_key(&work_dir);
        let existing = match choice {
            SessionChoice::New => None,
            // The latest of this project: another repository's conversation
            // is never continued by accident.
            SessionChoice::Latest => self.store.latest_in(&project, true)?,
            SessionChoice::Continue => self.store.latest_in(&project, false)?,
            SessionChoice::Id(key) => Some(self.store.resolve_in(key, &project)?),
        };
        let mut note = existing
            .as_ref()
            .and_then(|m| elsewhere(m, &project, &work_dir));
        let session = match existing {
            Some(meta) => match self.store.lock(&meta.id) {
                Ok(lock) => {
                    if meta.project.is_none() {
                        self.store
                            .claim(&meta.id, &work_dir.to_string_lossy(), &project)?;
                    }
                    if let Some(p) = opts.profile.as_deref().filter(|p| *p != meta.profile_id) {
                        self.store.set_profile(&meta.id, p)?;
                    }
                    let mcp = self.session_mcp(&opts.mcp_servers)?;
                    let fresh = self.agent.model_override().is_some();
                    Session::stored(self.store.clone(), lock, work_dir, mcp, fresh)
                }
                Err(StoreError::Lock(e @ LockError::Busy { .. }))
                    if opts.new_if_busy
                        && matches!(choice, SessionChoice::Latest | SessionChoice::Continue) =>
                {
                    note = Some(format!("{e}: started a new session"));
                    self.new_session(&opts, work_dir)?
                }
                Err(e) => return Err(e.into()),
            },
            None => self.new_session(&opts, work_dir)?,
        };
        if let Some(m) = opts.model.as_ref().or(self.session_model.as_ref()) {
            session
                .set_model_choice(Some(ModelChoice::Named(m.clone())))
                .map_err(AppError::Store)?;
        }
        let created = !opts.keep_empty
            && (session.is_pending() || *choice == SessionChoice::New || note.is_some());
        // Checkpoints: the session's first snapshot starts in the background.
        crate::checkpoint::warm(
            &self.agent.env.config,
            &self.agent.env.paths,
            session.checkpoints(),
            session.id(),
            session.work_dir(),
        );
        // Attachments never read what tools could have planted a link in.
        let files = FilesPolicy::from_config(&self.config, &self.paths).guarding(
            crate::checkpoint::untrusted(&self.config, &self.paths, session.work_dir()),
        );
        let (tx, rx) = mpsc::channel(1024);
        Ok(SessionHandle {
            agent: self.agent.clone(),
            store: self.store.clone(),
            session: Arc::new(session),
            files,
            tx,
            rx: Some(rx),
            created,
            closed: AtomicBool::new(false),
            note,
        })
    }

    /// A new session: pending (stored at its first message) or stored now.
    fn new_session(&self, opts: &OpenOptions, work_dir: PathBuf) -> Result<Session, AppError> {
        let profile = opts
            .profile
            .clone()
            .unwrap_or_else(|| self.profiles.default_id());
        let mut meta = crate::session::new_meta(&profile);
        meta.cwd = Some(work_dir.to_string_lossy().into_owned());
        meta.project = Some(project_key(&work_dir));
        let mcp = self.session_mcp(&opts.mcp_servers)?;
        if opts.pending {
            return Ok(Session::pending(self.store.clone(), meta, work_dir, mcp));
        }
        let lock = self.store.materialize(&meta)?;
        Ok(Session::stored(
            self.store.clone(),
            lock,
            work_dir,
            mcp,
            false,
        ))
    }

    /// The directory a session works in: its own (absolute, an existing
    /// directory the sandbox can use), else the app's.
    fn session_dir(&self, asked: Option<&Path>) -> Result<PathBuf, AppError> {
        let Some(dir) = asked.filter(|d| !d.as_os_str().is_empty()) else {
            return Ok(self.work_dir.clone());
        };
        if !dir.is_absolute() {
            return Err(AppError::WorkDir(format!(
                "cwd must be an absolute path, got '{}'",
                dir.display()
            )));
        }
        let dir = std::fs::canonicalize(dir)
            .map_err(|e| AppError::WorkDir(format!("cwd '{}': {e}", dir.display())))?;
        if !dir.is_dir() {
            return Err(AppError::WorkDir(format!(
                "cwd '{}' is not a directory",
                dir.display()
            )));
        }
        crate::sandbox::check_workspace(&self.config.sandbox, &dir)
            .map_err(|e| AppError::WorkDir(e.to_string()))?;
        Ok(dir)
    }

    /// The session's own MCP servers, checked like configured ones; `None`
    /// when it brings none. Nothing starts here.
    fn session_mcp(
        &self,
        servers: &BTreeMap<String, McpServerConfig>,
    ) -> Result<Option<SessionMcp>, AppError> {
        if servers.is_empty() {
            return Ok(None);
        }
        crate::config::mcp::validate(servers, "the client's mcpServers")
            .map_err(|e| AppError::McpServers(e.to_string()))?;
        let mut config = (*self.config).clone();
        config.mcp_servers = servers.clone();
        let hub = crate::mcp::McpHub::new(&config, &self.paths);
        let tools = Arc::new(RwLock::new(ToolRegistry::new()));
        hub.attach(&tools);
        Ok(Some(SessionMcp { hub, tools }))
    }

    /// The sessions of the project navi was started in, pinned first, then
    /// most recent first.
    pub fn sessions(&self) -> Result<Vec<SessionMeta>, AppError> {
        Ok(self.store.list_in(&self.project())?)
    }

    /// Every stored session, of every project (`--all`).
    pub fn all_sessions(&self) -> Result<Vec<SessionMeta>, AppError> {
        Ok(self.store.list()?)
    }

    /// The project navi was started in (see [`crate::project`]).
    pub fn project(&self) -> String {
        project_key(&self.work_dir)
    }

    /// A stored session by id, id prefix (any project) or number in
    /// [`sessions`](Self::sessions).
    pub fn find_session(&self, key: &str) -> Result<SessionMeta, AppError> {
        Ok(self.store.resolve_in(key, &self.project())?)
    }

    /// Deletes a stored session that is not open (in another navi or in a
    /// handle of this one; the open one is deleted with
    /// [`Op::Delete`](crate::protocol::Op) on its handle). Its metadata.
    pub fn delete_session(&self, key: &str) -> Result<SessionMeta, AppError> {
        let meta = self.store.resolve(key)?;
        self.store.delete(&meta.id)?;
        Ok(meta)
    }

    /// The profiles a session can switch to.
    pub fn profile_list(&self) -> Vec<crate::protocol::ProfileSummary> {
        self.profiles
            .all()
            .map(|p| crate::protocol::ProfileSummary {
                id: p.id.clone(),
                name: p.name.clone(),
                description: p.description.clone(),
            })
            .collect()
    }
}

/// How a project is stored: its root as a string.
fn project_key(work_dir: &Path) -> String {
    crate::project::root(work_dir)
        .to_string_lossy()
        .into_owned()
}

/// The note for opening a session that belongs to another project (its
/// tools now work in `work_dir`); `None` when it is this project's, or
/// was stored before sessions had one.
fn elsewhere(meta: &SessionMeta, project: &str, work_dir: &Path) -> Option<String> {
    let theirs = meta.project.as_deref()?;
    if theirs == project {
        return None;
    }
    Some(format!(
        "this session belongs to project {}; its tools now work in {}",
        crate::project::display(theirs),
        crate::project::display(&work_dir.to_string_lossy())
    ))
}
