//! What the event loop asks of the application, as a trait, so the loop runs
//! the same against the real `App` and against in-process fakes (tests,
//! benchmarks).
//!
//! Invariants: every run (turn or compaction) is a [`Turn`]: an event
//! receiver that closes when the run ended, and a token that stops it
//! cooperatively. Nothing here blocks on the network; the backend check runs
//! as a future the loop polls after the first frame, and a resumed session's
//! history loads on a blocking thread while the first frame is drawn.
use crate::app::{App, OpenOptions, Run, SessionPort};
use crate::attach::Attachment;
use crate::protocol::{AgentEvent, OpError, SessionMeta, TodoItem};
use crate::protocol::{CompactMode, Decision, Op};
use crate::ui::commands::{Outcome, SlashCommand, UiState, execute};
use std::future::Future;
use std::path::Path;
use std::pin::Pin;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

pub struct Turn {
    pub events: mpsc::Receiver<AgentEvent>,
    pub cancel: CancellationToken,
}

/// What the background backend check found: the model the open profile will
/// use and its context window (0: unknown), or why the backend cannot serve.
pub type Check = Pin<Box<dyn Future<Output = Result<(String, u64), String>> + Send>>;

/// The server's models (for `/model`), fetched off the UI thread.
pub(crate) type Models =
    Pin<Box<dyn Future<Output = Result<Vec<crate::protocol::ModelInfo>, String>> + Send>>;

/// A session's display history, loaded off the UI thread.
pub type Load = Pin<Box<dyn Future<Output = Result<Vec<AgentEvent>, String>> + Send>>;

pub trait Host {
    fn start_turn(&mut self, session_id: &str, message: &str) -> Turn;
    fn execute(&mut self, cmd: SlashCommand, ui: &mut UiState) -> Result<Outcome, String>;
    fn answer(&mut self, id: &str, decision: Decision);
    fn compact(&mut self, session_id: &str, mode: CompactMode) -> Turn;
    /// The session's current metadata (title and context use change per turn).
    fn refresh(&mut self, session_id: &str) -> Option<SessionMeta>;
    /// A check of the backend, run after the first frame: the model it
    /// resolves for the profile, or an error when it cannot be reached.
    fn check_backend(&mut self, profile_id: &str) -> Option<Check>;
    /// `(id prefix, title)` of the saved sessions, most recent first (for
    /// completing `/session resume|delete`; a local database read).
    fn session_choices(&mut self) -> Vec<(String, String)> {
        Vec::new()
    }
    /// Lists what the profile's backend serves (`None`: cannot tell; `/model`
    /// then switches without checking).
    fn list_models(&mut self, _profile_id: &str) -> Option<Models> {
        None
    }
    /// Hands a steer to the turn running on `session_id` (taken in at its
    /// next safe point).
    fn steer(&mut self, _session_id: &str, _text: &str) {}
    /// Takes back the steers the ended turn never took in.
    fn take_steers(&mut self, _session_id: &str) -> Vec<String> {
        Vec::new()
    }
    /// Loads a session's history in the background (`None`: nothing to load).
    fn load_history(&mut self, _session_id: &str) -> Option<Load> {
        None
    }
    /// The session's saved todo list (shown in the side pane on open/resume).
    fn todos(&mut self, _session_id: &str) -> Vec<TodoItem> {
        Vec::new()
    }
    /// Reads a file the user attached (`/attach`, `@path`) by the shared
    /// attachment rules of [`crate::attach`].
    fn attach(&mut self, _session_id: &str, path: &Path) -> Result<Attachment, String> {
        Err(format!(
            "cannot attach {}: not supported here",
            path.display()
        ))
    }
    /// Starts a turn with attachments (resolved by [`Host::attach`]).
    fn start_turn_with(&mut self, session_id: &str, text: &str, _items: &[Attachment]) -> Turn {
        self.start_turn(session_id, text)
    }
}

