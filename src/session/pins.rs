//! Pinned messages: user or assistant messages the user marked to keep
//! verbatim through every compaction.
//!
//! A message exists twice (a display row and a context row, written from
//! the same `StoredMessage`), so a pin names the message, not a row: its
//! creation time, role and length. Both copies carry those unchanged
//! through compaction (`replace_context` rewrites rows with their original
//! `created_at`). Pins live in the session's state table.
use super::{MessageKind, SessionStore, StoreError, StoredMessage};
use crate::llm::Role;
use std::collections::BTreeSet;

const KEY: &str = "pinned_messages";

/// What identifies a message in both buffers.
pub fn key(m: &StoredMessage) -> String {
    format!(
        "{}:{}:{}",
        m.created_at,
        m.msg.role.as_str(),
        m.msg.content.len()
    )
}

/// User and assistant messages with text: what can be pinned.
pub fn pinnable(m: &StoredMessage) -> bool {
    m.kind == MessageKind::Message
        && matches!(m.msg.role, Role::User | Role::Assistant)
        && !m.msg.content.trim().is_empty()
        && m.msg.images.is_empty()
}

/// The pinnable messages of a display buffer, numbered from 1 as `/pin`
/// lists them.
pub fn numbered(display: &[StoredMessage]) -> Vec<(usize, &StoredMessage)> {
    display
        .iter()
        .filter(|m| pinnable(m))
        .enumerate()
        .map(|(i, m)| (i + 1, m))
        .collect()
}

/// The display history with a notice after each pinned message, as the
/// front ends show it (the notice is not stored).
pub fn marked(display: Vec<StoredMessage>, pins: &BTreeSet<String>) -> Vec<StoredMessage> {
    if pins.is_empty() {
        return display;
    }
    let mut out = Vec::with_capacity(display.len() + pins.len());
    for (n, m) in display.into_iter().enumerate() {
        let pinned = pinnable(&m) && pins.contains(&key(&m));
        let at = m.created_at;
        out.push(m);
        if pinned {
            let mut note = StoredMessage::new(
                crate::llm::ChatMessage::system(PINNED_NOTE),
                MessageKind::Notice,
            );
            note.created_at = at;
            note.id = -(n as i64) - 1;
            out.push(note);
        }
    }
    out
}

/// What marks a pinned message in a transcript.
pub const PINNED_NOTE: &str = "📌 pinned: kept verbatim through compaction (/unpin to undo)";

pub fn load(store: &SessionStore, id: &str) -> Result<BTreeSet<String>, StoreError> {
    Ok(store
        .get_state(id, KEY)?
        .and_then(|v| serde_json::from_str(&v).ok())
        .unwrap_or_default())
}

/// Pins or unpins `m`; returns whether anything changed.
pub fn set(
    store: &SessionStore,
    id: &str,
    m: &StoredMessage,
    pinned: bool,
) -> Result<bool, StoreError> {
    let mut pins = load(store, id)?;
    let changed = if pinned {
        pins.insert(key(m))
    } else {
        pins.remove(&key(m))
    };
    if changed {
        let json = serde_json::to_string(&pins).unwrap_or_else(|_| "[]".into());
        store.put_state(id, KEY, &json)?;
    }
    Ok(changed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::ChatMessage;

    #[test]
    fn pins_survive_a_context_rewrite_and_name_both_copies() {
        let store = SessionStore::open_in_memory().unwrap();
        let s = store.create("default").unwrap();
        let u = StoredMessage::new(ChatMessage::user("keep me"), MessageKind::Message);
        store.append_both(&s.id, &u).unwrap();
        let loaded = store.load(&s.id).unwrap().unwrap();
        assert!(set(&store, &s.id, &loaded.display[0], true).unwrap());
        assert!(!set(&store, &s.id, &loaded.display[0], true).unwrap());
        store.replace_context(&s.id, &loaded.context).unwrap();
        let again = store.load(&s.id).unwrap().unwrap();
        let pins = load(&store, &s.id).unwrap();
        assert!(pins.contains(&key(&again.context[0])));
        assert!(pins.contains(&key(&again.display[0])));
        let shown = marked(again.display.clone(), &pins);
        assert_eq!(shown.len(), 2);
        assert_eq!(shown[1].msg.content, PINNED_NOTE);
        assert_eq!(shown[1].kind, MessageKind::Notice);
        assert!(set(&store, &s.id, &again.display[0], false).unwrap());
        assert!(load(&store, &s.id).unwrap().is_empty());
    }
}
