//! What front ends read from the application besides an open session:
//! stored history, a session's metadata, todo lists, attached files and the
//! server's models. Each returns protocol types or plain strings, so front
//! ends need neither the store nor a backend.
use super::App;
use crate::attach::{Attachment, FilesPolicy};
use crate::llm::LlmBackend;
use crate::protocol::{AgentEvent, ModelInfo, SessionMeta, TodoItem};
pub(crate) use crate::session::pins::{Entry as PinEntry, Target as PinTarget};
use futures_util::future::join_all;
use std::future::Future;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// Most models whose details (`/api/show`) are asked for.
const DETAILS_FOR: usize = 40;

impl App {
    /// The recent part of a stored session's display history as events
    /// (what a resumed front end shows: see [`Self::recent_history`]), read
    /// on a blocking thread (never on a frame).
    pub fn load_history(
        &self,
        session_id: &str,
    ) -> impl Future<Output = Result<Vec<AgentEvent>, String>> + Send + 'static {
        let store = self.store.clone();
        let id = session_id.to_string();
        async move {
            let loaded = tokio::task::spawn_blocking(move || {
                crate::session::replay::tail_events(
                    &store,
                    &id,
                    crate::session::replay::RESUME_ROWS,
                )
            })
            .await
            .map_err(|e| format!("cannot load the session: {e}"))?;
            match loaded {
                Ok(events) => Ok(events.unwrap_or_default()),
                Err(e) => Err(format!("cannot load the session: {e}")),
            }
        }
    }

    /// The tail of a stored session's display history as events, after a
    /// notice of how many earlier messages it leaves out: what resuming or
    /// switching to a session shows, at a cost that does not grow with the
    /// history (an unknown or pending session has none).
    pub fn recent_history(&self, session_id: &str) -> Result<Vec<AgentEvent>, String> {
        crate::session::replay::tail_events(
            &self.store,
            session_id,
            crate::session::replay::RESUME_ROWS,
        )
        .map(Option::unwrap_or_default)
        .map_err(|e| e.to_string())
    }

    /// A stored session's whole display history as events (an unknown or
    /// pending session has none).
    pub fn history(&self, session_id: &str) -> Result<Vec<AgentEvent>, String> {
        crate::session::replay::load_events(&self.store, session_id)
            .map(Option::unwrap_or_default)
            .map_err(|e| e.to_string())
    }

    /// The context window last recorded for a session (0: none yet).
    pub fn stored_window(&self, session_id: &str) -> u64 {
        crate::agent::account::load_window(&self.store, session_id).unwrap_or(0)
    }

    /// The pinnable messages of a session, numbered as `/pin` lists them.
    pub(crate) fn pin_entries(&self, session_id: &str) -> Result<Vec<PinEntry>, String> {
        crate::session::pins::entries(&self.store, session_id).map_err(|e| e.to_string())
    }

    /// Pins or unpins a message: the entry and whether anything changed;
    /// `None` when there is no such message.
    pub(crate) fn set_pin(
        &self,
        session_id: &str,
        target: PinTarget,
        pinned: bool,
    ) -> Result<Option<(PinEntry, bool)>, String> {
        crate::session::pins::set_target(&self.store, session_id, target, pinned)
            .map_err(|e| e.to_string())
    }

    /// `(short id, title)` of every stored session, for completion.
    pub fn session_choices(&self) -> Vec<(String, String)> {
        session_choices(&self.store)
    }

    /// A session's current metadata (a pending one's too).
    pub fn session_meta(&self, session_id: &str) -> Option<SessionMeta> {
        self.store.resolve(session_id).ok()
    }

    /// The session's saved todo list.
    pub fn todos(&self, session_id: &str) -> Vec<TodoItem> {
        self.agent.env.todos.get(session_id)
    }

    /// Reads a file the user attached by the rules of [`crate::attach`].
    pub fn attach_file(&self, session_id: &str, path: &Path) -> Result<Attachment, String> {
        let policy = FilesPolicy::from_config(&self.config, &self.paths);
        crate::attach::attach_path(&policy, session_id, path).map_err(|e| e.to_string())
    }

    /// Steers the ended turn never took in (given back to the composer).
    pub fn take_steers(&self, session_id: &str) -> Vec<String> {
        self.agent.steers.take(session_id)
    }

    /// What the profile's backend serves, with what the server says about
    /// each model; `None` when the profile is unknown.
    pub fn list_models(
        &self,
        profile_id: &str,
    ) -> Option<impl Future<Output = Result<Vec<ModelInfo>, String>> + Send + 'static> {
        let agent = self.agent.clone();
        let profile = agent.profile(profile_id).ok()?.clone();
        let task = tokio::task::spawn_blocking(move || agent.backend_for(&profile));
        Some(async move {
            let backend = match task.await {
                Ok(Ok(b)) => b,
                Ok(Err(e)) => return Err(e.to_string()),
                Err(e) => return Err(format!("cannot list the models: {e}")),
            };
            fetch_models(backend).await
        })
    }
}

