//! An open session: the one owner of everything the process keeps for it.
//!
//! A [`Session`] holds the session's row (pending until its first message,
//! then the lock that makes this process its one writer), the directory its
//! tools work in and what they keep ([`SessionTools`]: todo list,
//! scratchpads, approvals), the checkpoint of the turn in progress, steers
//! waiting for a safe point, the model chosen for it (stored with the
//! session), the turn tweaks, a previewed compaction, its own MCP servers,
//! and the turn or compaction running now with its stop token.
//!
//! The agent is an engine: it runs a turn *for* a session it is handed
//! ([`Agent::run_turn`](super::Agent::run_turn)); it keeps nothing per
//! session itself. Closing a session is stopping what runs (cooperatively,
//! so it saves what it owes) and dropping the value: the lock goes with it.
//!
//! Invariants:
//! - at most one turn or compaction runs at a time: [`Session::begin`]
//!   checks and claims in one step;
//! - a pending session writes nothing until [`Session::materialize`];
//! - the model choice is written to the session's state when it is made
//!   (or when the session is stored), so it survives a restart.
use super::compact_run::CompactionPlan;
use super::tweaks::TurnTweaks;
use crate::checkpoint::Checkpoints;
use crate::mcp::McpHub;
use crate::protocol::SessionMeta;
use crate::session::{SessionLock, SessionStore, StoreError};
use crate::tools::{SessionTools, ToolRegistry};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, RwLock};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// Session state key of the chosen model.
const MODEL_KEY: &str = "model";

/// The model a session was told to use (`/model`, an editor's picker).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum ModelChoice {
    Named(String),
    /// `/model default`: the profile's priority list, even over `--model`
    /// (for the rest of this process; nothing is stored).
    ProfileList,
}

/// Where the session's row is.
enum Row {
    /// Not stored yet: the metadata chosen so far.
    Pending(SessionMeta),
    /// Stored; this process is its one writer while the lock lives.
    Stored(SessionLock),
    /// Given up (deleted, or left to another owner).
    Released,
}

/// What runs in the session now.
struct Active {
    cancel: CancellationToken,
    /// The task that forwards the run's events and reports its end.
    done: Option<JoinHandle<()>>,
}

/// A session's own MCP servers (an editor's per-session `mcpServers`) and
/// the registry their tools enter.
pub(crate) struct SessionMcp {
    pub(crate) hub: Arc<McpHub>,
    pub(crate) tools: Arc<RwLock<ToolRegistry>>,
}

/// See the module docs.
pub struct Session {
    id: String,
    store: Arc<SessionStore>,
    row: Mutex<Row>,
    tools: Arc<SessionTools>,
    checkpoints: Checkpoints,
    steers: Mutex<Vec<String>>,
    model: Mutex<Option<ModelChoice>>,
    tweaks: Mutex<Option<TurnTweaks>>,
    compaction: Mutex<Option<CompactionPlan>>,
    active: Mutex<Option<Active>>,
    mcp: Option<SessionMcp>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Why a run could not start.
#[derive(Debug)]
pub(crate) struct Busy;

impl Session {
    fn build(
        store: Arc<SessionStore>,
        id: String,
        row: Row,
        work_dir: PathBuf,
        mcp: Option<SessionMcp>,
    ) -> Session {
        let tools = Arc::new(SessionTools::new(&id, work_dir, Some(store.clone())));
        Session {
            tools,
            checkpoints: Checkpoints::default(),
            steers: Mutex::new(Vec::new()),
            model: Mutex::new(None),
            tweaks: Mutex::new(None),
            compaction: Mutex::new(None),
            active: Mutex::new(None),
            mcp,
            id,
            store,
            row: Mutex::new(row),
        }
    }

