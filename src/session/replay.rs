//! A session's display rows → the protocol's [`HistoryItem`]s and events.
//!
//! This is the only place that knows how rows map to what a front end shows;
//! front ends get [`AgentEvent`]s and never see a row.

use super::{MessageKind, SessionStore, StoreError, StoredMessage, pins};
use crate::llm::Role;
use crate::protocol::{AgentEvent, CallItem, HistoryItem, replay};
use std::collections::BTreeSet;

/// The display rows as history items; `pinned` holds the pin keys.
pub fn items(display: &[StoredMessage], pinned: &BTreeSet<String>) -> Vec<HistoryItem> {
    let is_pinned = |m: &StoredMessage| pins::pinnable(m) && pinned.contains(&pins::key(m));
    display
        .iter()
        .filter_map(|m| {
            let text = m.msg.text().into_owned();
            if m.rewound {
                return rewound(m);
            }
            Some(match (m.kind, m.msg.role) {
                (MessageKind::Error, _) => HistoryItem::Error(text),
                (MessageKind::Notice, _) => match text.strip_prefix("error: ") {
                    // Written by builds before `MessageKind::Error`.
                    Some(e) => HistoryItem::Error(e.to_string()),
                    None => HistoryItem::Notice(text),
                },
                (MessageKind::Plan, _) => HistoryItem::Plan(text),
                (MessageKind::Summary, _) => HistoryItem::Summary(text),
                (_, Role::System) if text.trim().is_empty() => return None,
                (_, Role::System) => HistoryItem::Notice(text),
                (_, Role::User) => HistoryItem::User {
                    text,
                    pinned: is_pinned(m),
                    images: m.msg.image_count(),
                },
                (_, Role::Assistant) => HistoryItem::Assistant {
                    text,
                    thinking: m.msg.thinking().map(Into::into),
                    calls: m
                        .msg
                        .tool_calls()
                        .map(|c| CallItem {
                            id: c.id.clone(),
                            tool: c.name.clone(),
                            args: c.arguments.clone(),
                        })
                        .collect(),
                    pinned: is_pinned(m),
                },
                (_, Role::Tool) => HistoryItem::ToolResult {
                    id: m.msg.tool_call_id().unwrap_or_default().to_string(),
                    tool: m.msg.tool_name().unwrap_or("tool").to_string(),
                    output: text,
                    success: m.success != Some(false),
                    display: m.display.clone(),
                },
            })
        })
        .collect()
}

/// A row left behind by `/rewind`: its text, marked (tool rows are left out).
fn rewound(m: &StoredMessage) -> Option<HistoryItem> {
    let who = match m.msg.role {
        Role::User => "you",
        Role::Assistant => "navi",
        _ => return None,
    };
    let text = m
        .msg
        .text()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    if m.kind != MessageKind::Message || text.is_empty() {
        return None;
    }
    let short: String = text.chars().take(120).collect();
    let more = if short.len() < text.len() { "…" } else { "" };
    Some(HistoryItem::Notice(format!(
        "[rewound] {who}: {short}{more}"
    )))
}

/// The display rows replayed as events.
pub fn events(display: &[StoredMessage], pinned: &BTreeSet<String>) -> Vec<AgentEvent> {
    replay(&items(display, pinned))
}

/// A stored session's display history as events; `Ok(None)` when there is no
/// such session.
pub fn load_events(store: &SessionStore, id: &str) -> Result<Option<Vec<AgentEvent>>, StoreError> {
    let Some(session) = store.load(id)? else {
        return Ok(None);
    };
    let pinned = pins::load(store, id)?;
    Ok(Some(events(&session.display, &pinned)))
}

/// [`load_events`] for the session's writer: a crash's leftovers are
/// repaired first (see [`SessionStore::load_held`]).
pub(crate) fn held_events(
    store: &SessionStore,
    lock: &crate::session::SessionLock,
) -> Result<Option<Vec<AgentEvent>>, StoreError> {
    let Some(session) = store.load_held(lock)? else {
        return Ok(None);
    };
    let pinned = pins::load(store, lock.session())?;
    Ok(Some(events(&session.display, &pinned)))
}
