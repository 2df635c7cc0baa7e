//! The session handle: one open session, owned by one front end.
//!
//! Opening a session (new, resumed or the latest) gives a [`SessionHandle`].
//! It holds the session's lock, runs its turns and compactions one at a time,
//! and keeps what the agent remembers for it (model choice, tweaks, steers,
//! a previewed compaction); [`SessionHandle::close`] ends all of it the same
//! way for every front end. A front end sends [`Op`]s and reads one stream of
//! [`SessionEvent`]s; reads it needs (history, account, info) are methods
//! returning protocol types.
//!
//! Invariant: a stop is cooperative. The running turn's token is cancelled,
//! the turn winds down and saves what it has; nothing is aborted.
use super::{App, AppError, SessionChoice, submit::Started};
use crate::agent::account::ContextAccount;
use crate::agent::per_session::ModelChoice;
use crate::agent::{Agent, AgentError, tweaks::TurnTweaks};
use crate::attach::{self, Attachment, FilesPolicy};
use crate::llm::{ChatMessage, ImageData};
use crate::protocol::{
    AgentEvent, InputAttachment, Op, OpError, SessionEvent, SessionMeta, TurnEnd,
};
use crate::session::{SessionStore, pins};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// How a session is opened.
#[derive(Clone, Debug, Default)]
pub struct OpenOptions {
    /// The profile of a new session, or the one an existing session switches to.
    pub profile: Option<String>,
    /// The model this session uses (over the profile's list and `--model`).
    pub model: Option<String>,
    /// A new session stays pending (no row, no lock) until its first message.
    pub pending: bool,
}

/// A user message ready to send (see [`SessionHandle::send`]).
pub struct Prepared(ChatMessage);

/// What runs in the session now.
struct Active {
    cancel: CancellationToken,
    done: JoinHandle<()>,
}

/// One open session. See the module docs.
pub struct SessionHandle {
    agent: Arc<Agent>,
    store: Arc<SessionStore>,
    app_runs: Arc<super::submit::Runs>,
    files: FilesPolicy,
    id: String,
    tx: mpsc::Sender<SessionEvent>,
    rx: Option<mpsc::Receiver<SessionEvent>>,
    active: Arc<Mutex<Option<Active>>>,
    /// A turn or compaction runs: set when it starts, cleared just before
    /// its `TurnEnded` is sent.
    running: Arc<AtomicBool>,
    /// Opened as a new session: closed with no message, it is removed.
    created: bool,
    closed: AtomicBool,
}

impl App {
    /// Opens a session as its one writer (see [`App::open_session`]) and
    /// returns its handle.
    pub fn open_handle(
        &self,
        choice: &SessionChoice,
        opts: OpenOptions,
    ) -> Result<SessionHandle, AppError> {
        let meta = self.open_with(choice, opts.profile.as_deref(), opts.pending)?;
        let mut h = self.handle_for(&meta.id, opts);
        h.created = *choice == SessionChoice::New;
        Ok(h)
    }

    /// A handle for a session this process already opened (locked, or
    /// pending).
    pub(crate) fn handle_for(&self, id: &str, opts: OpenOptions) -> SessionHandle {
        if let Some(m) = opts.model {
            self.agent.set_model_choice(id, Some(ModelChoice::Named(m)));
        }
        // Checkpoints: the session's first snapshot starts in the background.
        crate::checkpoint::warm(&self.agent.env, id);
        let (tx, rx) = mpsc::channel(1024);
        SessionHandle {
            agent: self.agent.clone(),
            store: self.store.clone(),
            app_runs: self.runs.clone(),
            files: FilesPolicy::from_config(&self.config, &self.paths).guarding(
                crate::checkpoint::untrusted(&self.config, &self.paths, &self.agent.env.work_dir),
            ),
            id: id.to_string(),
            tx,
            rx: Some(rx),
            active: Default::default(),
            running: Default::default(),
            // A session still pending was made by this process.
            created: self.store.is_pending(id),
            closed: AtomicBool::new(false),
        }
    }