    /// A stored session, opened as its one writer (`lock` held); its stored
    /// model choice is read unless `fresh_model` (`--model` given for this
    /// process wins, for this process: what is stored stays).
    pub(crate) fn stored(
        store: Arc<SessionStore>,
        held: SessionLock,
        work_dir: PathBuf,
        mcp: Option<SessionMcp>,
        fresh_model: bool,
    ) -> Session {
        let id = held.session().to_string();
        let model = store
            .get_state(&id, MODEL_KEY)
            .ok()
            .flatten()
            .filter(|m| !m.trim().is_empty() && !fresh_model)
            .map(ModelChoice::Named);
        let s = Session::build(store, id, Row::Stored(held), work_dir, mcp);
        *lock(&s.model) = model;
        s
    }

    /// A new session, stored at its first message.
    pub(crate) fn pending(
        store: Arc<SessionStore>,
        meta: SessionMeta,
        work_dir: PathBuf,
        mcp: Option<SessionMcp>,
    ) -> Session {
        let id = meta.id.clone();
        Session::build(store, id, Row::Pending(meta), work_dir, mcp)
    }

    pub fn id(&self) -> &str {
        &self.id
    }

    /// The session's metadata (a pending session's too); `None` once it is
    /// gone.
    pub fn meta(&self) -> Option<SessionMeta> {
        match &*lock(&self.row) {
            Row::Pending(m) => Some(m.clone()),
            _ => self.store.meta(&self.id).ok().flatten(),
        }
    }

    /// Whether nothing of the session is stored yet.
    pub fn is_pending(&self) -> bool {
        matches!(&*lock(&self.row), Row::Pending(_))
    }

    /// What the tools keep for this session.
    pub(crate) fn tools(&self) -> &Arc<SessionTools> {
        &self.tools
    }

    /// The session's todo list.
    pub fn todos(&self) -> Vec<crate::protocol::TodoItem> {
        self.tools.todos()
    }

    /// The directory the session's tools work in.
    pub fn work_dir(&self) -> &std::path::Path {
        self.tools.work_dir()
    }

    pub(crate) fn checkpoints(&self) -> &Checkpoints {
        &self.checkpoints
    }

    pub(crate) fn mcp(&self) -> Option<&SessionMcp> {
        self.mcp.as_ref()
    }

    // ---- the row ----

    /// Stores a pending session (its row and lock; the model chosen so far
    /// is written with it). A stored session is left as it is.
    pub(crate) fn materialize(&self) -> Result<(), StoreError> {
        let mut row = lock(&self.row);
        let Row::Pending(meta) = &*row else {
            return Ok(());
        };
        let held = self.store.materialize(meta)?;
        *row = Row::Stored(held);
        drop(row);
        if let Some(ModelChoice::Named(m)) = self.model_choice() {
            self.store.put_state(&self.id, MODEL_KEY, &m)?;
        }
        Ok(())
    }

    /// Runs `f` with the session's lock; `None` while it is pending (or
    /// released).
    pub(crate) fn with_lock<T>(&self, f: impl FnOnce(&SessionLock) -> T) -> Option<T> {
        match &*lock(&self.row) {
            Row::Stored(l) => Some(f(l)),
            _ => None,
        }
    }

    /// The stored session read by its writer (a crash's leftovers repaired,
    /// see [`SessionStore::load_held`]); `None` while pending.
    pub(crate) fn load(&self) -> Result<Option<crate::session::Session>, StoreError> {
        self.with_lock(|l| self.store.load_held(l))
            .transpose()
            .map(Option::flatten)
    }

    /// Gives the row up: its lock when stored (to delete the session with
    /// it); a pending session just ends.
    pub(crate) fn release(&self) -> Option<SessionLock> {
        match std::mem::replace(&mut *lock(&self.row), Row::Released) {
            Row::Stored(l) => Some(l),
            _ => None,
        }
    }

    /// Changes the metadata: of the pending row in memory, else in the store.
    pub(crate) fn edit(
        &self,
        pending: impl FnOnce(&mut SessionMeta),
        stored: impl FnOnce(&SessionStore, &str) -> Result<(), StoreError>,
    ) -> Result<(), StoreError> {
        let mut row = lock(&self.row);
        match &mut *row {
            Row::Pending(m) => {
                pending(m);
                Ok(())
            }
            _ => {
                drop(row);
                stored(&self.store, &self.id)
            }
        }
    }

