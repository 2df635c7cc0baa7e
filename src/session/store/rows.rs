//! How a message is kept in its row.
//!
//! The columns `content`, `thinking`, `tool_calls`, `tool_call_id`,
//! `tool_name` and `images` hold the message's flat form (what releases
//! before content blocks wrote, see [`ChatMessage::to_flat`]); `blocks`
//! holds the whole block list, as JSON, only when the flat form would not
//! give the message back (a thinking signature, an encrypted reasoning
//! payload…). So rows written before `blocks` existed read back unchanged,
//! and SQL that reads `content` (memory extraction, titles) sees the text.
//!
//! Invariants:
//! - Every write of a message's columns goes through [`columns`] (insert)
//!   or [`write_message`] (update): the flat columns and `blocks` never
//!   disagree.
//! - A row whose `blocks` does not parse (a newer navi's block kind) reads
//!   as its flat form: its text, thinking and calls are still there.
use super::StoreError;
use crate::llm::{Block, ChatMessage, FlatMessage, Role};
use rusqlite::{Connection, OptionalExtension, params};

/// The message columns, in the order [`chat_message`] reads them from.
pub(super) const MESSAGE_COLS: &str =
    "role, content, thinking, tool_calls, tool_call_id, tool_name, images, blocks";

/// The message held by the row's [`MESSAGE_COLS`], read from index `at`.
pub(super) fn chat_message(r: &rusqlite::Row<'_>, at: usize) -> rusqlite::Result<ChatMessage> {
    let role: String = r.get(at)?;
    let role = match role.as_str() {
        "system" => Role::System,
        "assistant" => Role::Assistant,
        "tool" => Role::Tool,
        _ => Role::User,
    };
    let json_col = |i: usize| -> rusqlite::Result<Option<String>> { r.get(at + i) };
    let flat = FlatMessage {
        role,
        content: r.get(at + 1)?,
        thinking: r.get(at + 2)?,
        tool_calls: json_col(3)?
            .and_then(|s| serde_json::from_str(&s).ok())
            .unwrap_or_default(),
        tool_call_id: r.get(at + 4)?,
        tool_name: r.get(at + 5)?,
        images: json_col(6)?
            .and_then(|s| serde_json::from_str(&s).ok())
            .unwrap_or_default(),
    };
    let blocks = json_col(7)?.and_then(|s| serde_json::from_str::<Vec<Block>>(&s).ok());
    Ok(ChatMessage::from_parts(flat, blocks))
}

/// The values of a message's columns (all but `role`), as written.
pub(super) struct Columns {
    pub(super) content: String,
    pub(super) thinking: Option<String>,
    pub(super) tool_calls: Option<String>,
    pub(super) tool_call_id: Option<String>,
    pub(super) tool_name: Option<String>,
    pub(super) images: Option<String>,
    pub(super) blocks: Option<String>,
}

pub(super) fn columns(m: &ChatMessage) -> Columns {
    let (flat, blocks) = m.to_flat();
    Columns {
        tool_calls: (!flat.tool_calls.is_empty()).then(|| json(&flat.tool_calls)),
        images: (!flat.images.is_empty()).then(|| json(&flat.images)),
        blocks: blocks.as_deref().map(json),
        content: flat.content,
        thinking: flat.thinking,
        tool_call_id: flat.tool_call_id,
        tool_name: flat.tool_name,
    }
}

/// `v` as JSON text (empty on the failure that cannot happen for these).
fn json<T: serde::Serialize + ?Sized>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

/// Rewrites the message columns of row `row` to hold `m`, and drops the
/// row's pending stream pieces (`m` is the whole message).
pub(crate) fn write_message(c: &Connection, row: i64, m: &ChatMessage) -> Result<(), StoreError> {
    let v = columns(m);
    c.prepare_cached(
        "UPDATE messages SET content = ?2, thinking = ?3, tool_calls = ?4, tool_call_id = ?5,
         tool_name = ?6, images = ?7, blocks = ?8 WHERE id = ?1",
    )?
    .execute(params![
        row,
        v.content,
        v.thinking,
        v.tool_calls,
        v.tool_call_id,
        v.tool_name,
        v.images,
        v.blocks
    ])?;
    c.prepare_cached("DELETE FROM message_deltas WHERE message_id = ?1")?
        .execute([row])?;
    Ok(())
}

/// The message of row `row`, as stored (pending stream pieces not folded).
pub(crate) fn read_message(c: &Connection, row: i64) -> Result<Option<ChatMessage>, StoreError> {
    Ok(c.prepare_cached(&format!(
        "SELECT {MESSAGE_COLS} FROM messages WHERE id = ?1"
    ))?
    .query_row([row], |r| chat_message(r, 0))
    .optional()?)
}

