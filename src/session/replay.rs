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

/// Display rows a resumed front end shows at first: the tail of the
/// history (from a user message on), whatever its length.
pub const RESUME_ROWS: usize = 300;

pub use crate::protocol::earlier_count;

/// The last answer of a stored session (what `navi last` prints): read back
/// from the end a page at a time until one has an answer. Empty when there
/// is none; `Ok(None)` when there is no such session.
pub fn last_answer(store: &SessionStore, id: &str) -> Result<Option<String>, StoreError> {
    if store.meta(id)?.is_none() {
        return Ok(None);
    }
    let mut before = i64::MAX;
    loop {
        let page = store.display_page_before(id, before, 64)?;
        let Some(first) = page.first() else {
            return Ok(Some(String::new()));
        };
        before = first.id;
        let events = events(&page, &BTreeSet::new());
        let answer = crate::protocol::last_answer(&events);
        if !answer.is_empty() {
            return Ok(Some(answer.to_string()));
        }
    }
}

/// The tail of a stored session's display history as events (about
/// `rows` rows, from a user message on), preceded by a notice saying how
/// many earlier messages are not shown and where to see them. `Ok(None)`
/// when there is no such session.
pub fn tail_events(
    store: &SessionStore,
    id: &str,
    rows: usize,
) -> Result<Option<Vec<AgentEvent>>, StoreError> {
    let Some(meta) = store.meta(id)? else {
        return Ok(None);
    };
    let page = store.display_page_before(id, i64::MAX, rows)?;
    let pinned = pins::load(store, id)?;
    let earlier = meta.message_count.saturating_sub(page.len() as u64);
    let mut out = Vec::new();
    if earlier > 0 {
        // The user's messages before the tail, so a front end numbers the
        // ones it shows as `/rewind N` does.
        let shown = page
            .iter()
            .filter(|m| m.msg.role == Role::User && m.kind == MessageKind::Message && !m.rewound)
            .count();
        let yours = store.turn_count(id)?.saturating_sub(shown);
        out.push(crate::protocol::earlier_notice(earlier, yours as u64, id));
    }
    out.extend(events(&page, &pinned));
    Ok(Some(out))
}

/// The whole display history, a page at a time, as rows and as events:
/// replaying the pages in turn is replaying the whole (see
/// `store/pages.rs`), and memory stays at one page whatever the history.
pub struct Pages<'a> {
    store: &'a SessionStore,
    id: String,
    pinned: BTreeSet<String>,
    after: i64,
}

impl<'a> Pages<'a> {
    pub fn new(store: &'a SessionStore, id: &str, pinned: BTreeSet<String>) -> Self {
        Pages {
            store,
            id: id.to_string(),
            pinned,
            after: 0,
        }
    }

    /// The next page; `None` after the last.
    #[allow(clippy::type_complexity)]
    pub fn next_page(
        &mut self,
    ) -> Result<Option<(Vec<StoredMessage>, Vec<AgentEvent>)>, StoreError> {
        let page = self.store.display_page_after(
            &self.id,
            self.after,
            crate::session::store::PAGE_ROWS,
        )?;
        let Some(last) = page.last() else {
            return Ok(None);
        };
        self.after = last.id;
        let events = events(&page, &self.pinned);
        Ok(Some((page, events)))
    }
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
