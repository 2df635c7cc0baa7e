//! A stored session's display history, and its replay as events.
//!
//! The store turns its rows into [`HistoryItem`]s; [`replay`] turns those into
//! the [`AgentEvent`]s a live turn would have produced, so a front end renders
//! a resumed session through the same code as a live one.
//!
//! Invariants: every `ToolStarted` of a replay is followed by its `ToolCall`
//! before the next message; a call stored without a result is replayed as
//! failed with [`INTERRUPTED`].

use super::{AgentEvent, ToolDisplay};
use serde_json::Value;
use std::collections::BTreeMap;

/// The result a call that never got one is replayed with.
pub const INTERRUPTED: &str = "interrupted";

/// What marks a pinned message in a transcript.
pub const PINNED_NOTE: &str = "📌 pinned: kept verbatim through compaction (/unpin to undo)";

/// One tool call an answer made.
#[derive(Clone, Debug, PartialEq)]
pub struct CallItem {
    pub id: String,
    pub tool: String,
    pub args: Value,
}

/// One entry of a session's display history.
#[derive(Clone, Debug, PartialEq)]
pub enum HistoryItem {
    User {
        text: String,
        pinned: bool,
        /// How many images went with it.
        images: usize,
    },
    Assistant {
        text: String,
        thinking: Option<String>,
        calls: Vec<CallItem>,
        pinned: bool,
    },
    ToolResult {
        id: String,
        tool: String,
        output: String,
        success: bool,
        /// The typed display data stored with the result, if any.
        display: Option<ToolDisplay>,
    },
    Plan(String),
    Notice(String),
    Error(String),
    /// The summary that replaced older context.
    Summary(String),
}

/// The events that show `items`, in order.
pub fn replay(items: &[HistoryItem]) -> Vec<AgentEvent> {
    let mut out = Vec::with_capacity(items.len() * 2);
    // Calls waiting for their result: id → (tool, args).
    let mut open: BTreeMap<String, (String, Value)> = BTreeMap::new();
    for item in items {
        if !matches!(item, HistoryItem::ToolResult { .. }) {
            close_open(&mut open, &mut out);
        }
        match item {
            HistoryItem::User {
                text,
                pinned,
                images,
            } => out.push(AgentEvent::UserMessage {
                message: text.clone(),
                pinned: *pinned,
                images: *images,
            }),
            HistoryItem::Assistant {
                text,
                thinking,
                calls,
                pinned,
            } => {
                if let Some(t) = thinking.as_ref().filter(|t| !t.trim().is_empty()) {
                    out.push(AgentEvent::TurnThinking {
                        thinking: t.clone(),
                        is_subagent: false,
                        agent: None,
                    });
                }
                if !text.trim().is_empty() || *pinned {
                    out.push(AgentEvent::AgentMessage {
                        content: text.clone(),
                        pinned: *pinned,
                    });
                }
                for c in calls {
                    out.push(AgentEvent::ToolStarted {
                        id: c.id.clone(),
                        tool: c.tool.clone(),
                        args: c.args.clone(),
                        is_subagent: false,
                        agent: None,
                        call: None,
                    });
                    open.insert(c.id.clone(), (c.tool.clone(), c.args.clone()));
                }
            }
            HistoryItem::ToolResult {
                id,
                tool,
                output,
                success,
                display,
            } => {
                let (tool, args) = open
                    .remove(id)
                    .unwrap_or_else(|| (tool.clone(), Value::Null));
                out.push(AgentEvent::ToolCall {
                    id: id.clone(),
                    tool,
                    args,
                    result: output.clone(),
                    success: *success,
                    is_subagent: false,
                    agent: None,
                    display: display.clone(),
                });
            }
            HistoryItem::Plan(plan) => out.push(AgentEvent::PlanReady { plan: plan.clone() }),
            HistoryItem::Notice(m) => out.push(AgentEvent::Notice { message: m.clone() }),
            HistoryItem::Error(m) => out.push(AgentEvent::Error { message: m.clone() }),
            HistoryItem::Summary(s) => out.push(AgentEvent::ContextSummary { summary: s.clone() }),
        }
    }
    close_open(&mut open, &mut out);
    out
}

