//! What plain mode's Tab completion looks up while navi runs: session ids
//! from the store and the server's model names.
//!
//! Invariant: nothing here runs at start-up. The model list is fetched once,
//! on a tokio task, the first time `/model` is completed; until it arrives
//! (or when the server is unreachable) the list is empty.
use super::editor::CompletionSource;
use crate::agent::Agent;
use crate::session::SessionStore;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

pub(crate) struct Lookup {
    store: Arc<SessionStore>,
    agent: Arc<Agent>,
    profile: String,
    runtime: tokio::runtime::Handle,
    models: Arc<Mutex<Vec<String>>>,
    asked: AtomicBool,
}

impl Lookup {
    pub(crate) fn new(store: Arc<SessionStore>, agent: Arc<Agent>, profile: String) -> Self {
        Lookup {
            store,
            agent,
            profile,
            runtime: tokio::runtime::Handle::current(),
            models: Arc::new(Mutex::new(Vec::new())),
            asked: AtomicBool::new(false),
        }
    }
}

impl CompletionSource for Lookup {
    fn sessions(&self) -> Vec<(String, String)> {
        self.store
            .list()
            .unwrap_or_default()
            .into_iter()
            .map(|s| (s.id.chars().take(8).collect(), s.title))
            .collect()
    }

    fn models(&self) -> Vec<String> {
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