    /// Every stored session, most recent first.
    pub fn sessions(&self) -> Result<Vec<SessionMeta>, AppError> {
        Ok(self.store.list()?)
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

impl SessionHandle {
    pub fn id(&self) -> String {
        self.id.clone()
    }

    /// The session's metadata (a pending session's too).
    pub fn info(&self) -> Option<SessionMeta> {
        self.store.meta(&self.id).ok().flatten()
    }

    /// The event stream; taken once, by the front end that reads it.
    pub fn take_events(&mut self) -> Option<mpsc::Receiver<SessionEvent>> {
        self.rx.take()
    }

    /// Whether a turn or a compaction runs.
    pub fn is_running(&self) -> bool {
        self.running.load(Ordering::SeqCst)
    }

    /// The stored display history as the events a live turn would have sent.
    pub fn history(&self) -> Result<Vec<AgentEvent>, String> {
        crate::session::replay::load_events(&self.store, &self.id)
            .map(Option::unwrap_or_default)
            .map_err(|e| e.to_string())
    }

    /// The session's token account.
    pub fn context(&self) -> Result<ContextAccount, String> {
        self.agent
            .context_account(&self.id)
            .map_err(|e| e.to_string())
    }

    /// Adjusts every following turn of this session (`navi run --system …`).
    pub(crate) fn set_tweaks(&self, t: TurnTweaks) {
        self.agent.set_session_tweaks(&self.id, t);
    }

    /// The model chosen for this session, if one was.
    pub fn model(&self) -> Option<String> {
        match self.agent.model_choice(&self.id) {
            Some(ModelChoice::Named(m)) => Some(m),
            _ => None,
        }
    }

    /// Carries out `op`. A message or a compaction starts on its own task and
    /// reports on the event stream, ending with [`SessionEvent::TurnEnded`];
    /// the rest act at once. `Ok(Some(line))`: a note for the user.
    pub fn submit(&self, op: Op) -> Result<Option<String>, OpError> {
        match op {
            Op::UserMessage { text, attachments } => {
                self.idle()?;
                let msg = self.prepare(&text, &attachments)?;
                self.send(msg).map(|_| None)
            }
            Op::Compact { mode } => {
                self.idle()?;
                let run =
                    super::submit::spawn_compaction(&self.agent, &self.app_runs, &self.id, mode);
                self.watch(Started::Compaction(run));
                Ok(None)
            }
            Op::Steer { text } => {
                if !self.is_running() {
                    return Err(OpError::NotRunning);
                }
                self.agent.steers.push(&self.id, &text);
                Ok(None)
            }
            Op::Stop => {
                if self.app_runs.stop(&self.id) {
                    Ok(None)
                } else {
                    Err(OpError::NotRunning)
                }
            }
            Op::Approval { id, decision } => {
                if self.agent.gate.answer(&id, decision) {
                    Ok(None)
                } else {
                    Err(OpError::Invalid(format!(
                        "no approval request '{id}' waits"
                    )))
                }
            }
            Op::Pin { index, pinned } => self.pin(index, pinned).map(Some),
            Op::SwitchProfile { profile } => self.switch_profile(&profile).map(Some),
            Op::SwitchModel { model } => {
                let choice = match model.as_deref() {
                    None | Some("default") => ModelChoice::ProfileList,
                    Some(m) => ModelChoice::Named(m.to_string()),
                };
                self.agent.set_model_choice(&self.id, Some(choice));
                Ok(None)
            }
            Op::Rename { title } => {
                let title = title.trim();
                if title.is_empty() {
                    return Err(OpError::Invalid("the title is empty".into()));
                }
                self.store.rename(&self.id, title).map_err(invalid)?;
                Ok(None)
            }
        }
    }

    fn idle(&self) -> Result<(), OpError> {
        if self.is_running() {
            Err(OpError::Busy)
        } else {
            Ok(())
        }
    }

    /// Starts a turn with a message made by [`prepare`](Self::prepare) or
    /// [`prepare_with`](Self::prepare_with): for a front end that checks the
    /// input (and starts what the turn needs) before the turn begins.
    pub fn send(&self, msg: Prepared) -> Result<(), OpError> {
        self.idle()?;
        let run = super::spawn_turn(&self.agent, &self.app_runs, &self.id, msg.0);
        self.watch(Started::Turn(run));
        Ok(())
    }

    /// A message from text and files the front end already resolved with
    /// [`crate::attach`] (`-f`, `/attach`, `@path`).
    pub fn prepare_with(&self, text: &str, items: &[Attachment]) -> Prepared {
        if items.is_empty() {
            // Sent as typed (a paste keeps its last newline).
            return Prepared(ChatMessage::user(text));
        }
        Prepared(attach::compose(text, items))
    }

    /// Where this session's attached files are kept.
    pub(crate) fn files(&self) -> &FilesPolicy {
        &self.files
    }

    /// The user message: text, then the attachments in order. Nothing is
    /// sent; a file that cannot be attached is an error naming it.
    pub fn prepare(&self, text: &str, items: &[InputAttachment]) -> Result<Prepared, OpError> {
        let mut out = Vec::new();
        for item in items {
            out.push(match item {
                InputAttachment::Path { path } => {
                    attach::attach_path(&self.files, &self.id, path).map_err(invalid)?
                }
                InputAttachment::Text { name, text } => Attachment::Text {
                    name: name.clone(),
                    text: text.clone(),
                },
                InputAttachment::Bytes { name, data_base64 } => {
                    let bytes = decode64(data_base64, name)?;
                    attach::attach_bytes(&self.files, &self.id, name, &bytes, None)
                        .map_err(|e| OpError::Invalid(format!("{name}: {e}")))?
                }
                InputAttachment::Image {
                    mime,
                    data_base64,
                    name,
                } => {
                    let name = name.clone().unwrap_or_else(|| "image".into());
                    decode64(data_base64, &name)?;
                    Attachment::Image {
                        name,
                        image: ImageData {
                            mime: mime.clone(),
                            base64: data_base64.clone(),
                        },
                    }
                }
            });
        }
        if text.trim().is_empty() && out.is_empty() {
            return Err(OpError::Invalid("the message is empty".into()));
        }
        Ok(self.prepare_with(text, &out))
    }

    /// Forwards what `started` sends to the session's stream, then how it
    /// ended.
    fn watch(&self, started: Started) {
        let tx = self.tx.clone();
        let running = self.running.clone();
        running.store(true, Ordering::SeqCst);
        let (cancel, done) = match started {
            Started::Turn(mut run) => {
                let cancel = run.cancel.clone();
                let done = tokio::spawn(async move {
                    let mut refused = false;
                    while let Some(event) = run.events.recv().await {
                        refused |= matches!(event, AgentEvent::InputReturned);
                        let _ = tx.send(SessionEvent::Agent { event }).await;
                    }
                    let end = match run.task.await {
                        Ok(Ok(o)) if o.stopped => TurnEnd::Stopped,
                        Ok(Ok(o)) => TurnEnd::Done {
                            completed: o.completed,
                        },
                        Ok(Err(e)) => end_of(e, refused),
                        Err(e) => TurnEnd::Failed {
                            message: format!("the turn's task failed: {e}"),
                        },
                    };
                    running.store(false, Ordering::SeqCst);
                    let _ = tx.send(SessionEvent::TurnEnded { end }).await;
                });
                (cancel, done)
            }
            Started::Compaction(mut run) => {
                let cancel = run.cancel.clone();
                let done = tokio::spawn(async move {
                    while let Some(event) = run.events.recv().await {
                        let _ = tx.send(SessionEvent::Agent { event }).await;
                    }
                    let end = match run.task.await {
                        Ok(Ok(_)) => TurnEnd::Done { completed: true },
                        Ok(Err(e)) => end_of(e, false),
                        Err(e) => TurnEnd::Failed {
                            message: format!("the compaction's task failed: {e}"),
                        },
                    };
                    running.store(false, Ordering::SeqCst);
                    let _ = tx.send(SessionEvent::TurnEnded { end }).await;
                });
                (cancel, done)
            }
        };
        if let Ok(mut a) = self.active.lock() {
            *a = Some(Active { cancel, done });
        }
    }

    fn pin(&self, index: usize, pinned: bool) -> Result<String, OpError> {
        let target = if index == 0 {
            pins::Target::LastAnswer
        } else {
            pins::Target::Number(index)
        };
        match pins::set_target(&self.store, &self.id, target, pinned).map_err(invalid)? {
            Some((e, _)) => Ok(format!(
                "{} message {}",
                if pinned { "pinned" } else { "unpinned" },
                e.n
            )),
            None => Err(OpError::Invalid(format!(
                "no message {index} in this session"
            ))),
        }
    }

    fn switch_profile(&self, id: &str) -> Result<String, OpError> {
        self.idle()?;
        let p = self.agent.profiles.get(id).ok_or_else(|| {
            OpError::Invalid(format!(
                "unknown profile '{id}'; available: {}",
                self.agent.profiles.ids().join(", ")
            ))
        })?;
        self.store.set_profile(&self.id, &p.id).map_err(invalid)?;
        let event = AgentEvent::ProfileSwitched {
            profile_id: p.id.clone(),
            profile_name: p.name.clone(),
        };
        let _ = self.tx.try_send(SessionEvent::Agent { event });
        Ok(format!("profile switched to {} ({})", p.name, p.id))
    }

    /// Ends the session: a running turn is stopped and saved, then the lock
    /// and everything kept for the session in this process are released.
    pub async fn close(&self) {
        if self.closed.swap(true, Ordering::SeqCst) {
            return;
        }
        let active = self.active.lock().ok().and_then(|mut a| a.take());
        if let Some(a) = active {
            a.cancel.cancel();
            let _ = a.done.await;
        }
        crate::tools::builtin::ssh_exec::close_session(&self.agent.env, &self.id).await;
        self.release();
        self.store.discard_pending(&self.id);
        self.store.unlock(&self.id);
    }

    /// Leaves the session without touching its lock, for a front end whose
    /// session command already moved the lock to the next session: what
    /// the process keeps for it is released (SSH connections in the
    /// background). Only while nothing runs; a running turn is stopped.
    pub fn detach(&self) {
        if self.closed.swap(true, Ordering::SeqCst) {
            return;
        }
        if let Ok(mut a) = self.active.lock()
            && let Some(a) = a.take()
        {
            a.cancel.cancel();
        }
        let (env, id) = (self.agent.env.clone(), self.id.clone());
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            rt.spawn(async move {
                crate::tools::builtin::ssh_exec::close_session(&env, &id).await;
            });
        }
        self.release();
    }

    fn release(&self) {
        self.agent.forget_session(&self.id);
        if self.created {
            self.drop_if_empty();
        }
    }

    /// A session this handle created that holds no message at all (its
    /// first message was refused after it got its row) is removed.
    fn drop_if_empty(&self) {
        let empty = self
            .store
            .load(&self.id)
            .ok()
            .flatten()
            .is_some_and(|s| s.display.is_empty() && s.context.is_empty());
        if empty && let Err(e) = self.store.delete(&self.id) {
            tracing::warn!("cannot remove the empty session {}: {e}", self.id);
        }
    }

    /// Removes the files copied for a message that was never sent, when the
    /// session is still pending (nothing of it is stored).
    pub fn discard_files_if_pending(&self) {
        if self.store.is_pending(&self.id) {
            let _ = std::fs::remove_dir_all(self.files.session_dir(&self.id));
        }
    }
}

impl Drop for SessionHandle {
    /// Not closed: a running turn is asked to stop (it saves what it has);
    /// the lock goes with the process.
    fn drop(&mut self) {
        if !self.closed.load(Ordering::SeqCst)
            && let Ok(mut a) = self.active.lock()
            && let Some(a) = a.take()
        {
            a.cancel.cancel();
        }
    }
}

fn end_of(e: AgentError, refused: bool) -> TurnEnd {
    if refused || e.returns_input() {
        TurnEnd::Refused {
            message: e.to_string(),
        }
    } else if e.is_cancelled() {
        TurnEnd::Stopped
    } else {
        TurnEnd::Failed {
            message: e.to_string(),
        }
    }
}

fn invalid(e: impl std::fmt::Display) -> OpError {
    OpError::Invalid(e.to_string())
}

fn decode64(data: &str, name: &str) -> Result<Vec<u8>, OpError> {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD
        .decode(data.trim())
        .map_err(|e| OpError::Invalid(format!("{name}: not valid base64: {e}")))
}