/// The real application: the open session is a [`SessionPort`]; a session
/// command that moves to another session detaches the port of the one left
/// (the command moved the lock), and [`AppHost::close`] ends the last one.
pub struct AppHost<'a> {
    pub app: &'a App,
    port: Option<SessionPort>,
}

impl<'a> AppHost<'a> {
    pub fn new(app: &'a App) -> Self {
        AppHost { app, port: None }
    }

    /// The port of `session_id`, opened when the session changed.
    fn port(&mut self, session_id: &str) -> &SessionPort {
        if self.port.as_ref().is_some_and(|p| p.id() != session_id)
            && let Some(old) = self.port.take()
        {
            old.detach();
        }
        let app = self.app;
        self.port.get_or_insert_with(|| {
            SessionPort::new(app.handle_for(session_id, OpenOptions::default()))
        })
    }

    /// Ends the open session (a running turn is stopped and saved first).
    pub async fn close(&mut self) {
        if let Some(p) = self.port.take() {
            p.close().await;
        }
    }

    fn turn(&mut self, session_id: &str, r: Result<Run, OpError>) -> Turn {
        match r {
            Ok(run) => Turn {
                events: run.events,
                cancel: run.cancel,
            },
            Err(e) => refused(session_id, e),
        }
    }
}

/// A run that could not start, as a turn that reports why and ends.
fn refused(session_id: &str, e: OpError) -> Turn {
    let (tx, events) = mpsc::channel(2);
    let _ = tx.try_send(AgentEvent::StreamStart {
        session_id: session_id.to_string(),
    });
    let _ = tx.try_send(AgentEvent::Error {
        message: e.to_string(),
    });
    Turn {
        events,
        cancel: CancellationToken::new(),
    }
}

impl Host for AppHost<'_> {
    fn start_turn(&mut self, session_id: &str, message: &str) -> Turn {
        self.start_turn_with(session_id, message, &[])
    }

    fn start_turn_with(&mut self, session_id: &str, text: &str, items: &[Attachment]) -> Turn {
        let port = self.port(session_id);
        let msg = port.handle().prepare_with(text, items);
        let r = port.send(msg);
        self.turn(session_id, r)
    }

    fn execute(&mut self, cmd: SlashCommand, ui: &mut UiState) -> Result<Outcome, String> {
        execute(cmd, self.app, ui)
    }

    fn answer(&mut self, id: &str, decision: Decision) {
        if let Some(p) = &self.port {
            let _ = p.handle().submit(Op::Approval {
                id: id.to_string(),
                decision,
            });
        }
    }

    fn compact(&mut self, session_id: &str, mode: CompactMode) -> Turn {
        let r = self.port(session_id).compact(mode);
        self.turn(session_id, r)
    }

    fn load_history(&mut self, session_id: &str) -> Option<Load> {
        Some(Box::pin(self.app.load_history(session_id)))
    }

    fn todos(&mut self, session_id: &str) -> Vec<TodoItem> {
        self.app.todos(session_id)
    }

    fn attach(&mut self, session_id: &str, path: &Path) -> Result<Attachment, String> {
        self.app.attach_file(session_id, path)
    }

    fn session_choices(&mut self) -> Vec<(String, String)> {
        self.app.session_choices()
    }

    fn list_models(&mut self, profile_id: &str) -> Option<Models> {
        Some(Box::pin(self.app.list_models(profile_id)?))
    }

    fn steer(&mut self, session_id: &str, text: &str) {
        let _ = self.port(session_id).handle().submit(Op::Steer {
            text: text.to_string(),
        });
    }

    fn take_steers(&mut self, session_id: &str) -> Vec<String> {
        self.app.take_steers(session_id)
    }

    fn refresh(&mut self, session_id: &str) -> Option<SessionMeta> {
        self.app.session_meta(session_id)
    }

    fn check_backend(&mut self, profile_id: &str) -> Option<Check> {
        Some(Box::pin(self.app.check_backend(profile_id)?))
    }
}
