//! The session handle: one open session, owned by one front end.
//!
//! [`App::open_handle`](super::App::open_handle) gives a [`SessionHandle`]:
//! the one door to the [`Session`] it owns. A front end sends
//! [`Op`](crate::protocol::Op)s ([`SessionHandle::submit`], `ops.rs`) and
//! reads one stream of [`SessionEvent`]s; the reads it needs (history,
//! account, info, listings) are methods returning protocol types or lines.
//! [`SessionHandle::close`] ends the session the same way for every front
//! end.
//!
//! Invariant: a stop is cooperative. The running turn's token is cancelled,
//! the turn winds down and saves what it has; nothing is aborted.
use crate::agent::session::ModelChoice;
use crate::agent::{Agent, Session};
use crate::attach::{self, Attachment, FilesPolicy};
use crate::config::McpServerConfig;
use crate::llm::ChatMessage;
use crate::protocol::{AgentEvent, SessionEvent, SessionMeta, TodoItem};
use crate::session::SessionStore;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use tokio::sync::mpsc;

/// How a session is opened.
#[derive(Clone, Debug, Default)]
pub struct OpenOptions {
    /// The profile of a new session, or the one an existing session switches to.
    pub profile: Option<String>,
    /// The model this session uses (over the profile's list and `--model`);
    /// stored with the session.
    pub model: Option<String>,
    /// A new session stays pending (no row, no lock) until its first message.
    pub pending: bool,
    /// A new session is kept when it closes with no message (an editor's
    /// session exists from `session/new` on); otherwise it is removed.
    pub keep_empty: bool,
    /// The directory the session's tools work in; `None`: the app's.
    pub work_dir: Option<PathBuf>,
    /// MCP servers of this session only (an editor's `mcpServers`), by
    /// name; they start with its first message and stop when it closes.
    pub mcp_servers: BTreeMap<String, McpServerConfig>,
    /// When the most recent session ([`SessionChoice::Latest`](super::SessionChoice))
    /// is busy in another navi, open a new one instead and say why
    /// ([`SessionHandle::opening_note`]). A named session that is busy
    /// stays an error.
    pub new_if_busy: bool,
}

/// A user message ready to send (see [`SessionHandle::send`]): the message
/// (attachments inlined) and what the user typed, which alone decides
/// whether the turn is planned (attached or piped text never makes a short
/// request "complex").
pub struct Prepared {
    pub(crate) message: ChatMessage,
    pub(crate) typed: String,
}

/// What an op answered at once; what it started reports on the event
/// stream.
#[derive(Clone, Debug, PartialEq)]
pub enum Reply {
    /// Taken; nothing to say (a turn or compaction reports on the stream).
    Done,
    /// Lines to show the user.
    Lines(Vec<String>),
    /// The conversation went back to before a message: its text (for
    /// edit-and-resend) and the lines to show; the history changed.
    Rewound { text: String, lines: Vec<String> },
    /// A file read for the next message.
    Attached(Attachment),
}

impl Reply {
    /// The lines to show (none for `Done` and `Attached`).
    pub fn lines(&self) -> Vec<String> {
        match self {
            Reply::Lines(l) | Reply::Rewound { lines: l, .. } => l.clone(),
            Reply::Done | Reply::Attached(_) => Vec::new(),
        }
    }

    pub(crate) fn line(s: impl Into<String>) -> Reply {
        Reply::Lines(vec![s.into()])
    }
}

/// One open session. See the module docs.
pub struct SessionHandle {
    pub(super) agent: Arc<Agent>,
    pub(super) store: Arc<SessionStore>,
    pub(super) session: Arc<Session>,
    pub(super) files: FilesPolicy,
    pub(super) tx: mpsc::Sender<SessionEvent>,
    pub(super) rx: Option<mpsc::Receiver<SessionEvent>>,
    /// Opened as a new session: closed with no message, it is removed.
    pub(super) created: bool,
    pub(super) closed: AtomicBool,
    /// Why the session opened is not the one asked for, if it is not.
    pub(super) note: Option<String>,
}

