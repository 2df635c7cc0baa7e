//! What front ends read from the application besides an open session:
//! stored sessions (history, transcript, account) and the server's models.
//! Each returns protocol types or plain strings, so front ends need neither
//! the store nor a backend.
use super::{App, AppError};
use crate::llm::LlmBackend;
use crate::protocol::{AgentEvent, ModelInfo};
use futures_util::future::join_all;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

/// Most models whose details (`/api/show`) are asked for.
const DETAILS_FOR: usize = 40;

/// A stored session as `navi sessions show` and exports print it, read a
/// page at a time (`session::replay::Pages`): memory does not grow with the
/// history, and the pages in turn are the whole.
pub(crate) struct Transcript<'a> {
    pub(crate) meta: crate::protocol::SessionMeta,
    pub(crate) account: super::ContextAccount,
    pages: crate::session::replay::Pages<'a>,
}

/// One page of a transcript: the stored display rows (what `--json`
/// writes) and the events they replay as.
pub(crate) type Page = (Vec<crate::session::StoredMessage>, Vec<AgentEvent>);

impl Transcript<'_> {
    /// The next page; `None` after the last.
    pub(crate) fn next_page(&mut self) -> Result<Option<Page>, AppError> {
        Ok(self.pages.next_page()?)
    }
}

impl App {
    /// A stored session's display history as events (an unknown session has
    /// none). Read as it is stored: the session may be open elsewhere.
    pub fn history(&self, session_id: &str) -> Result<Vec<AgentEvent>, String> {
        crate::session::replay::load_events(&self.store, session_id)
            .map(Option::unwrap_or_default)
            .map_err(|e| e.to_string())
    }

    /// A stored session by id, prefix or list number, with its token
    /// account and its history to read a page at a time (`navi sessions
    /// show`, exports).
    pub(crate) fn transcript(&self, key: &str) -> Result<Transcript<'_>, AppError> {
        let meta = self.store.resolve(key)?;
        let pins = crate::session::pins::load(&self.store, &meta.id)?;
        let account = super::ContextAccount::load(&self.store, &meta.id)?;
        let pages = crate::session::replay::Pages::new(&self.store, &meta.id, pins);
        Ok(Transcript {
            meta,
            account,
            pages,
        })
    }

    /// The last answer of a stored session (by id, prefix or list number),
    /// exactly as stored: read back from the end, so the cost is the last
    /// turns, not the history. The session's id, and its answer (empty when
    /// it has none).
    pub(crate) fn last_answer(&self, key: &str) -> Result<(String, String), AppError> {
        let meta = self.store.resolve(key)?;
        let answer = crate::session::replay::last_answer(&self.store, &meta.id)?;
        Ok((meta.id, answer.unwrap_or_default()))
    }

    /// `(short id, title)` of every stored session, for completion.
    pub fn session_choices(&self) -> Vec<(String, String)> {
        session_choices(&self.store)
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

/// What the configured providers serve (`navi models`).
pub(crate) struct ServerModels {
    pub(crate) kind: &'static str,
    pub(crate) url: String,
    pub(crate) models: Vec<ModelInfo>,
    /// The providers that could not list theirs, and why (keys never in it).
    pub(crate) failed: Vec<(String, String)>,
}

/// The models every provider of `config` serves (asked concurrently), with
/// the context length of each (one request for each that the listing did
/// not carry); the names are kept for completion. Needs no app: a broken
/// persona or profile does not stop it. Fails only when the one provider
/// asked failed.
pub(crate) async fn server_models(
    config: &crate::config::Config,
    data_dir: &std::path::Path,
) -> Result<ServerModels, AppError> {
    let backend =
        crate::llm::build_backend(config).map_err(|e| AppError::Backend(e.to_string()))?;
    let mut models = Vec::new();
    let mut failed = Vec::new();
    for (provider, list) in backend.list_by_provider().await {
        match list {
            Ok(l) => models.extend(l),
            Err(e) => failed.push((provider, e.to_string())),
        }
    }
    if models.is_empty()
        && failed.len() == 1
        && let Some((_, e)) = failed.pop()
    {
        return Err(AppError::Server(e));
    }
    let missing: Vec<usize> = (0..models.len())
        .filter(|i| models[*i].context_length.is_none())
        .collect();
    let infos = join_all(missing.iter().map(|i| backend.model_info(&models[*i].name))).await;
    for (i, info) in missing.into_iter().zip(infos) {
        if let Ok(info) = info {
            models[i].context_length = info.context_length;
            if models[i].capabilities.is_empty() {
                models[i].capabilities = info.capabilities;
            }
        }
    }
    super::model_cache::write(data_dir, &models);
    Ok(ServerModels {
        kind: backend.kind().as_str(),
        url: backend.base_url().to_string(),
        models,
        failed,
    })
}

/// The short ids of the stored sessions, newest first, for shell
/// completion: read without building an app, and nothing is created when
/// there is no database yet.
pub(crate) fn stored_session_ids(paths: &crate::config::Paths) -> Result<Vec<String>, AppError> {
    if !paths.db_path.exists() {
        return Ok(Vec::new());
    }
    let store = crate::session::SessionStore::open(&paths.db_path)?;
    Ok(store
        .list()?
        .iter()
        .map(|s| s.id[..8.min(s.id.len())].to_string())
        .collect())
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
