//! Context compaction: older turns of the context buffer are replaced by one
//! summary message; the display buffer is never touched.
//!
//! A turn is a user message and everything after it up to the next user
//! message, so a tool call and its results are never split. Summaries from
//! earlier passes are folded into the next one. A failed summary call leaves
//! the context as it was.
use crate::llm::Role;
use crate::session::{MessageKind, StoredMessage};

/// The summariser's input is at most this long, and less on a small window.
pub(crate) const MAX_SUMMARY_INPUT_CHARS: usize = 32_000;
pub(crate) const SUMMARY_HEADING: &str = "Summary of the earlier conversation:";

pub(super) const SUMMARY_PROMPT: &str = "You compress a conversation between a user and an assistant so the assistant can continue without the full text. Write a bullet list of what matters for continuing: the user's goals and preferences, decisions made, facts found (paths, names, versions, numbers, commands that worked or failed), work finished, and what is still open. Keep it short and concrete; no commentary.";

/// Splits the context into (older, recent) keeping the last `keep` turns.
pub(crate) fn partition(
    context: &[StoredMessage],
    keep: usize,
) -> (Vec<StoredMessage>, Vec<StoredMessage>) {
    let starts: Vec<usize> = context
        .iter()
        .enumerate()
        .filter(|(_, m)| {
            m.msg.role == Role::User && m.kind != MessageKind::Summary && !m.msg.has_images()
        })
        .map(|(i, _)| i)
        .collect();
    if starts.len() <= keep {
        return (Vec::new(), context.to_vec());
    }
    let cut = starts[starts.len() - keep.max(1).min(starts.len())];
    let cut = if keep == 0 { context.len() } else { cut };
    (context[..cut].to_vec(), context[cut..].to_vec())
}

fn cut(s: &str, n: usize) -> String {
    let mut t: String = s.chars().take(n).collect();
    if s.chars().count() > n {
        t.push('…');
    }
    t
}

/// Plain-text rendering of messages for the summariser, at most `max_chars`
/// (the most recent part is kept: it matters most for continuing). Without
/// `tool_output` only the names of the tools called are kept — the fallback
/// when the summary request itself does not fit.
pub(crate) fn render_for_summary(
    messages: &[StoredMessage],
    max_chars: usize,
    tool_output: bool,
) -> String {
    let mut out = String::new();
    for m in messages {
        let line = match m.msg.role {
            Role::User if m.kind == MessageKind::Summary => {
                format!("[earlier summary]\n{}", m.msg.text())
            }
            Role::User => format!("User: {}", m.msg.text()),
            Role::Assistant => {
                let mut s = format!("Assistant: {}", m.msg.text());
                for c in m.msg.tool_calls() {
                    s.push_str(&format!(
                        "\n  called {}({})",
                        c.name,
                        cut(&c.arguments.to_string(), 120)
                    ));
                }
                s
            }
            Role::Tool if tool_output => format!(
                "  result of {}: {}",
                m.msg.tool_name().unwrap_or("tool"),
                cut(&m.msg.text(), 300)
            ),
            Role::Tool | Role::System => continue,
        };
        out.push_str(&line);
        out.push('\n');
    }
    if out.len() > max_chars {
        let mut start = out.len() - max_chars;
        while !out.is_char_boundary(start) {
            start += 1;
        }
        out = format!("[…older part omitted…]\n{}", &out[start..]);
    }
    out
}

/// The summary as it will be stored, or `None` when the model's text is not
/// a usable summary (empty, or no letters or digits at all). Reasoning
/// blocks are dropped; a summary longer than `max_chars` is cut on a line
/// (a summary bigger than its budget would defeat the compaction).
pub(crate) fn clean_summary(raw: &str, max_chars: usize) -> Option<String> {
    let mut text = raw.to_string();
    while let (Some(a), Some(b)) = (text.find("<think>"), text.find("</think>")) {
        if b < a {
            break;
        }
        text.replace_range(a..b + "</think>".len(), "");
    }
    let text = text.trim();
    if !text.chars().any(char::is_alphanumeric) {
        return None;
    }
    if text.len() <= max_chars {
        return Some(text.to_string());
    }
    let mut end = max_chars;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let head = &text[..end];
    let head = head.rfind('\n').map_or(head, |i| &head[..i]);
    Some(format!("{}\n[…summary cut to fit…]", head.trim_end()))
}

/// How many recent turns to keep so the context after compaction is at most
/// `target` tokens: starts at `start` and goes down to `min_keep(context)`
/// turns while the target is not met. `cost` gives the tokens of the kept
/// messages; `fixed` is what the request costs besides them (system prompt,
/// tools, the summary's budget). `None` when nothing is old enough to
/// compact at the chosen number.
pub(crate) fn choose_keep(
    context: &[StoredMessage],
    start: usize,
    fixed: u64,
    target: u64,
    cost: impl Fn(&[StoredMessage]) -> u64,
) -> Option<usize> {
    let min = min_keep(context);
    let mut keep = start.max(min);
    loop {
        let (old, recent) = partition(context, keep);
        if keep == min || fixed + cost(&recent) <= target {
            return (!old.is_empty()).then_some(keep);
        }
        keep -= 1;
    }
}

