//! `/rewind`: the conversation goes back to before one of the user's
//! messages. The rows from that message on stay in the display buffer,
//! marked `rewound` (replays show them marked); in the context buffer they
//! are marked too, so the model no longer sees them. Nothing is deleted.
use super::{SessionStore, StoreError, StoredMessage, pins};
use crate::llm::Role;
use rusqlite::params;

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
    #[cfg(test)]
    pub(crate) fn rewind(
        &self,
        lock: &super::SessionLock,
        n: usize,
    ) -> Result<(String, usize), RewindError> {
        let plan = self.rewind_plan(lock, n)?;
        let marked = self.rewind_apply(lock, &plan)?;
        Ok((plan.text, marked))
    }

    /// Finds what a rewind to before user message `n` would mark, changing
    /// nothing: a caller that does more than the conversation (the files of
    /// `/rewind --files`) checks this first, so it never does half a rewind.
    /// Reads the message by its index, the display rows after it and the
    /// context buffer, never the whole history.
    pub(crate) fn rewind_plan(
        &self,
        lock: &super::SessionLock,
        n: usize,
    ) -> Result<RewindPlan, RewindError> {
        let id = lock.session();
        if self.meta(id)?.is_none() {
            return Err(RewindError::NoMessage(0));
        }
        let Some(target) = self.turn_row(id, n)? else {
            return Err(RewindError::NoMessage(self.turn_count(id)?));
        };
        // The same message in the context: by its key, counted from the end
        // (two messages may share a key — same millisecond, role and length
        // — and compaction only ever removes older rows). The key ignores
        // navi's notes on the context copy (a planned turn's plan).
        let key = pins::key(&target);
        let same =
            |m: &&StoredMessage| m.msg.role == Role::User && !m.rewound && pins::key(m) == key;
        let (later, context) = self.read(|c| {
            let mut st = c.prepare_cached(&format!(
                "SELECT {} FROM messages WHERE session_id = ?1 AND buffer = 0 AND role = 'user'
                 AND rewound = 0 AND created_at = ?2 AND id > ?3",
                super::store::message_select()
            ))?;
            let later = st
                .query_map(
                    params![id, target.created_at, target.id],
                    super::store::message_from_row,
                )?
                .collect::<Result<Vec<_>, _>>()?;
            Ok((later, Self::messages(c, id, super::Buffer::Context)?))
        })?;
        let from_end = later.iter().filter(same).count();
        let context_from = context
            .iter()
            .filter(same)
            .rev()
            .nth(from_end)
            .map(|m| m.id)
            .ok_or(RewindError::Compacted)?;
        Ok(RewindPlan {
            text: target.msg.text().into_owned(),
            display_from: target.id,
            context_from,
        })
    }

    /// Marks the rows a [`rewind_plan`](Self::rewind_plan) found, in one
    /// transaction; returns how many display rows were marked.
    pub(crate) fn rewind_apply(
        &self,
        lock: &super::SessionLock,
        plan: &RewindPlan,
    ) -> Result<usize, StoreError> {
        let (sid, display_from, ctx) = (
            lock.session().to_string(),
            plan.display_from,
            plan.context_from,
        );
        self.with(move |c| {
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
        })
    }
}

/// What a rewind marks: from these rows on, in each buffer.
#[derive(Debug)]
pub(crate) struct RewindPlan {
    /// The text of the message rewound to (it goes back to the composer).
    pub(crate) text: String,
    display_from: i64,
    context_from: i64,
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::llm::ChatMessage;
    use crate::session::MessageKind;

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
        assert_eq!(store.turn_count(&s.id).unwrap(), 1);
        let (count, recent) = store.recent_turns(&s.id, 5).unwrap();
        assert_eq!((count, recent.len(), recent[0].0), (1, 1, 1));
        assert_eq!(store.turn_row(&s.id, 1).unwrap().unwrap().msg.text(), "one");
        assert!(store.turn_row(&s.id, 2).unwrap().is_none());
        assert!(matches!(
            store.rewind(&lock, 2),
            Err(RewindError::NoMessage(1))
        ));
    }
}
