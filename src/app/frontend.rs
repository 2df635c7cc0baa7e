//! What front ends read from the application besides an open session:
//! stored history, a session's metadata, todo lists, attached files and the
//! server's models. Each returns protocol types or plain strings, so front
//! ends need neither the store nor a backend.
use super::App;
use crate::attach::{Attachment, FilesPolicy};
use crate::llm::LlmBackend;
use crate::protocol::{AgentEvent, ModelInfo, SessionMeta, TodoItem};
use futures_util::future::join_all;
use std::future::Future;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// Most models whose details (`/api/show`) are asked for.
const DETAILS_FOR: usize = 40;

impl App {
    /// A stored session's display history as events, read on a blocking
    /// thread (never on a frame).
    pub fn load_history(
        &self,
        session_id: &str,
    ) -> impl Future<Output = Result<Vec<AgentEvent>, String>> + Send + 'static {
        let store = self.store.clone();
        let id = session_id.to_string();
        async move {
            let loaded = tokio::task::spawn_blocking(move || {
                crate::session::replay::load_events(&store, &id)
            })
            .await
            .map_err(|e| format!("cannot load the session: {e}"))?;
            match loaded {
                Ok(events) => Ok(events.unwrap_or_default()),
                Err(e) => Err(format!("cannot load the session: {e}")),
            }
        }
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