/// The fewest turns a compaction keeps verbatim: the newest turn while it
/// is still going on (a user message waiting for its answer, tool calls
/// waiting for their results), none once it has been answered — so a turn
/// too big for the window (a huge paste) is summarised between turns, by
/// `/compact` and by automatic compaction alike.
pub(crate) fn min_keep(context: &[StoredMessage]) -> usize {
    let answered = context.last().is_some_and(|m| {
        m.msg.role == Role::Assistant && !m.msg.has_tool_calls() && m.kind == MessageKind::Message
    });
    if answered { 0 } else { 1 }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::llm::ChatMessage;

    fn m(role: Role, text: &str) -> StoredMessage {
        let msg = match role {
            Role::User => ChatMessage::user(text),
            _ => ChatMessage::assistant(text),
        };
        StoredMessage::new(msg, MessageKind::Message)
    }

    #[test]
    fn keeps_whole_recent_turns() {
        let ctx = vec![
            m(Role::User, "1"),
            m(Role::Assistant, "a"),
            m(Role::User, "2"),
            m(Role::Assistant, "b"),
            m(Role::User, "3"),
            m(Role::Assistant, "c"),
        ];
        let (old, recent) = partition(&ctx, 2);
        assert_eq!(old.len(), 2);
        assert_eq!(recent[0].msg.text(), "2");
        let (old, recent) = partition(&ctx, 5);
        assert!(old.is_empty() && recent.len() == 6);
    }

    fn turns(n: usize) -> Vec<StoredMessage> {
        let mut out = Vec::new();
        for i in 0..n {
            out.push(m(Role::User, &format!("q{i}")));
            let mut a = ChatMessage::assistant("");
            a.push_tool_call(crate::llm::ToolCall {
                id: format!("c{i}"),
                name: "todo".into(),
                arguments: serde_json::json!({}),
            });
            out.push(StoredMessage::new(a, MessageKind::Message));
            let call = out[out.len() - 1].msg.tool_calls().next().unwrap().clone();
            out.push(StoredMessage::new(
                ChatMessage::tool_result(&call, "x".repeat(400)),
                MessageKind::Message,
            ));
            out.push(m(Role::Assistant, &format!("a{i}")));
        }
        out
    }

    #[test]
    fn keep_goes_down_only_until_the_target_is_met_and_never_splits_a_tool_group() {
        let ctx = turns(6);
        let cost = |m: &[StoredMessage]| m.len() as u64 * 100;
        // Everything fits: keep as asked; with 6 turns and keep 10, nothing old.
        assert_eq!(choose_keep(&ctx, 10, 0, 10_000, cost), None);
        assert_eq!(choose_keep(&ctx, 2, 0, 10_000, cost), Some(2));
        // 4 messages a turn at 100 each: a 900 target leaves two turns.
        assert_eq!(choose_keep(&ctx, 10, 100, 900, cost), Some(2));
        // Nothing fits: the whole answered conversation is summarised; with
        // a question waiting, the newest turn stays.
        assert_eq!(choose_keep(&ctx, 10, 5_000, 900, cost), Some(0));
        let mut waiting = ctx.clone();
        waiting.push(m(Role::User, "next"));
        assert_eq!(choose_keep(&waiting, 10, 5_000, 900, cost), Some(1));
        assert_eq!(partition(&waiting, 1).1.len(), 1);
        for keep in 1..=6 {
            let (old, recent) = partition(&ctx, keep);
            assert_eq!(recent[0].msg.role, Role::User, "keep {keep}");
            assert_eq!(old.len() + recent.len(), ctx.len());
            // Every tool call in `recent` has its result in `recent`.
            for (i, msg) in recent.iter().enumerate() {
                for c in msg.msg.tool_calls() {
                    assert!(
                        recent[i..]
                            .iter()
                            .any(|r| r.msg.tool_call_id() == Some(c.id.as_str()))
                    );
                }
            }
        }
    }

    #[test]
    fn summaries_without_letters_are_refused_and_long_ones_cut() {
        assert_eq!(clean_summary("  \n ", 100), None);
        assert_eq!(clean_summary("```\n```\n---", 100), None);
        assert_eq!(
            clean_summary("<think>hmm</think>\n- a fact", 100),
            Some("- a fact".into())
        );
        let long = "- line one\n".repeat(50);
        let cut = clean_summary(&long, 100).unwrap();
        assert!(
            cut.len() < 140 && cut.ends_with("[…summary cut to fit…]"),
            "{cut}"
        );
        assert!(clean_summary("ünïcödé ".repeat(40).as_str(), 33).is_some());
    }

    #[test]
    fn summary_input_is_capped() {
        let big: Vec<StoredMessage> = (0..500)
            .map(|i| {
                m(
                    Role::User,
                    &format!("message number {i} {}", "x".repeat(50)),
                )
            })
            .collect();
        let s = render_for_summary(&big, 12_000, true);
        assert!(s.len() <= 12_000 + 40);
        assert!(s.contains("message number 499"));
    }
}