fn close_open(open: &mut BTreeMap<String, (String, Value)>, out: &mut Vec<AgentEvent>) {
    for (id, (tool, args)) in std::mem::take(open) {
        out.push(AgentEvent::ToolCall {
            id,
            tool,
            args,
            result: INTERRUPTED.into(),
            success: false,
            is_subagent: false,
            agent: None,
            display: None,
        });
    }
}

/// The words between the counts of [`earlier_notice`].
const EARLIER: &str = " earlier message(s) not shown (";
const YOURS: &str = " of them yours); the whole history:";

/// The notice a resumed history's tail starts with: how many messages come
/// before it (`yours`: how many of them are the user's messages `/rewind`
/// counts, so a front end numbers the ones it shows the same way) and where
/// to read them all.
pub fn earlier_notice(earlier: u64, yours: u64, session: &str) -> AgentEvent {
    let short: String = session.chars().take(8).collect();
    AgentEvent::Notice {
        message: format!(
            "{earlier}{EARLIER}{yours}{YOURS} navi sessions show {short} (or /export)"
        ),
    }
}

/// What an [`earlier_notice`] says: (messages, of them the user's). `None`
/// for any other event.
pub fn earlier_count(ev: &AgentEvent) -> Option<(u64, u64)> {
    let AgentEvent::Notice { message } = ev else {
        return None;
    };
    let (all, rest) = message.split_once(EARLIER)?;
    let (yours, _) = rest.split_once(YOURS)?;
    Some((all.parse().ok()?, yours.parse().ok()?))
}

/// The last answer's text in replayed events (empty when there is none).
pub fn last_answer(events: &[AgentEvent]) -> &str {
    events
        .iter()
        .rev()
        .find_map(|e| match e {
            AgentEvent::AgentMessage { content, .. } if !content.trim().is_empty() => {
                Some(content.as_str())
            }
            _ => None,
        })
        .unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call(id: &str) -> CallItem {
        CallItem {
            id: id.into(),
            tool: "terminal".into(),
            args: json!({"command": "ls"}),
        }
    }

    #[test]
    fn a_result_pairs_with_its_call_and_keeps_the_args() {
        let ev = replay(&[
            HistoryItem::Assistant {
                text: String::new(),
                thinking: None,
                calls: vec![call("a")],
                pinned: false,
            },
            HistoryItem::ToolResult {
                id: "a".into(),
                tool: "terminal".into(),
                output: "x".into(),
                success: true,
                display: Some(ToolDisplay::Search {
                    query: "q".into(),
                    hits: 3,
                }),
            },
        ]);
        assert_eq!(ev.len(), 2);
        assert_eq!(ev[0].kind(), "tool_started");
        match &ev[1] {
            AgentEvent::ToolCall {
                args,
                success,
                display,
                ..
            } => {
                assert_eq!(args, &json!({"command": "ls"}));
                assert!(success);
                assert_eq!(
                    display,
                    &Some(ToolDisplay::Search {
                        query: "q".into(),
                        hits: 3
                    })
                );
            }
            e => panic!("{e:?}"),
        }
    }

    #[test]
    fn a_call_without_result_is_closed_as_interrupted_before_the_next_message() {
        let ev = replay(&[
            HistoryItem::Assistant {
                text: "let me look".into(),
                thinking: Some("hm".into()),
                calls: vec![call("a")],
                pinned: false,
            },
            HistoryItem::User {
                text: "next".into(),
                pinned: true,
                images: 0,
            },
        ]);
        let kinds: Vec<&str> = ev.iter().map(AgentEvent::kind).collect();
        assert_eq!(
            kinds,
            [
                "turn_thinking",
                "agent_message",
                "tool_started",
                "tool_call",
                "user_message"
            ]
        );
        assert!(
            matches!(&ev[3], AgentEvent::ToolCall { result, success: false, .. } if result == INTERRUPTED)
        );
        assert_eq!(last_answer(&ev), "let me look");
    }
}