impl SessionHandle {
    pub fn id(&self) -> String {
        self.session.id().to_string()
    }

    /// The session's metadata (a pending session's too).
    pub fn info(&self) -> Option<SessionMeta> {
        self.session.meta()
    }

    /// Whether nothing of the session is stored yet.
    pub fn is_pending(&self) -> bool {
        self.session.is_pending()
    }

    /// Why another session than the one asked for was opened (the latest
    /// was busy in another navi), to show once.
    pub fn opening_note(&self) -> Option<&str> {
        self.note.as_deref()
    }

    /// The event stream; taken once, by the front end that reads it.
    pub fn take_events(&mut self) -> Option<mpsc::Receiver<SessionEvent>> {
        self.rx.take()
    }

    /// Whether a turn or a compaction runs.
    pub fn is_running(&self) -> bool {
        self.session.is_running()
    }

    /// The directory the session's tools work in.
    pub fn work_dir(&self) -> PathBuf {
        self.session.work_dir().to_path_buf()
    }

    /// The user's own slash commands for this session's project (read
    /// again on each call: a new file works at once).
    pub fn custom_commands(&self) -> Vec<crate::project::commands::CustomCommand> {
        crate::project::commands::load(&self.agent.env.paths.config_dir, self.session.work_dir())
    }

    /// The line at the start of a session naming the AGENTS.md files its
    /// requests carry; `None` when there are none.
    pub fn instructions_note(&self) -> Option<String> {
        self.agent.instructions(&self.session).summary()
    }

    /// The stored display history as the events a live turn would have
    /// sent (a crash's leftovers repaired first: this process is the
    /// session's writer).
    pub fn history(&self) -> Result<Vec<AgentEvent>, String> {
        let loaded = self
            .session
            .with_lock(|l| crate::session::replay::held_events(&self.store, l));
        let mut events = match loaded {
            Some(r) => r
                .map(Option::unwrap_or_default)
                .map_err(|e| e.to_string())?,
            None => Vec::new(),
        };
        self.agent.describe_replayed(&self.session, &mut events);
        Ok(events)
    }

    /// The tail of the display history (about `RESUME_ROWS` rows, after a
    /// notice of how many earlier messages it leaves out): what resuming or
    /// switching shows, at a cost that does not grow with the history.
    pub fn recent_history(&self) -> Result<Vec<AgentEvent>, String> {
        let mut events = recent(&self.store, self.session.id())?;
        self.agent.describe_replayed(&self.session, &mut events);
        Ok(events)
    }

