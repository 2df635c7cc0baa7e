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
//! - The batch is closed with a short assistant note before the steer, so
//!   the steer reaches the model as a user message (`integrity.rs`).
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
        let steers = self.session.take_steers();
        if !steers.is_empty() {
            // The tool batch is closed first: the steer is a user message
            // of its own, never text folded into a result.
            self.conv.close_turn(super::integrity::STEERED)?;
        }
        for text in steers {
            self.conv
                .push(ChatMessage::user(text.clone()), MessageKind::Message, None)?;
            self.emit(AgentEvent::UserSteer { message: text }).await;
        }
        Ok(())
    }
}