/// Completion lists for a line editor: stored session ids with titles, and
/// the names the profile's backend serves (fetched once, in the background,
/// the first time they are asked for; empty until then).
pub struct Lookups {
    store: Arc<crate::session::SessionStore>,
    agent: Arc<crate::agent::Agent>,
    profile: String,
    runtime: tokio::runtime::Handle,
    models: Arc<std::sync::Mutex<Vec<String>>>,
    asked: std::sync::atomic::AtomicBool,
}

impl App {
    /// Completion lists for the profile in use (nothing is read until asked).
    pub fn lookups(&self, profile_id: &str) -> Lookups {
        Lookups {
            store: self.store.clone(),
            agent: self.agent.clone(),
            profile: profile_id.to_string(),
            runtime: tokio::runtime::Handle::current(),
            models: Default::default(),
            asked: Default::default(),
        }
    }
}

impl Lookups {
    /// `(short id, title)` of every stored session.
    pub fn sessions(&self) -> Vec<(String, String)> {
        session_choices(&self.store)
    }

    /// Model names; the first call starts the fetch.
    pub fn models(&self) -> Vec<String> {
        use std::sync::atomic::Ordering;
        if !self.asked.swap(true, Ordering::SeqCst) {
            let (agent, profile, out) = (
                self.agent.clone(),
                self.profile.clone(),
                self.models.clone(),
            );
            self.runtime.spawn(async move {
                let Ok(p) = agent.profile(&profile).cloned() else {
                    return;
                };
                let Ok(backend) = agent.backend_for(&p) else {
                    return;
                };
                if let Ok(list) = backend.list_models().await
                    && let Ok(mut m) = out.lock()
                {
                    *m = list.into_iter().map(|i| i.name).collect();
                }
            });
        }
        self.models.lock().map(|m| m.clone()).unwrap_or_default()
    }
}

/// `(short id, title)` of every stored session, newest first.
fn session_choices(store: &crate::session::SessionStore) -> Vec<(String, String)> {
    store
        .list()
        .unwrap_or_default()
        .into_iter()
        .map(|s| (s.id.chars().take(8).collect(), s.title))
        .collect()
}

/// The server's models with what it says about them.
pub async fn fetch_models(backend: Arc<dyn LlmBackend>) -> Result<Vec<ModelInfo>, String> {
    let list = tokio::time::timeout(Duration::from_secs(10), backend.list_models())
        .await
        .map_err(|_| {
            format!(
                "the backend at {} did not list its models within 10 s",
                backend.base_url()
            )
        })?
        .map_err(|e| e.to_string())?;
    let details = list.iter().take(DETAILS_FOR).map(|m| {
        let b = backend.clone();
        let m = m.clone();
        async move {
            if m.context_length.is_some() || !m.capabilities.is_empty() {
                return m;
            }
            match tokio::time::timeout(Duration::from_secs(5), b.model_info(&m.name)).await {
                Ok(Ok(info)) => ModelInfo {
                    name: m.name,
                    context_length: info.context_length,
                    capabilities: info.capabilities,
                },
                _ => m,
            }
        }
    });
    let mut out = join_all(details).await;
    out.extend(list.into_iter().skip(DETAILS_FOR));
    Ok(out)
}

/// Whether two model names are the same model (with or without a tag).
pub fn same_model(a: &str, b: &str) -> bool {
    crate::llm::select::same_model(a, b)
}
