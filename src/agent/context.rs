//! Building what the model sees on every call.
//!
//! The system message is rebuilt for each call: persona, a separator, the
//! profile's prompt. Then the memory summary (when there is one), then the
//! stored context with any system messages stripped. Loop mechanics (budget,
//! goal anchor, stall warning, replan) are request-only notes: they are
//! appended to the last message of the request, never stored — appending
//! (instead of adding system messages mid-conversation) keeps chat templates
//! that demand alternating roles working and leaves the prompt prefix
//! cacheable.
use crate::llm::{ChatMessage, Role};
use crate::profile::Profile;
use crate::session::StoredMessage;

pub const PERSONA_SEPARATOR: &str = "\n\n---\n\n";
pub const MEMORY_HEADING: &str = "## What I remember about the user";
pub const NOTE_PREFIX: &str = "[navi]";

/// persona + separator + profile prompt (persona omitted when empty).
pub fn system_prompt(persona: &str, profile: &Profile, subagent: bool) -> String {
    let prompt = if subagent && !profile.subagent_system_prompt.is_empty() {
        &profile.subagent_system_prompt
    } else {
        &profile.system_prompt
    };
    if persona.trim().is_empty() {
        prompt.clone()
    } else {
        format!("{}{PERSONA_SEPARATOR}{}", persona.trim(), prompt)
    }
}

/// The messages of one request.
pub fn build_messages(
    system: &str,
    memory_summary: Option<&str>,
    context: &[StoredMessage],
    notes: &[String],
) -> Vec<ChatMessage> {
    let mut out = Vec::with_capacity(context.len() + 2);
    out.push(ChatMessage::system(system));
    if let Some(summary) = memory_summary.filter(|s| !s.trim().is_empty()) {
        out.push(ChatMessage::system(format!(
            "{MEMORY_HEADING}\n\n{}",
            summary.trim()
        )));
    }
    out.extend(
        context
            .iter()
            .filter(|m| m.msg.role != Role::System)
            .map(|m| m.msg.clone()),
    );
    if !notes.is_empty() {
        let text = notes
            .iter()
            .map(|n| format!("{NOTE_PREFIX} {n}"))
            .collect::<Vec<_>>()
            .join("\n");
        match out.last_mut() {
            Some(last) if matches!(last.role, Role::User | Role::Tool) => {
                last.content = format!("{}\n\n{text}", last.content);
            }
            _ => out.push(ChatMessage::user(text)),
        }
    }
    out
}

/// The text of the latest real user message (the goal of the turn).
pub fn last_user_goal(context: &[StoredMessage]) -> Option<String> {
    context
        .iter()
        .rev()
        .find(|m| {
            m.msg.role == Role::User
                && m.kind == crate::session::MessageKind::Message
                && m.msg.images.is_empty()
        })
        .map(|m| m.msg.content.clone())
}
