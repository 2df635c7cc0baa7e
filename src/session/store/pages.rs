//! A session's display history a page at a time, so what a command costs
//! follows what it shows, not how long the session is: `navi last` reads
//! back from the end until it meets an answer, a resumed front end reads the
//! tail, `navi sessions show/export` stream the history page by page.
//!
//! Invariants:
//! - a page starts at a user message (or at the first row, or — inside one
//!   turn longer than a page — at a row that is not a tool result), so a
//!   call and its results are never split between pages and replaying the
//!   pages one after another gives what replaying the whole history gives;
//! - each page is read in one read transaction with the deltas of a
//!   streaming answer folded in (in memory: folding for good is the lock
//!   holder's, see [`SessionStore::load`]);
//! - every query walks `messages_by_session` (or `messages_user_turns`) from
//!   a known row: its cost is the page, whatever lies before or after it.
use super::super::deltas::fold_read;
use super::{SessionStore, StoreError, message_from_row, message_select};
use crate::session::StoredMessage;
use rusqlite::{Connection, OptionalExtension, params};

/// Rows per page when streaming a whole history.
pub(crate) const PAGE_ROWS: usize = 500;

/// The display rows of session `id` with `from <= row id < to`.
fn rows_between(
    c: &Connection,
    id: &str,
    from: i64,
    to: i64,
) -> Result<Vec<StoredMessage>, StoreError> {
    let mut st = c.prepare_cached(&format!(
        "SELECT {} FROM messages
         WHERE session_id = ?1 AND buffer = 0 AND id >= ?2 AND id < ?3 ORDER BY id",
        message_select()
    ))?;
    let rows = st
        .query_map(params![id, from, to], message_from_row)?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(rows)
}

/// The first display row at or after `from` (and before `to`) that may
/// start a page: a user message, else (one long turn) any row but a tool
/// result. `None`: no row there.
fn page_start(c: &Connection, id: &str, from: i64, to: i64) -> Result<Option<i64>, StoreError> {
    for sql in [
        "SELECT MIN(id) FROM messages WHERE session_id = ?1 AND buffer = 0 AND role = 'user' AND id >= ?2 AND id < ?3",
        "SELECT MIN(id) FROM messages WHERE session_id = ?1 AND buffer = 0 AND role <> 'tool' AND id >= ?2 AND id < ?3",
    ] {
        let found: Option<i64> = c
            .prepare_cached(sql)?
            .query_row(params![id, from, to], |r| r.get(0))?;
        if found.is_some() {
            return Ok(found);
        }
    }
    Ok(None)
}

impl SessionStore {
    /// The page of display rows that follows row `after` (0: from the
    /// start): about `rows` of them, running on to the next user message.
    /// Empty at the end of the history.
    pub(crate) fn display_page_after(
        &self,
        id: &str,
        after: i64,
        rows: usize,
    ) -> Result<Vec<StoredMessage>, StoreError> {
        self.read(|c| {
            let tx = c.unchecked_transaction()?;
            // The row `rows` on, then the user message that begins the
            // next page from there.
            let ahead: Option<i64> = tx
                .prepare_cached(
                    "SELECT id FROM messages WHERE session_id = ?1 AND buffer = 0 AND id > ?2
                     ORDER BY id LIMIT 1 OFFSET ?3",
                )?
                .query_row(params![id, after, rows.max(1) as i64], |r| r.get(0))
                .optional()?;
            let end = match ahead {
                Some(a) => tx
                    .prepare_cached(
                        "SELECT MIN(id) FROM messages WHERE session_id = ?1 AND buffer = 0
                         AND role = 'user' AND id >= ?2",
                    )?
                    .query_row(params![id, a], |r| r.get::<_, Option<i64>>(0))?
                    .unwrap_or(i64::MAX),
                None => i64::MAX,
            };
            let mut page = rows_between(&tx, id, after.saturating_add(1), end)?;
            fold_read(&tx, id, &mut page)?;
            tx.finish()?;
            Ok(page)
        })
    }

    /// The page of about `rows` display rows that ends before row `before`
    /// (`i64::MAX`: the end of the history), starting at a user message
    /// where the page has one. Empty at the start of the history.
    pub(crate) fn display_page_before(
        &self,
        id: &str,
        before: i64,
        rows: usize,
    ) -> Result<Vec<StoredMessage>, StoreError> {
        self.read(|c| {
            let tx = c.unchecked_transaction()?;
            let back: Option<i64> = tx
                .prepare_cached(
                    "SELECT id FROM messages WHERE session_id = ?1 AND buffer = 0 AND id < ?2
                     ORDER BY id DESC LIMIT 1 OFFSET ?3",
                )?
                .query_row(params![id, before, rows.max(1) as i64 - 1], |r| r.get(0))
                .optional()?;
            let start = match back {
                // Fewer rows than a page: the whole beginning.
                None => 0,
                Some(b) => page_start(&tx, id, b, before)?.unwrap_or(b),
            };
            let mut page = rows_between(&tx, id, start, before)?;
            fold_read(&tx, id, &mut page)?;
            tx.finish()?;
            Ok(page)
        })
    }

    /// The user's messages that are not rewound (the turns `/rewind`
    /// numbers): how many, and the last `last` of them as (number, row).
    pub(crate) fn recent_turns(
        &self,
        id: &str,
        last: usize,
    ) -> Result<(usize, Vec<(usize, StoredMessage)>), StoreError> {
        self.read(|c| {
            let tx = c.unchecked_transaction()?;
            let count: i64 = tx
                .prepare_cached(
                    "SELECT COUNT(*) FROM messages WHERE session_id = ?1 AND buffer = 0
                     AND role = 'user' AND kind = 'message' AND rewound = 0",
                )?
                .query_row([id], |r| r.get(0))?;
            let mut st = tx.prepare_cached(&format!(
                "SELECT {} FROM messages WHERE session_id = ?1 AND buffer = 0
                 AND role = 'user' AND kind = 'message' AND rewound = 0 ORDER BY id DESC LIMIT ?2",
                message_select()
            ))?;
            let mut rows = st
                .query_map(params![id, last as i64], message_from_row)?
                .collect::<Result<Vec<_>, _>>()?;
            drop(st);
            tx.finish()?;
            rows.reverse();
            let count = usize::try_from(count).unwrap_or(0);
            let first = count.saturating_sub(rows.len()) + 1;
            Ok((count, (first..).zip(rows).collect()))
        })
    }

    /// User message (turn) `n`, counted from 1 like `/rewind N`, if any.
    pub(crate) fn turn_row(&self, id: &str, n: usize) -> Result<Option<StoredMessage>, StoreError> {
        if n == 0 {
            return Ok(None);
        }
        self.read(|c| {
            Ok(c.prepare_cached(&format!(
                "SELECT {} FROM messages WHERE session_id = ?1 AND buffer = 0
                 AND role = 'user' AND kind = 'message' AND rewound = 0
                 ORDER BY id LIMIT 1 OFFSET ?2",
                message_select()
            ))?
            .query_row(params![id, n as i64 - 1], message_from_row)
            .optional()?)
        })
    }
}
