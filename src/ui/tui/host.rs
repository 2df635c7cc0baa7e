//! What the event loop asks of the application, as a trait, so the loop runs
//! the same against the real `App` and against in-process fakes (tests,
//! benchmarks).
//!
//! Invariants: every run (turn or compaction) is a [`Turn`]: an event
//! receiver that closes when the run ended, and a token that stops it
//! cooperatively. Nothing here blocks on the network; the backend check runs
//! as a future the loop polls after the first frame, and a resumed session's
//! history loads on a blocking thread while the first frame is drawn.
use crate::app::App;
use crate::attach::{Attachment, FilesPolicy};
use crate::llm::ChatMessage;
use crate::protocol::{AgentEvent, EventSink, TodoItem};
use crate::protocol::{CompactMode, Decision, Submission};
use crate::session::SessionMeta;
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
    Pin<Box<dyn Future<Output = Result<Vec<crate::llm::ModelInfo>, String>> + Send>>;

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
    /// Starts a turn with a prepared user message (attachments).
    fn start_turn_message(&mut self, session_id: &str, message: ChatMessage) -> Turn {
        self.start_turn(session_id, &message.content)
    }
}

/// The real application.
pub struct AppHost<'a> {
    pub app: &'a App,
}

impl Host for AppHost<'_> {
    fn start_turn(&mut self, session_id: &str, message: &str) -> Turn {
        let h = self.app.start_turn(session_id, message);
        // The task owns the session; it ends (and closes `events`) on its own.
        drop(h.task);
        Turn {
            events: h.events,
            cancel: h.cancel,
        }
    }

    fn execute(&mut self, cmd: SlashCommand, ui: &mut UiState) -> Result<Outcome, String> {
        execute(cmd, self.app, ui)
    }

    fn answer(&mut self, id: &str, decision: Decision) {
        self.app.submit(
            "",
            Submission::Approval {
                id: id.to_string(),
                decision,
            },
        );
    }

    fn compact(&mut self, session_id: &str, mode: CompactMode) -> Turn {
        let h = self.app.start_compaction(session_id, mode);
        let (sink, events) = EventSink::channel(64);
        tokio::spawn(async move {
            let mut rx = h.events;
            while let Some(ev) = rx.recv().await {
                sink.emit(ev).await;
            }
            match h.task.await {
                Ok(Err(e)) => {
                    sink.emit(AgentEvent::Error {
                        message: format!("compaction failed: {e}"),
                    })
                    .await
                }
                Err(e) => {
                    sink.emit(AgentEvent::Error {
                        message: format!("compaction failed: {e}"),
                    })
                    .await
                }
                Ok(Ok(_)) => {}
            }
        });
        Turn {
            events,
            cancel: h.cancel,
        }
    }

    fn load_history(&mut self, session_id: &str) -> Option<Load> {
        let store = self.app.store.clone();
        let id = session_id.to_string();
        Some(Box::pin(async move {
            let loaded = tokio::task::spawn_blocking(move || {
                crate::session::replay::load_events(&store, &id)
            })
            .await
            .map_err(|e| format!("cannot load the session: {e}"))?;
            match loaded {
                Ok(events) => Ok(events.unwrap_or_default()),
                Err(e) => Err(format!("cannot load the session: {e}")),
            }
        }))
    }

    fn todos(&mut self, session_id: &str) -> Vec<TodoItem> {
        self.app.agent.env.todos.get(session_id)
    }

    fn attach(&mut self, session_id: &str, path: &Path) -> Result<Attachment, String> {
        let policy = FilesPolicy::from_config(&self.app.config, &self.app.paths);
        crate::attach::attach_path(&policy, session_id, path).map_err(|e| e.to_string())
    }

    fn start_turn_message(&mut self, session_id: &str, message: ChatMessage) -> Turn {
        let h = self.app.start_turn_message(session_id, message);
        drop(h.task);
        Turn {
            events: h.events,
            cancel: h.cancel,
        }
    }

    fn session_choices(&mut self) -> Vec<(String, String)> {
        self.app
            .store
            .list()
            .unwrap_or_default()
            .into_iter()
            .map(|s| (s.id.chars().take(8).collect(), s.title))
            .collect()
    }

    fn list_models(&mut self, profile_id: &str) -> Option<Models> {
        let agent = self.app.agent.clone();
        let profile = agent.profile(profile_id).ok()?.clone();
        let task = tokio::task::spawn_blocking(move || agent.backend_for(&profile));
        Some(Box::pin(async move {
            let backend = match task.await {
                Ok(Ok(b)) => b,
                Ok(Err(e)) => return Err(e.to_string()),
                Err(e) => return Err(format!("cannot list the models: {e}")),
            };
            super::model_picker::fetch_models(backend).await
        }))
    }

    fn steer(&mut self, session_id: &str, text: &str) {
        self.app
            .submit(session_id, Submission::Steer(text.to_string()));
    }

    fn take_steers(&mut self, session_id: &str) -> Vec<String> {
        self.app.agent.steers.take(session_id)
    }

    fn refresh(&mut self, session_id: &str) -> Option<SessionMeta> {
        self.app.store.resolve(session_id).ok()
    }

    fn check_backend(&mut self, profile_id: &str) -> Option<Check> {
        let agent = self.app.agent.clone();
        let profile = agent.profile(profile_id).ok()?.clone();
        Some(Box::pin(crate::app::probe::check_backend(agent, profile)))
    }
}