/// Changes the message of each of `rows` with `edit` and writes it back.
pub(crate) fn edit_messages(
    c: &Connection,
    rows: &[i64],
    mut edit: impl FnMut(&mut ChatMessage),
) -> Result<(), StoreError> {
    for &row in rows {
        if let Some(mut m) = read_message(c, row)? {
            edit(&mut m);
            write_message(c, row, &m)?;
        }
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use crate::llm::{ChatMessage, ImageData, Thinking, ToolCall};
    use crate::session::{Buffer, MessageKind, SessionStore, StoredMessage};
    use serde_json::json;

    fn signed_answer() -> ChatMessage {
        let mut m = ChatMessage::assistant("let me look");
        m.set_thinking_blocks(vec![
            Thinking {
                text: "think".into(),
                signature: Some("SIG".into()),
                ..Thinking::default()
            },
            Thinking {
                encrypted: Some("REDACTED".into()),
                ..Thinking::default()
            },
        ]);
        m.push_tool_call(ToolCall {
            id: "t1".into(),
            name: "read".into(),
            arguments: json!({"p": 1}),
        });
        m
    }

    /// The message of one row, read as stored (no crash repair).
    fn row(store: &SessionStore, row: i64) -> ChatMessage {
        store
            .read(|c| super::read_message(c, row))
            .unwrap()
            .unwrap()
    }

    fn row_blocks(store: &SessionStore, row: i64) -> Option<String> {
        store
            .read(|c| {
                Ok(
                    c.query_row("SELECT blocks FROM messages WHERE id = ?1", [row], |r| {
                        r.get(0)
                    })?,
                )
            })
            .unwrap()
    }

    #[test]
    fn a_message_with_signatures_is_stored_and_read_back_whole() {
        let store = SessionStore::open_in_memory().unwrap();
        let s = store.create("p").unwrap();
        let m = signed_answer();
        let (d, x) = store
            .append_both(&s.id, &StoredMessage::new(m.clone(), MessageKind::Message))
            .unwrap();
        assert!(row_blocks(&store, d).is_some() && row_blocks(&store, x).is_some());
        let plain = ChatMessage::user("plain");
        let p = store
            .append(
                &s.id,
                Buffer::Context,
                &StoredMessage::new(plain, MessageKind::Message),
            )
            .unwrap();
        assert_eq!(
            row_blocks(&store, p),
            None,
            "a flat message needs no blocks"
        );
        let loaded = store.load(&s.id).unwrap().unwrap();
        assert_eq!(loaded.display[0].msg, m);
        assert_eq!(loaded.context[0].msg, m);
        // The flat columns still say what the message says (SQL readers).
        let (content, thinking): (String, Option<String>) = store
            .read(|c| {
                Ok(c.query_row(
                    "SELECT content, thinking FROM messages WHERE id = ?1",
                    [d],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )?)
            })
            .unwrap();
        assert_eq!(
            (content.as_str(), thinking.as_deref()),
            ("let me look", Some("think"))
        );
    }

    /// The stream path: a flat first piece, deltas, then the finished
    /// message with its signature; edits afterwards keep the signature.
    #[test]
    fn streamed_then_edited_messages_keep_their_blocks() {
        let store = SessionStore::open_in_memory().unwrap();
        let s = store.create("p").unwrap();
        let mut first = ChatMessage::assistant("");
        first.set_thinking(Some("th".into()));
        let (d, x) = store
            .append_both(&s.id, &StoredMessage::new(first, MessageKind::Message))
            .unwrap();
        store
            .append_delta(d, Some(x), "let me look", "ink")
            .unwrap();
        let m = signed_answer();
        store.finish_stream(&[d, x], &m).unwrap();
        assert_eq!(store.pending_deltas(&s.id).unwrap(), 0);
        assert_eq!(row(&store, x), m);
        // Shortened text, same thinking: the signature stays.
        store.update_content(&[x], "short", Some("think")).unwrap();
        let mut want = m.clone();
        want.set_text("short");
        assert_eq!(row(&store, x), want);
        // New arguments for the call: the thinking blocks stay.
        let call = ToolCall {
            id: "t1".into(),
            name: "read".into(),
            arguments: json!({"p": 2}),
        };
        store
            .set_tool_calls(&[x], std::slice::from_ref(&call))
            .unwrap();
        want.set_tool_calls(vec![call]);
        assert_eq!(row(&store, x), want);
        assert_eq!(row(&store, d), m, "the display copy is untouched");
        // Other thinking text: the blocks become that text alone.
        store.update_content(&[x], "short", Some("other")).unwrap();
        want.set_thinking(Some("other".into()));
        assert_eq!(row(&store, x), want);
    }

    #[test]
    fn refused_images_leave_a_message_with_blocks_intact_otherwise() {
        let store = SessionStore::open_in_memory().unwrap();
        let s = store.create("p").unwrap();
        let mut m = ChatMessage::user("see");
        m.push_image(ImageData {
            mime: "image/png".into(),
            base64: "AAA=".into(),
        });
        m.blocks.insert(
            0,
            crate::llm::Block::Text {
                text: "before ".into(),
            },
        );
        store
            .append_both(&s.id, &StoredMessage::new(m, MessageKind::Message))
            .unwrap();
        assert_eq!(store.drop_context_images(&s.id).unwrap(), 1);
        let loaded = store.load(&s.id).unwrap().unwrap();
        let ctx = &loaded.context[0].msg;
        assert!(!ctx.has_images());
        assert_eq!(
            ctx.text(),
            "before see\n\n[image not sent: model is text-only]"
        );
        assert_eq!(loaded.display[0].msg.image_count(), 1);
    }

    /// Blocks of a kind this build does not know (a newer navi's) read as
    /// the flat form: the text and calls are still there.
    #[test]
    fn unreadable_blocks_fall_back_to_the_flat_columns() {
        let store = SessionStore::open_in_memory().unwrap();
        let s = store.create("p").unwrap();
        let (d, _) = store
            .append_both(
                &s.id,
                &StoredMessage::new(signed_answer(), MessageKind::Message),
            )
            .unwrap();
        store
            .with(move |c| {
                c.execute(
                    "UPDATE messages SET blocks = '[{\"type\":\"hologram\"}]' WHERE id = ?1",
                    [d],
                )?;
                Ok(())
            })
            .unwrap();
        let shown = &store.load(&s.id).unwrap().unwrap().display[0].msg;
        assert_eq!(shown.text(), "let me look");
        assert_eq!(shown.thinking().as_deref(), Some("think"));
        assert_eq!(shown.tool_calls().count(), 1);
    }
}
