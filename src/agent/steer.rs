//! Interrupt-and-steer: messages the user sends while a turn runs, folded
//! into that turn at its next safe point instead of waiting for it to end.
//!
//! Invariants:
//! - The safe point is after a complete tool batch (every call has its
//!   result) and before the next model call, so the context stays valid
//!   (no user message between a tool call and its result).
//! - A steer is taken from the session exactly once: either the running turn
//!   injects it (persisted as a user message, `user_steer` event emitted),
//!   or it goes back to the front end with the turn's end (the turn ended
//!   without reaching a safe point).
//! - Only the main agent of a session is steered, never a subagent.
use super::AgentError;
use super::turn::Run;
use crate::llm::ChatMessage;
use crate::protocol::AgentEvent;
use crate::session::MessageKind;

impl Run<'_> {
    /// The safe point: injects waiting steers as user messages.
    pub(super) async fn apply_steers(&mut self) -> Result<(), AgentError> {
        if self.is_subagent() {
            return Ok(());
        }
        for text in self.session.take_steers() {
            self.conv
                .push(ChatMessage::user(text.clone()), MessageKind::Message, None)?;
            self.emit(AgentEvent::UserSteer { message: text }).await;
        }
        Ok(())
    }
}
