//! After an answer, on a server that loses it from its prompt cache
//! (llama-server with a sliding-window or recurrent model, see
//! `llm/openai_warm.rs`): re-send the conversation in the background so the
//! next message is all the server reads.
//!
//! Invariants:
//! - The first call of a turn after a plain answer is the measurement:
//!   what the server read beyond its cache against the new message
//!   (`TokenTracker::first_reuse`). A turn after a warm call does not
//!   count (the warm call is why the answer was kept).
//! - The warm request is the next turn's request with an empty user
//!   message: same system prompt, tools and history, byte for byte.
//! - Never on the path of a turn: spawned after the answer, waited for a few
//!   seconds at most by a one-shot front end before it exits.
use super::turn::Run;
use crate::llm::ChatMessage;

/// Session state: the last turn ended with a warm call.
const WARMED_KEY: &str = "cache_warmed";

impl Run<'_> {
    /// Notes what this turn's first call showed about the cache, then warms
    /// it for the next turn where the server is known to need it.
    pub(super) async fn after_answer_cache(&self) {
        if self.is_subagent() {
            return;
        }
        let sid = self.state_session();
        let store = &self.agent.store;
        let warmed = store.get_state(&sid, WARMED_KEY).ok().flatten().is_some();
        if let Some(reused) = self.tracker.first_reuse
            && !warmed
        {
            self.backend.note_answer_reuse(&self.model, reused).await;
        }
        if !self.backend.rereads_answers(&self.model).await {
            if warmed {
                let _ = store.delete_state(&sid, WARMED_KEY);
            }
            return;
        }
        let mut messages = self.messages(&[]);
        messages.push(ChatMessage::user(""));
        let req = self.request(messages, true);
        let backend = self.backend.clone();
        crate::llm::server_cache::spawn_check(async move { backend.warm(&req).await });
        let _ = store.put_state(&sid, WARMED_KEY, "1");
    }
}
