//! Building what the model sees on every call.
//!
//! The system message is rebuilt for each call: persona, a separator, the
//! profile's prompt. Then the memory summary (when there is one), then the
//! stored context with any system messages stripped. Loop mechanics (budget,
//! goal anchor, stall warning, replan) are navi's notes to the model: from
//! the second call of a turn on they are appended to the last tool result
//! and stored with it (`Run::notes_into_history`), so they are never the
//! user's words and every later request repeats them byte for byte (the
//! server's prompt cache keeps the whole prefix). `notes` here are for side
//! calls only (planner phases, a last call without a tool result to carry
//! them). The role order of what is finally sent is fixed in
//! `llm::roles::normalize`.
use crate::llm::{ChatMessage, Role};
use crate::profile::{Profile, ProfileRegistry};
use crate::session::StoredMessage;

pub(crate) const PERSONA_SEPARATOR: &str = "\n\n---\n\n";
pub(crate) const MEMORY_HEADING: &str = "## What I remember about the user";
pub(crate) use crate::session::pins::NOTE_PREFIX;
pub(crate) const ROSTER_HEADING: &str = "Other profiles (switch_profile / spawn_agent):";
/// A roster line's description is cut (on a word) to about this many chars.
const ROSTER_DESC_CHARS: usize = 44;

fn short(desc: &str) -> String {
    let desc = desc.trim();
    if desc.chars().count() <= ROSTER_DESC_CHARS {
        return desc.to_string();
    }
    let cut: String = desc.chars().take(ROSTER_DESC_CHARS).collect();
    let cut = cut
        .rsplit_once(' ')
        .map(|(a, _)| a)
        .unwrap_or(&cut)
        .trim_end_matches([',', ';', ':']);
    format!("{cut}…")
}

/// persona + separator + profile prompt (persona omitted when empty).
pub(crate) fn system_prompt(persona: &str, profile: &Profile, subagent: bool) -> String {
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

/// The full system prompt: [`system_prompt`] plus the [`profile_roster`].
pub(crate) fn system_prompt_with_roster(
    persona: &str,
    profile: &Profile,
    subagent: bool,
    profiles: &ProfileRegistry,
) -> String {
    let base = system_prompt(persona, profile, subagent);
    match profile_roster(profiles, &profile.id) {
        Some(r) => format!("{base}\n\n{r}"),
        None => base,
    }
}

/// The other profiles, one line each, for cross-profile awareness: appended
/// to every profile's system prompt so the model knows when `switch_profile`
/// or `spawn_agent` with another profile fits. Profiles without a
/// `short_description` are left out; `None` when no other profile has one.
/// Ordered by id, so the prompt stays byte-stable.
pub(crate) fn profile_roster(profiles: &ProfileRegistry, current: &str) -> Option<String> {
    let lines: Vec<String> = profiles
        .all()
        .filter(|p| p.id != current && !p.short_description.trim().is_empty())
        .map(|p| format!("- {}: {}", p.id, short(&p.short_description)))
        .collect();
    if lines.is_empty() {
        return None;
    }
    Some(format!("{ROSTER_HEADING}\n{}", lines.join("\n")))
}

/// The messages of one request.
pub(crate) fn build_messages(
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
    // Every turn closed: see `integrity.rs`.
    out.extend(super::integrity::close_history(context));
    if !notes.is_empty() {
        let text = notes
            .iter()
            .map(|n| format!("{NOTE_PREFIX} {n}"))
            .collect::<Vec<_>>()
            .join("\n");
        match out.last_mut() {
            Some(last) if matches!(last.role, Role::User | Role::Tool) => {
                last.push_text(&format!("\n\n{text}"));
            }
            _ => out.push(ChatMessage::user(text)),
        }
    }
    out
}

/// The text of the latest real user message (the goal of the turn).
pub(crate) fn last_user_goal(context: &[StoredMessage]) -> Option<String> {
    context
        .iter()
        .rev()
        .find(|m| {
            m.msg.role == Role::User
                && m.kind == crate::session::MessageKind::Message
                && !m.msg.has_images()
        })
        .map(|m| {
            // Without navi's own notes (the plan) added to its context copy.
            let c = m.msg.text();
            let end = c.find(&format!("\n\n{NOTE_PREFIX} ")).unwrap_or(c.len());
            c[..end].to_string()
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_built_in_profile_prompt_names_the_others() {
        let reg = ProfileRegistry::load(None);
        let ids = reg.ids();
        assert!(ids.len() > 1);
        for p in reg.all() {
            let prompt = system_prompt_with_roster("PERSONA", p, false, &reg);
            for other in ids.iter().filter(|i| **i != p.id) {
                let line = format!("- {other}: ");
                assert!(prompt.contains(&line), "{} lacks {line}", p.id);
            }
            assert!(
                !prompt.contains(&format!("- {}: ", p.id)),
                "{} lists itself",
                p.id
            );
            let roster = profile_roster(&reg, &p.id).unwrap_or_default();
            assert!(roster.len() < 480, "roster too long: {}", roster.len());
            // Byte-stable: the same inputs give the same prompt.
            assert_eq!(prompt, system_prompt_with_roster("PERSONA", p, false, &reg));
        }
    }
}
