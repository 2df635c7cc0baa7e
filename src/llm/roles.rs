//! Role order every chat template accepts.
//!
//! Many chat templates (Gemma's, Mistral's, community GGUFs) raise an error
//! unless, after one leading system message, user and assistant strictly
//! alternate, with tool results only right after the assistant message that
//! asked for them. The agent's history can break that in a few honest ways:
//! a memory note as a second system message, a compaction summary followed
//! by a pinned user message, a steer typed while tools ran, a stopped turn
//! whose padded results are followed by the next question. Every request is
//! passed through [`normalize`] right before it goes on the wire, so both
//! backends send the same, accepted shape whatever the stored history holds.
//!
//! Rules, applied in one pass:
//! - every system message is folded into one leading system message;
//! - two user messages in a row become one (texts joined by a blank line,
//!   images kept in order);
//! - a user message right after tool results gets a short assistant note
//!   before it (it stays a user message of its own), unless it carries
//!   images (a picture a tool returned);
//! - two assistant messages in a row become one (texts joined, tool calls
//!   kept in order);
//! - a tool result with no assistant tool call before it becomes user text.
//!
//! The pass is deterministic and only looks backwards, so the normalised
//! form of a history is a prefix of the normalised form of that history plus
//! new messages (the server's prompt cache keeps working), except where a
//! new message merges into the last old one.
use super::{ChatMessage, Role};

/// The assistant note put between tool results and a user message that
/// follows them (the agent's own history already has one: see
/// `agent::integrity`).
pub(crate) const CLOSED: &str = "(interrupted before I answered)";

/// `messages` in a role order every chat template accepts (see module docs).
pub(crate) fn normalize(messages: &[ChatMessage]) -> Vec<ChatMessage> {
    let mut system: Option<ChatMessage> = None;
    let mut out: Vec<ChatMessage> = Vec::with_capacity(messages.len());
    for m in messages {
        match m.role {
            Role::System => match &mut system {
                Some(s) => join(s, &m.text()),
                None => system = Some(m.clone()),
            },
            Role::User => push_user(&mut out, m.clone()),
            Role::Assistant => match out.last_mut() {
                Some(prev) if prev.role == Role::Assistant => {
                    join(prev, &m.text());
                    m.tool_calls().for_each(|c| prev.push_tool_call(c.clone()));
                    prev.set_thinking(None);
                }
                _ => out.push(m.clone()),
            },
            Role::Tool => {
                let answers_a_call = out.last().is_some_and(|p| {
                    p.role == Role::Tool || (p.role == Role::Assistant && p.has_tool_calls())
                });
                if answers_a_call {
                    out.push(m.clone());
                } else {
                    let name = m.tool_name().unwrap_or("a tool");
                    let mut u = ChatMessage::user(format!("[result of {name}]\n{}", m.text()));
                    m.images().for_each(|i| u.push_image(i.clone()));
                    push_user(&mut out, u);
                }
            }
        }
    }
    let mut all = Vec::with_capacity(out.len() + 1);
    all.extend(system);
    all.extend(out);
    all
}

/// Earlier tool turns as plain text, for a chat template that renders
/// neither tool calls nor a tool role (Gemma's: llama-server's `/props` says
/// `supports_tools: false`). An assistant message's calls become a line
/// each in its text; a result becomes a user message naming its tool, so
/// after [`normalize`] the history alternates user / assistant and the
/// template renders it instead of refusing the whole session.
pub(crate) fn tools_as_text(messages: &[ChatMessage]) -> Vec<ChatMessage> {
    messages
        .iter()
        .map(|m| match m.role {
            Role::Assistant if m.has_tool_calls() => {
                let mut a = ChatMessage::assistant(m.text());
                for c in m.tool_calls() {
                    join(&mut a, &format!("[called {} with {}]", c.name, c.arguments));
                }
                a
            }
            Role::Tool => {
                let name = m.tool_name().unwrap_or("a tool");
                let mut u = ChatMessage::user(format!("[result of {name}]\n{}", m.text()));
                m.images().for_each(|i| u.push_image(i.clone()));
                u
            }
            _ => m.clone(),
        })
        .collect()
}

fn push_user(out: &mut Vec<ChatMessage>, mut m: ChatMessage) {
    match out.last_mut() {
        Some(prev) if prev.role == Role::User => {
            join(prev, &m.text());
            m.take_images().into_iter().for_each(|i| prev.push_image(i));
        }
        Some(prev) if prev.role == Role::Tool && !m.has_images() => {
            out.push(ChatMessage::assistant(CLOSED));
            out.push(m);
        }
        _ => out.push(m),
    }
}

/// Adds `more` to the text of `into`, after a blank line.
fn join(into: &mut ChatMessage, more: &str) {
    if more.is_empty() {
        return;
    }
    if !into.text().is_empty() {
        into.push_text("\n\n");
    }
    into.push_text(more);
}