    /// [`recent_history`](Self::recent_history) on a blocking thread (never
    /// on a frame).
    pub fn load_history(
        &self,
    ) -> impl std::future::Future<Output = Result<Vec<AgentEvent>, String>> + Send + 'static {
        let (store, id) = (self.store.clone(), self.session.id().to_string());
        let (agent, session) = (self.agent.clone(), self.session.clone());
        async move {
            let mut events = tokio::task::spawn_blocking(move || recent(&store, &id))
                .await
                .map_err(|e| format!("cannot load the session: {e}"))??;
            agent.describe_replayed(&session, &mut events);
            Ok(events)
        }
    }

    /// The session's token account.
    pub fn context(&self) -> Result<super::ContextAccount, String> {
        self.agent
            .context_account(self.session.id())
            .map_err(|e| e.to_string())
    }

    /// The context window last recorded for the session (0: none yet).
    pub fn stored_window(&self) -> u64 {
        crate::agent::account::load_window(&self.store, self.session.id()).unwrap_or(0)
    }

    /// The model chosen for this session, if one was.
    pub fn model(&self) -> Option<String> {
        match self.session.model_choice() {
            Some(ModelChoice::Named(m)) => Some(m),
            _ => None,
        }
    }

    /// The editor's file system and terminals for this session's tools
    /// (ACP); `None`: the disk and local processes.
    pub fn set_client(&self, client: Option<crate::tools::client::Client>) {
        self.session.tools().set_client(client);
    }

    /// The session's todo list.
    pub fn todos(&self) -> Vec<TodoItem> {
        self.session.tools().todos()
    }

    /// Adjusts every following turn of this session (`navi run --system …`).
    pub(crate) fn set_tweaks(&self, t: super::TurnTweaks) {
        self.session.set_tweaks(t);
    }

    /// Where this session's attached files are kept.
    pub(crate) fn files(&self) -> &FilesPolicy {
        &self.files
    }

    /// Starts the MCP servers this session's turns use (the configured
    /// ones and its own) and waits until each is ready or failed (each
    /// bounded by its start-up timeout).
    pub async fn start_mcp(&self) {
        self.agent.mcp.start();
        if let Some(m) = self.session.mcp() {
            m.hub.start();
        }
        self.agent.mcp.wait_started().await;
        if let Some(m) = self.session.mcp() {
            m.hub.wait_started().await;
        }
    }

    /// Removes the files copied for a message that was never sent, when the
    /// session is still pending (nothing of it is stored).
    pub fn discard_files_if_pending(&self) {
        if self.session.is_pending() {
            let _ = std::fs::remove_dir_all(self.files.session_dir(self.session.id()));
        }
    }

    /// A message from text and files the front end already resolved with
    /// [`Op::Attach`](crate::protocol::Op) or [`crate::attach`] (`-f`,
    /// `/attach`, `@path`).
    pub fn prepare_with(&self, text: &str, items: &[Attachment]) -> Prepared {
        if items.is_empty() {
            // Sent as typed (a paste keeps its last newline).
            return Prepared {
                message: ChatMessage::user(text),
                typed: text.to_string(),
            };
        }
        Prepared {
            message: attach::compose(text, items),
            typed: text.to_string(),
        }
    }

    /// Ends the session: a running turn is stopped and saved, its shared
    /// connections (SSH) and own MCP servers end, a session this handle
    /// created that holds no message is removed, and its lock is released.
    /// What the process kept for it goes with it.
    pub async fn close(&self) {
        if self.closed.swap(true, Ordering::SeqCst) {
            return;
        }
        self.session.wind_down().await;
        crate::tools::builtin::ssh_exec::close_session(&self.agent.env, self.session.id()).await;
        if self.created {
            self.drop_if_empty();
        }
        drop(self.session.release());
    }

    /// A session this handle created that holds no message at all (its
    /// first message was refused after it got its row) is removed.
    fn drop_if_empty(&self) {
        let empty = self
            .store
            .load(self.session.id())
            .ok()
            .flatten()
            .is_some_and(|s| s.display.is_empty() && s.context.is_empty());
        if !empty {
            return;
        }
        if let Some(lock) = self.session.release()
            && let Err(e) = self.store.delete_held(lock)
        {
            tracing::warn!("cannot remove the empty session {}: {e}", self.session.id());
        }
    }
}

impl Drop for SessionHandle {
    /// Not closed: a running turn is asked to stop (it saves what it has);
    /// the lock goes with the session once the turn let go of it.
    fn drop(&mut self) {
        if !self.closed.load(Ordering::SeqCst) {
            self.session.stop();
        }
    }
}

/// `OpError::Invalid` from anything printable.
pub(super) fn invalid(e: impl std::fmt::Display) -> crate::protocol::OpError {
    crate::protocol::OpError::Invalid(e.to_string())
}

fn recent(store: &SessionStore, id: &str) -> Result<Vec<AgentEvent>, String> {
    crate::session::replay::tail_events(store, id, crate::session::replay::RESUME_ROWS)
        .map(Option::unwrap_or_default)
        .map_err(|e| format!("cannot load the session: {e}"))
}
