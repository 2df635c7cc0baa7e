//! Closed turns: the shape every request's history keeps, whatever happened
//! to the turns before it.
//!
//! Invariant (issue 31, rule 1): after the system message, user and
//! assistant messages alternate, starting with a user message; tool results
//! follow only the assistant message that asked for them, and the next
//! message after a batch of results is the assistant's (or an image a tool
//! returned, shown to the model as a user message). A turn that ends without
//! an answer — stopped, failed, crashed — is closed with a short assistant
//! note, so the next thing the user types is a user message of its own: it is
//! never glued to the unanswered one, nor folded into a tool result.
//!
//! Two halves:
//! - where a turn ends without an answer (`stopped`, a failure, a steer
//!   arriving after a tool batch) the note is stored in the context buffer
//!   ([`Conversation::close_turn`]), so every later request repeats it byte
//!   for byte (the server's prompt cache keeps the prefix);
//! - [`close_history`], run on every request built from the stored context,
//!   adds the same kind of note wherever a history still lacks one (a crash,
//!   a session written by an older navi). It only looks backwards, so the
//!   request for a history is a prefix of the request for that history plus
//!   new messages.
use super::conversation::Conversation;
use crate::llm::{ChatMessage, Role};
use crate::session::{MessageKind, StoredMessage};

/// The note closing a turn the user stopped.
pub(crate) const STOPPED: &str = "(stopped by the user before I finished)";
/// The note before a message the user sent while tools ran.
pub(crate) const STEERED: &str = "(paused to read a new message from the user)";
/// The note closing a turn that ended with no answer for an unknown reason
/// (a crash, an older navi).
pub(crate) const INTERRUPTED: &str = "(interrupted before I answered)";

/// The note closing a turn that failed with `error`.
pub(crate) fn failed(error: &str) -> String {
    let first = error.lines().next().unwrap_or_default().trim();
    let short: String = first.chars().take(160).collect();
    format!("(no answer: the request failed: {short})")
}

/// True when a history ending with `last` needs a note before the next user
/// message: it ends with the user's message or with tool results.
fn open_after(last: Option<&ChatMessage>) -> bool {
    last.is_some_and(|m| match m.role {
        Role::User | Role::Tool => true,
        Role::Assistant => m.has_tool_calls(),
        Role::System => false,
    })
}

/// The context's messages for a request, with a closing note wherever a user
/// message would otherwise follow another user message or a tool result.
/// System messages are left out (the caller puts the one system message
/// first). A compaction summary may be followed by kept user messages: they
/// are all the user's words, in order, and stay as they are.
pub(crate) fn close_history(context: &[StoredMessage]) -> Vec<ChatMessage> {
    let mut out: Vec<ChatMessage> = Vec::with_capacity(context.len() + 2);
    let mut after_summary = false;
    for m in context.iter().filter(|m| m.msg.role != Role::System) {
        let tool_image = m.msg.role == Role::User
            && m.msg.has_images()
            && out.last().is_some_and(|p| p.role == Role::Tool);
        if m.msg.role == Role::User
            && !tool_image
            && !after_summary
            && open_after(out.last())
            && !out.is_empty()
        {
            out.push(ChatMessage::assistant(INTERRUPTED));
        }
        after_summary = m.kind == MessageKind::Summary
            || (after_summary && m.msg.role == Role::User && m.kind == MessageKind::Message);
        out.push(m.msg.clone());
    }
    out
}

impl Conversation {
    /// Stores `note` as an assistant message in the context (the display
    /// shows its own notice) when the context is open: it ends with the
    /// user's message or a tool batch. Nothing when the turn was answered.
    pub(crate) fn close_turn(&mut self, note: &str) -> Result<(), crate::session::StoreError> {
        let last = self
            .context
            .iter()
            .rev()
            .find(|m| m.msg.role != Role::System)
            .map(|m| &m.msg);
        if !open_after(last) {
            return Ok(());
        }
        self.push_context_only(ChatMessage::assistant(note), MessageKind::Message)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::llm::ToolCall;
    use serde_json::json;

    fn sm(m: ChatMessage) -> StoredMessage {
        StoredMessage::new(m, MessageKind::Message)
    }

    fn roles(ms: &[ChatMessage]) -> Vec<&'static str> {
        ms.iter().map(|m| m.role.as_str()).collect()
    }

    #[test]
    fn an_unanswered_message_is_closed_before_the_next() {
        let out = close_history(&[sm(ChatMessage::user("one")), sm(ChatMessage::user("two"))]);
        assert_eq!(roles(&out), ["user", "assistant", "user"]);
        assert_eq!(out[1].text(), INTERRUPTED);
        assert_eq!(out[2].text(), "two");
    }

    #[test]
    fn a_user_message_after_tool_results_is_its_own() {
        let call = ToolCall {
            id: "c1".into(),
            name: "terminal".into(),
            arguments: json!({}),
        };
        let mut a = ChatMessage::assistant("");
        a.set_tool_calls(vec![call.clone()]);
        let ctx = [
            sm(ChatMessage::user("run it")),
            sm(a),
            sm(ChatMessage::tool_result(&call, "cancelled")),
            sm(ChatMessage::user("hello there")),
        ];
        let out = close_history(&ctx);
        assert_eq!(
            roles(&out),
            ["user", "assistant", "tool", "assistant", "user"]
        );
        assert_eq!(out[4].text(), "hello there");
        // Prefix-stable: the history without the new message is a prefix.
        let before = close_history(&ctx[..3]);
        assert_eq!(&out[..3], &before[..]);
    }

    #[test]
    fn a_summary_and_kept_messages_stay_as_they_are() {
        let ctx = [
            StoredMessage::new(ChatMessage::user("Summary: x"), MessageKind::Summary),
            sm(ChatMessage::user("pinned first message")),
            sm(ChatMessage::assistant("answer")),
            sm(ChatMessage::user("next")),
        ];
        let out = close_history(&ctx);
        assert_eq!(roles(&out), ["user", "user", "assistant", "user"]);
    }
}
