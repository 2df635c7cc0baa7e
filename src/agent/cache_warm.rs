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
//! - Then, where llama-server saves slots (`--slot-save-path`), the slot is
//!   saved as `navi-<session>.bin`; the first turn of the session in a later
//!   process restores it into a slot the server has not used since it
//!   started (`llm/openai_slots.rs`), so a restarted server reads only the
//!   new message.
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
        let warm = if self.backend.rereads_answers(&self.model).await {
            let mut messages = self.messages(&[]);
            messages.push(ChatMessage::user(""));
            let mut req = self.request(messages, true);
            req.slot = None;
            let _ = store.put_state(&sid, WARMED_KEY, "1");
            Some(req)
        } else {
            if warmed {
                let _ = store.delete_state(&sid, WARMED_KEY);
            }
            None
        };
        let (backend, model, name) = (self.backend.clone(), self.model.clone(), slot_file(&sid));
        crate::llm::server_cache::spawn_check(async move {
            if let Some(req) = warm {
                backend.warm(&req).await;
            }
            // Then the slot holds the whole conversation: kept for a
            // server restart where the server can save it.
            backend.save_slot(&model, &name).await;
        });
    }

    /// The first turn of a session in this process: where the server was
    /// restarted and keeps saved slots, its cache comes back from the file
    /// and this turn's requests go to that slot.
    pub(super) async fn resume_slot(&mut self) {
        if self.is_subagent() || self.conv.context.len() < 2 {
            return;
        }
        let sid = self.state_session();
        let first = RESUMED
            .lock()
            .map(|mut seen| seen.insert(sid.clone()))
            .unwrap_or(false);
        if first {
            self.slot = self
                .backend
                .restore_slot(&self.model, &slot_file(&sid))
                .await;
        }
    }
}

/// Sessions whose saved slot this process already considered.
static RESUMED: std::sync::LazyLock<std::sync::Mutex<std::collections::HashSet<String>>> =
    std::sync::LazyLock::new(Default::default);

/// The file name llama-server keeps a session's slot under.
fn slot_file(session: &str) -> String {
    format!("navi-{session}.bin")
}
