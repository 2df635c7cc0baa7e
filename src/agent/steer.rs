//! Interrupt-and-steer: messages the user sends while a turn runs, folded
//! into that turn at its next safe point instead of waiting for it to end.
//!
//! Invariants:
//! - The safe point is after a complete tool batch (every call has its
//!   result) and before the next model call, so the context stays valid
//!   (no user message between a tool call and its result).
//! - A steer is taken from the inbox exactly once: either the running turn
//!   injects it (persisted as a user message, `user_steer` event emitted),
//!   or the front end takes it back with [`SteerInbox::take`] after the turn
//!   ended without reaching a safe point.
//! - Only the main agent of a session is steered, never a subagent.
use super::AgentError;
use super::turn::Run;
use crate::llm::ChatMessage;
use crate::protocol::AgentEvent;
use crate::session::MessageKind;
use std::collections::HashMap;
use std::sync::Mutex;

/// Steer messages waiting per session id.
#[derive(Debug, Default)]
pub struct SteerInbox {
    waiting: Mutex<HashMap<String, Vec<String>>>,
}

impl SteerInbox {
    /// Queues `text` for the turn running on `session_id`.
    pub fn push(&self, session_id: &str, text: &str) {
        if let Ok(mut m) = self.waiting.lock() {
            m.entry(session_id.to_string())
                .or_default()
                .push(text.to_string());
        }
    }

    /// Takes every waiting steer of `session_id`, oldest first.
    pub fn take(&self, session_id: &str) -> Vec<String> {
        self.waiting
            .lock()
            .ok()
            .and_then(|mut m| m.remove(session_id))
            .unwrap_or_default()
    }
}

impl Run<'_> {
    /// The safe point: injects waiting steers as user messages.
    pub(super) async fn apply_steers(&mut self) -> Result<(), AgentError> {
        if self.is_subagent() {
            return Ok(());
        }
        for text in self.agent.steers.take(&self.conv.session_id) {
            self.conv
                .push(ChatMessage::user(text.clone()), MessageKind::Message, None)?;
            self.emit(AgentEvent::UserSteer { message: text }).await;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn take_drains_one_session_only() {
        let inbox = SteerInbox::default();
        inbox.push("a", "one");
        inbox.push("a", "two");
        inbox.push("b", "other");
        assert_eq!(inbox.take("a"), vec!["one", "two"]);
        assert!(inbox.take("a").is_empty());
        assert_eq!(inbox.take("b"), vec!["other"]);
    }
}
