//! What plain mode's Tab completion looks up while navi runs: session ids
//! and the server's model names, from [`crate::app::Lookups`].
//!
//! Invariant: nothing here runs at start-up. The model list is fetched once,
//! on a tokio task, the first time `/model` is completed; until it arrives
//! (or when the server is unreachable) the list is empty.
use super::editor::CompletionSource;
use crate::app::Lookups;

pub(crate) struct Lookup(pub(crate) Lookups);

impl CompletionSource for Lookup {
    fn sessions(&self) -> Vec<(String, String)> {
        self.0.sessions()
    }

    fn models(&self) -> Vec<String> {
        self.0.models()
    }
}