    // ---- what turns run with ----

    /// Queues `text` for the running turn's next safe point.
    pub fn push_steer(&self, text: &str) {
        lock(&self.steers).push(text.to_string());
    }

    /// Takes every waiting steer, oldest first.
    pub fn take_steers(&self) -> Vec<String> {
        std::mem::take(&mut *lock(&self.steers))
    }

    pub(crate) fn model_choice(&self) -> Option<ModelChoice> {
        lock(&self.model).clone()
    }

    /// Chooses the session's model; stored with a stored session. `None`
    /// and [`ModelChoice::ProfileList`] clear what is stored.
    pub(crate) fn set_model_choice(&self, choice: Option<ModelChoice>) -> Result<(), StoreError> {
        *lock(&self.model) = choice.clone();
        if self.is_pending() {
            return Ok(());
        }
        match choice {
            Some(ModelChoice::Named(m)) => self.store.put_state(&self.id, MODEL_KEY, &m),
            _ => self.store.delete_state(&self.id, MODEL_KEY),
        }
    }

    /// The session's own turn tweaks, if it has any.
    pub(crate) fn tweaks(&self) -> Option<TurnTweaks> {
        lock(&self.tweaks).clone()
    }

    pub(crate) fn set_tweaks(&self, t: TurnTweaks) {
        *lock(&self.tweaks) = Some(t);
    }

    /// Keeps a previewed compaction for `/compact apply`.
    pub(crate) fn keep_compaction(&self, plan: CompactionPlan) {
        *lock(&self.compaction) = Some(plan);
    }

    pub(crate) fn take_compaction(&self) -> Option<CompactionPlan> {
        lock(&self.compaction).take()
    }

    /// Forgets a previewed compaction (the user declined it); false when
    /// there was none.
    pub fn discard_compaction(&self) -> bool {
        self.take_compaction().is_some()
    }

    // ---- the running turn ----

    /// Claims the session for a run stopped by `cancel`; [`Busy`] while
    /// another runs.
    pub(crate) fn begin(&self, cancel: CancellationToken) -> Result<(), Busy> {
        let mut a = lock(&self.active);
        if a.is_some() {
            return Err(Busy);
        }
        *a = Some(Active { cancel, done: None });
        Ok(())
    }

    /// The task that reports the run's end (awaited by [`close`](Self::close)).
    pub(crate) fn set_done(&self, done: JoinHandle<()>) {
        if let Some(a) = lock(&self.active).as_mut() {
            a.done = Some(done);
        }
    }

    /// The run ended; the session takes the next one.
    pub(crate) fn end(&self) {
        lock(&self.active).take();
    }

    /// Whether a turn or a compaction runs.
    pub fn is_running(&self) -> bool {
        lock(&self.active).is_some()
    }

    /// Asks what runs to stop (it saves what it has). False when nothing runs.
    pub(crate) fn stop(&self) -> bool {
        match lock(&self.active).as_ref() {
            Some(a) => {
                a.cancel.cancel();
                true
            }
            None => false,
        }
    }

    /// Stops what runs and waits until it has saved and reported its end;
    /// the session's own MCP servers stop too.
    pub(crate) async fn wind_down(&self) {
        let done = {
            let mut a = lock(&self.active);
            a.as_mut().and_then(|a| {
                a.cancel.cancel();
                a.done.take()
            })
        };
        if let Some(d) = done {
            let _ = d.await;
        }
        if let Some(m) = &self.mcp {
            m.hub.shutdown();
        }
    }
}

impl Drop for Session {
    /// Dropped while something runs (a front end that did not close it):
    /// the run is asked to stop and saves what it has; the lock goes with
    /// the value.
    fn drop(&mut self) {
        if let Some(a) = lock(&self.active).as_ref() {
            a.cancel.cancel();
        }
        if let Some(m) = &self.mcp {
            m.hub.shutdown();
        }
    }
}
