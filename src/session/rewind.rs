//! `/rewind`: the conversation goes back to before one of the user's
//! messages. The rows from that message on stay in the display buffer,
//! marked `rewound` (replays show them marked); in the context buffer they
//! are marked too, so the model no longer sees them. Nothing is deleted.
use super::{MessageKind, SessionStore, StoreError, StoredMessage, pins};
use crate::llm::Role;
use rusqlite::params;

/// The user's messages (not rewound), numbered from 1: the turns.
pub(crate) fn turns(display: &[StoredMessage]) -> Vec<(usize, &StoredMessage)> {
    display
        .iter()
        .filter(|m| m.msg.role == Role::User && m.kind == MessageKind::Message && !m.rewound)
        .enumerate()
        .map(|(i, m)| (i + 1, m))
        .collect()
}

/// Why a rewind cannot be done.
#[derive(Debug)]
pub(crate) enum RewindError {
    /// No session, or no message with that number (how many there are).
    NoMessage(usize),
    /// The message was folded into a compaction summary.
    Compacted,
    Store(StoreError),
}

impl From<StoreError> for RewindError {
    fn from(e: StoreError) -> Self {
        RewindError::Store(e)
    }
}

impl SessionStore {
    /// How many user messages (turns) session `id` has that are not
    /// rewound: one query, without reading the display buffer.
    pub(crate) fn turn_count(&self, id: &str) -> Result<usize, StoreError> {
        let id = id.to_string();
        self.read(move |c| {
            let n: i64 = c.query_row(
                "SELECT COUNT(*) FROM messages WHERE session_id = ?1 AND buffer = 0 \
                 AND role = 'user' AND kind = 'message' AND rewound = 0",
                params![id],
                |r| r.get(0),
            )?;
            Ok(usize::try_from(n).unwrap_or(0))
        })
    }

    /// Rewinds the session `lock` holds to before its user message `n`;
    /// returns that message's text and how many display rows were marked.
    pub(crate) fn rewind(
        &self,
        lock: &super::SessionLock,
        n: usize,
    ) -> Result<(String, usize), RewindError> {
        let id = lock.session();
        let session = self.load_held(lock)?.ok_or(RewindError::NoMessage(0))?;
        let list = turns(&session.display);
        let Some((_, target)) = list.iter().find(|(k, _)| *k == n) else {
            return Err(RewindError::NoMessage(list.len()));
        };
        // The same message in the context: by its key, counted from the end
        // (two messages may share a key — same millisecond, role and length
        // — and compaction only ever removes older rows).
        let key = pins::key(target);
        let same =
            |m: &&StoredMessage| m.msg.role == Role::User && !m.rewound && pins::key(m) == key;
        let from_end = session
            .display
            .iter()
            .filter(same)
            .rev()
            .position(|m| m.id == target.id)
            .unwrap_or(0);
        let ctx = session
            .context
            .iter()
            .filter(same)
            .rev()
            .nth(from_end)
            .map(|m| m.id)
            .ok_or(RewindError::Compacted)?;
        let (sid, display_from) = (id.to_string(), target.id);
        let marked = self.with(move |c| {
            let tx = c.transaction()?;
            let n = tx.execute(
                "UPDATE messages SET rewound = 1 WHERE session_id = ?1 AND rewound = 0
                 AND buffer = 0 AND id >= ?2",
                params![sid, display_from],
            )?;
            tx.execute(
                "UPDATE messages SET rewound = 1 WHERE session_id = ?1 AND rewound = 0
                 AND buffer = 1 AND id >= ?2",
                params![sid, ctx],
            )?;
            tx.commit()?;
            Ok(n)
        })?;
        Ok((target.msg.text().into_owned(), marked))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::llm::ChatMessage;

    #[test]
    fn rewind_marks_later_rows_and_keeps_them() {
        let dir = tempfile::tempdir().unwrap();
        let store = SessionStore::open(&dir.path().join("s.db")).unwrap();
        let s = store.create("default").unwrap();
        for (u, a) in [("one", "1"), ("two", "2"), ("three", "3")] {
            let m = StoredMessage::new(ChatMessage::user(u), MessageKind::Message);
            store.append_both(&s.id, &m).unwrap();
            let m = StoredMessage::new(ChatMessage::assistant(a), MessageKind::Message);
            store.append_both(&s.id, &m).unwrap();
        }
        let lock = store.lock(&s.id).unwrap();
        let (text, marked) = store.rewind(&lock, 2).unwrap();
        assert_eq!((text.as_str(), marked), ("two", 4));
        let loaded = store.load(&s.id).unwrap().unwrap();
        assert_eq!(loaded.display.len(), 6, "nothing deleted");
        let ctx: Vec<String> = loaded
            .context
            .iter()
            .map(|m| m.msg.text().into_owned())
            .collect();
        assert_eq!(ctx, ["one", "1"]);
        assert_eq!(turns(&loaded.display).len(), 1);
        assert!(matches!(
            store.rewind(&lock, 2),
            Err(RewindError::NoMessage(1))
        ));
    }
}
