//! Streaming text as appended deltas.
//!
//! A streaming answer is written once as a message row in each buffer (its
//! first piece), then each later piece is appended as a `message_deltas` row
//! (the text added since the last write) instead of rewriting the whole
//! growing answer, so a long answer costs O(n) bytes, not O(n²). At the end
//! of the call [`SessionStore::finish_stream`] writes the final content and
//! deletes the deltas in one transaction.
//!
//! Invariants:
//! - a message's text is its row's content followed by its deltas in `seq`
//!   order; every read of the buffers folds them in (one read transaction,
//!   so a fold in between cannot be seen twice or not at all);
//! - deltas left by a process that died mid-stream are folded into the rows
//!   for good only by the session's lock holder (on load), like crash repair;
//! - a delta row names the display row (`message_id`) and the context row
//!   (`context_id`) of the same message; both get the text.
use super::store::rows::{edit_messages, write_message};
use super::store::{SessionStore, StoreError};
use super::{Buffer, StoredMessage};
use crate::llm::ChatMessage;
use rusqlite::{Connection, params};
use std::collections::HashMap;

/// One delta: (display row, context row, content, thinking).
type Delta = (i64, Option<i64>, String, String);

/// What [`SessionStore::load_for_turn`] reads.
pub(crate) struct TurnSession {
    pub(crate) meta: super::SessionMeta,
    pub(crate) context: Vec<StoredMessage>,
    /// The display buffer holds a user message (the session was used).
    pub(crate) has_user_message: bool,
}

/// Both buffers of a session, and whether deltas were folded into them.
pub(super) struct Buffers {
    pub(crate) display: Vec<StoredMessage>,
    pub(crate) context: Vec<StoredMessage>,
    pub(crate) had_deltas: bool,
}

