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

/// What identifies a message in both buffers: its creation time, role and
/// the length of its own text. navi's notes added to the context copy (the
/// plan on a planned turn's message, loop notes on a tool result; each
/// starts with a blank line and `[navi] `) do not count, so the display copy
/// and the context copy of a message always share a key.
pub(crate) fn key(m: &StoredMessage) -> String {
    format!(
        "{}:{}:{}",
        m.created_at,
        m.msg.role.as_str(),
        own_text_len(&m.msg.text())
    )
}

/// What starts each note navi appends to a message in the model's copy of
/// the conversation (never the user's words).
pub(crate) const NOTE_PREFIX: &str = "[navi]";

/// The length of `text` without navi's notes appended to it.
fn own_text_len(text: &str) -> usize {
    let marker = format!("\n\n{NOTE_PREFIX} ");
    text.find(&marker).unwrap_or(text.len())
}

/// User and assistant messages with text or images: what can be pinned.
/// A message with an image counts like any other (it is numbered, so the
/// numbers match the transcript, and kept whole, images too, when pinned).
pub(crate) fn pinnable(m: &StoredMessage) -> bool {
    m.kind == MessageKind::Message
        && matches!(m.msg.role, Role::User | Role::Assistant)
        && (!m.msg.text().trim().is_empty() || m.msg.has_images())
        && !m.rewound
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

/// A message `/pin` can name, as the front ends list it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Entry {
    /// Its number in `/pin`'s list, from 1.
    pub(crate) n: usize,
    /// `user` or `assistant`.
    pub(crate) role: &'static str,
    pub(crate) text: String,
    pub(crate) pinned: bool,
}

/// Which message a `/pin` or `/unpin` names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Target {
    /// The latest answer.
    LastAnswer,
    Number(usize),
}

/// The pinnable messages of a session, numbered, with their pin state.
pub(crate) fn entries(store: &SessionStore, id: &str) -> Result<Vec<Entry>, StoreError> {
    let display = store.load(id)?.map(|s| s.display).unwrap_or_default();
    let pins = load(store, id)?;
    Ok(numbered(&display)
        .into_iter()
        .map(|(n, m)| entry(n, m, &pins))
        .collect())
}

fn entry(n: usize, m: &StoredMessage, pins: &BTreeSet<String>) -> Entry {
    Entry {
        n,
        role: m.msg.role.as_str(),
        text: m.msg.text().into_owned(),
        pinned: pins.contains(&key(m)),
    }
}

/// Pins or unpins the message `target` names. `Ok(None)` when there is no
/// such message; otherwise the entry (as it was) and whether anything changed.
pub(crate) fn set_target(
    store: &SessionStore,
    id: &str,
    target: Target,
    pinned: bool,
) -> Result<Option<(Entry, bool)>, StoreError> {
    let display = store.load(id)?.map(|s| s.display).unwrap_or_default();
    let list = numbered(&display);
    let found = match target {
        Target::LastAnswer => list
            .iter()
            .rev()
            .find(|(_, m)| m.msg.role == Role::Assistant),
        Target::Number(n) => list.iter().find(|(i, _)| *i == n),
    };
    let Some(&(n, m)) = found else {
        return Ok(None);
    };
    let before = entry(n, m, &load(store, id)?);
    let changed = set(store, id, m, pinned)?;
    Ok(Some((before, changed)))
}

pub(crate) fn load(store: &SessionStore, id: &str) -> Result<BTreeSet<String>, StoreError> {
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
        let listed = entries(&store, &s.id).unwrap();
        assert_eq!(listed.len(), 1);
        assert!(listed[0].pinned);
        let (e, changed) = set_target(&store, &s.id, Target::Number(1), false)
            .unwrap()
            .unwrap();
        assert!(e.pinned && changed);
        assert!(
            set_target(&store, &s.id, Target::LastAnswer, true)
                .unwrap()
                .is_none()
        );
        assert!(!set(&store, &s.id, &again.display[0], false).unwrap());
        assert!(load(&store, &s.id).unwrap().is_empty());
    }

    #[test]
    fn a_message_with_an_image_is_numbered_like_the_others() {
        let store = SessionStore::open_in_memory().unwrap();
        let s = store.create("default").unwrap();
        let mut with_image = ChatMessage::user("what is in this picture?");
        with_image.push_image(crate::llm::ImageData {
            mime: "image/png".into(),
            base64: "iVBORw0KGgo=".into(),
        });
        let mut only_image = ChatMessage::user("");
        only_image.push_image(crate::llm::ImageData {
            mime: "image/png".into(),
            base64: "iVBORw0KGgo=".into(),
        });
        for m in [
            ChatMessage::user("first"),
            with_image,
            ChatMessage::assistant("a cat"),
            only_image,
            ChatMessage::assistant("a dog"),
        ] {
            store
                .append_both(&s.id, &StoredMessage::new(m, MessageKind::Message))
                .unwrap();
        }
        let listed = entries(&store, &s.id).unwrap();
        let texts: Vec<&str> = listed.iter().map(|e| e.text.as_str()).collect();
        assert_eq!(
            texts,
            ["first", "what is in this picture?", "a cat", "", "a dog"]
        );
        let (e, changed) = set_target(&store, &s.id, Target::Number(3), true)
            .unwrap()
            .unwrap();
        assert_eq!(e.text, "a cat");
        assert!(changed);
        assert!(
            set_target(&store, &s.id, Target::Number(2), true)
                .unwrap()
                .unwrap()
                .1
        );
    }
}