/// True when `messages` alternate as [`normalize`] promises: at most one
/// system message, first; no two user or two assistant messages in a row;
/// tool results only after an assistant tool call or another result.
#[cfg(test)]
pub(crate) fn alternates(messages: &[ChatMessage]) -> bool {
    let mut prev: Option<&ChatMessage> = None;
    for (i, m) in messages.iter().enumerate() {
        let ok = match (m.role, prev) {
            (Role::System, _) => i == 0,
            (Role::User, Some(p)) => p.role != Role::User,
            (Role::Assistant, Some(p)) => p.role != Role::Assistant,
            (Role::Tool, Some(p)) => {
                p.role == Role::Tool || (p.role == Role::Assistant && p.has_tool_calls())
            }
            (Role::Tool, None) => false,
            (_, None) => true,
        };
        if !ok {
            return false;
        }
        prev = Some(m);
    }
    true
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::llm::{ImageData, ToolCall};
    use serde_json::json;

    fn call(id: &str) -> ToolCall {
        ToolCall {
            id: id.into(),
            name: "terminal".into(),
            arguments: json!({}),
        }
    }

    fn asst_calls(ids: &[&str]) -> ChatMessage {
        let mut m = ChatMessage::assistant("");
        m.set_tool_calls(ids.iter().map(|i| call(i)).collect());
        m
    }

    #[test]
    fn system_messages_fold_into_the_first() {
        let out = normalize(&[
            ChatMessage::system("persona"),
            ChatMessage::system("memory"),
            ChatMessage::user("hi"),
        ]);
        assert_eq!(out.len(), 2);
        assert_eq!(out[0].text(), "persona\n\nmemory");
        assert!(alternates(&out));
    }

    #[test]
    fn same_roles_in_a_row_merge() {
        let mut img = ChatMessage::user("look");
        img.push_image(ImageData {
            mime: "image/png".into(),
            base64: "AA==".into(),
        });
        let input = vec![
            ChatMessage::system("s"),
            ChatMessage::user("summary of earlier"),
            img,
            ChatMessage::assistant("plan"),
            ChatMessage::assistant("answer"),
            ChatMessage::user("next"),
        ];
        assert!(!alternates(&input));
        let out = normalize(&input);
        assert!(alternates(&out), "{out:?}");
        assert_eq!(out[1].text(), "summary of earlier\n\nlook");
        assert_eq!(out[1].image_count(), 1);
        assert_eq!(out[2].text(), "plan\n\nanswer");
        assert_eq!(out.len(), 4);
    }

    #[test]
    fn a_user_message_after_tool_results_stays_its_own() {
        let c = call("c1");
        let out = normalize(&[
            ChatMessage::system("s"),
            ChatMessage::user("do it"),
            asst_calls(&["c1"]),
            ChatMessage::tool_result(&c, "done"),
            ChatMessage::user("also check the logs"),
            ChatMessage::assistant("ok"),
        ]);
        assert_eq!(out.len(), 7);
        assert_eq!(out[3].text(), "done");
        assert_eq!(out[4].text(), CLOSED);
        assert_eq!(out[5].text(), "also check the logs");
        assert_eq!(out[5].role, Role::User);
    }

    #[test]
    fn orphan_results_become_user_text() {
        let c = call("c9");
        let out = normalize(&[ChatMessage::user("q"), ChatMessage::tool_result(&c, "x")]);
        assert_eq!(out.len(), 1);
        assert!(out[0].text().ends_with("[result of terminal]\nx"));
        assert!(alternates(&out));
    }

    #[test]
    fn an_alternating_history_is_unchanged_and_prefix_stable() {
        let c = call("c1");
        let turn1 = vec![
            ChatMessage::system("s"),
            ChatMessage::user("q"),
            asst_calls(&["c1"]),
            ChatMessage::tool_result(&c, "r"),
        ];
        assert_eq!(normalize(&turn1), turn1);
        let mut turn2 = turn1.clone();
        turn2.push(ChatMessage::assistant("a"));
        turn2.push(ChatMessage::user("q2"));
        let n2 = normalize(&turn2);
        assert_eq!(&n2[..turn1.len()], &turn1[..]);
    }

    #[test]
    fn tool_turns_as_text_alternate_for_a_template_without_tools() {
        let c = call("c1");
        let input = vec![
            ChatMessage::system("s"),
            ChatMessage::user("list files"),
            asst_calls(&["c1"]),
            ChatMessage::tool_result(&c, "a.txt"),
            ChatMessage::assistant(CLOSED),
            ChatMessage::user("hello there"),
        ];
        let out = normalize(&tools_as_text(&input));
        let roles: Vec<&str> = out.iter().map(|m| m.role.as_str()).collect();
        assert_eq!(
            roles,
            ["system", "user", "assistant", "user", "assistant", "user"]
        );
        assert!(out.iter().all(|m| !m.has_tool_calls()));
        assert!(out[2].text().contains("[called terminal with {}]"));
        assert_eq!(out[3].text(), "[result of terminal]\na.txt");
        assert_eq!(out[5].text(), "hello there");
    }
}