// `CROSS JOIN` keeps the (small, unindexed) delta table the outer loop; each
// delta finds its message by primary key.
fn session_deltas(c: &Connection, id: &str) -> Result<Vec<Delta>, StoreError> {
    let mut st = c.prepare_cached(
        "SELECT d.message_id, d.context_id, d.content, d.thinking
         FROM message_deltas d CROSS JOIN messages m ON m.id = d.message_id
         WHERE m.session_id = ?1 ORDER BY d.seq",
    )?;
    let rows = st
        .query_map([id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(rows)
}

/// The text each row gains from `deltas`: row id → (content, thinking).
fn gains(deltas: Vec<Delta>) -> HashMap<i64, (String, String)> {
    let mut out: HashMap<i64, (String, String)> = HashMap::new();
    for (display, context, content, thinking) in deltas {
        for row in std::iter::once(display).chain(context) {
            let g = out.entry(row).or_default();
            g.0.push_str(&content);
            g.1.push_str(&thinking);
        }
    }
    out
}

/// `msg` with a stream's pieces added: `content` to its text, `thinking`
/// to its reasoning.
fn gain(msg: &mut ChatMessage, content: &str, thinking: &str) {
    msg.push_text(content);
    if !thinking.is_empty() {
        msg.push_thinking(thinking);
    }
}

fn apply(messages: &mut [StoredMessage], gains: &HashMap<i64, (String, String)>) {
    for m in messages.iter_mut() {
        if let Some((content, thinking)) = gains.get(&m.id) {
            gain(&mut m.msg, content, thinking);
        }
    }
}

impl SessionStore {
    /// Both buffers of a session with any pending deltas folded in, read in
    /// one transaction.
    pub(super) fn read_buffers(&self, id: &str) -> Result<Buffers, StoreError> {
        self.read(|c| {
            let tx = c.unchecked_transaction()?;
            let mut display = Self::messages(&tx, id, Buffer::Display)?;
            let mut context = Self::messages(&tx, id, Buffer::Context)?;
            let deltas = session_deltas(&tx, id)?;
            tx.finish()?;
            let had_deltas = !deltas.is_empty();
            if had_deltas {
                let g = gains(deltas);
                apply(&mut display, &g);
                apply(&mut context, &g);
            }
            Ok(Buffers {
                display,
                context,
                had_deltas,
            })
        })
    }

    /// What a turn needs of a stored session: its meta, the context buffer
    /// (deltas folded in and crash-repaired as [`SessionStore::load`] does
    /// for the lock holder) and whether a user message was ever sent. The
    /// display buffer, which grows with the whole history, is not read, so
    /// a continued `navi run -c` costs what its context costs.
    pub(crate) fn load_for_turn(
        &self,
        lock: &super::lock::SessionLock,
    ) -> Result<Option<TurnSession>, StoreError> {
        let id = lock.session();
        let Some(meta) = self.meta(id)? else {
            return Ok(None);
        };
        let (context, has_user_message, had_deltas) = self.read(|c| {
            let tx = c.unchecked_transaction()?;
            let mut context = Self::messages(&tx, id, Buffer::Context)?;
            let has_user: bool = tx.query_row(
                "SELECT EXISTS(SELECT 1 FROM messages WHERE session_id = ?1 AND buffer = ?2 AND role = 'user')",
                params![id, Buffer::Display.code()],
                |r| r.get(0),
            )?;
            let deltas = session_deltas(&tx, id)?;
            tx.finish()?;
            let had = !deltas.is_empty();
            if had {
                apply(&mut context, &gains(deltas));
            }
            Ok((context, has_user, had))
        })?;
        // Left-over deltas or a call without its result (a crash): the rare
        // case, repaired in both buffers by the full load.
        if had_deltas || super::repair_unpaired(&mut context.clone()) {
            return Ok(self.load_held(lock)?.map(|s| TurnSession {
                has_user_message: s
                    .display
                    .iter()
                    .any(|m| m.msg.role == crate::llm::Role::User),
                meta: s.meta,
                context: s.context,
            }));
        }
        Ok(Some(TurnSession {
            meta,
            context,
            has_user_message,
        }))
    }

    /// Writes the deltas of a session into its message rows and deletes them
    /// (one transaction). Only for the session's lock holder.
    pub(super) fn fold_deltas(&self, id: &str) -> Result<(), StoreError> {
        let id = id.to_string();
        self.with(move |c| {
            let tx = c.transaction()?;
            let deltas = session_deltas(&tx, &id)?;
            if deltas.is_empty() {
                return Ok(());
            }
            let displays: Vec<i64> = deltas.iter().map(|d| d.0).collect();
            for (row, (content, thinking)) in gains(deltas) {
                edit_messages(&tx, &[row], |m| gain(m, &content, &thinking))?;
            }
            for row in displays {
                tx.prepare_cached("DELETE FROM message_deltas WHERE message_id = ?1")?
                    .execute([row])?;
            }
            tx.commit()?;
            Ok(())
        })
    }

    /// Updates the text of an already-written message (e.g. a stopped
    /// answer's partial text written while streaming); its pending deltas
    /// are dropped, the new content replaces what they added. Thinking
    /// blocks stay as they are (signatures included) when `thinking` is
    /// their text; otherwise they become `thinking` alone.
    pub(crate) fn update_content(
        &self,
        rows: &[i64],
        content: &str,
        thinking: Option<&str>,
    ) -> Result<(), StoreError> {
        let (rows, content, thinking) = (
            rows.to_vec(),
            content.to_string(),
            thinking.map(String::from),
        );
        self.with(move |c| {
            let tx = c.transaction()?;
            edit_messages(&tx, &rows, |m| {
                m.set_text(content.as_str());
                if m.thinking().as_deref() != thinking.as_deref() {
                    m.set_thinking(thinking.clone());
                }
            })?;
            tx.commit()?;
            Ok(())
        })
    }

    /// Sets the tool calls of already-written assistant rows.
    pub(crate) fn set_tool_calls(
        &self,
        rows: &[i64],
        calls: &[crate::llm::ToolCall],
    ) -> Result<(), StoreError> {
        let (rows, calls) = (rows.to_vec(), calls.to_vec());
        self.with(move |c| {
            let tx = c.transaction()?;
            edit_messages(&tx, &rows, |m| m.set_tool_calls(calls.clone()))?;
            tx.commit()?;
            Ok(())
        })
    }

    /// Appends streamed text to a message written earlier in both buffers
    /// (`display` and `context` are its two rows): what was added to its
    /// content and to its thinking since the last write. Durable on return.
    pub async fn append_delta_async(
        &self,
        display: i64,
        context: Option<i64>,
        content: &str,
        thinking: &str,
    ) -> Result<(), StoreError> {
        let (content, thinking) = (content.to_string(), thinking.to_string());
        self.with_async(move |c| insert_delta(c, display, context, &content, &thinking))
            .await
    }

    /// [`append_delta_async`](Self::append_delta_async) for sync callers.
    pub fn append_delta(
        &self,
        display: i64,
        context: Option<i64>,
        content: &str,
        thinking: &str,
    ) -> Result<(), StoreError> {
        let (content, thinking) = (content.to_string(), thinking.to_string());
        self.with(move |c| insert_delta(c, display, context, &content, &thinking))
    }

    /// Ends a streamed message: its rows get the final message (text,
    /// thinking blocks, tool calls), and its deltas are deleted, in one
    /// transaction.
    pub(crate) async fn finish_stream_async(
        &self,
        rows: &[i64],
        msg: &ChatMessage,
    ) -> Result<(), StoreError> {
        let (rows, msg) = (rows.to_vec(), msg.clone());
        self.with_async(move |c| finish(c, &rows, &msg)).await
    }

    /// [`finish_stream_async`](Self::finish_stream_async) for sync callers.
    pub fn finish_stream(&self, rows: &[i64], msg: &ChatMessage) -> Result<(), StoreError> {
        let (rows, msg) = (rows.to_vec(), msg.clone());
        self.with(move |c| finish(c, &rows, &msg))
    }

    /// How many delta rows the session has (tests, diagnostics).
    pub fn pending_deltas(&self, id: &str) -> Result<usize, StoreError> {
        self.read(|c| Ok(session_deltas(c, id)?.len()))
    }
}

fn insert_delta(
    c: &mut Connection,
    display: i64,
    context: Option<i64>,
    content: &str,
    thinking: &str,
) -> Result<(), StoreError> {
    c.prepare_cached(
        "INSERT INTO message_deltas (message_id, context_id, content, thinking) VALUES (?1, ?2, ?3, ?4)",
    )?
    .execute(params![display, context, content, thinking])?;
    Ok(())
}

fn finish(c: &mut Connection, rows: &[i64], msg: &ChatMessage) -> Result<(), StoreError> {
    let tx = c.transaction()?;
    for &row in rows {
        write_message(&tx, row, msg)?;
    }
    tx.commit()?;
    Ok(())
}
