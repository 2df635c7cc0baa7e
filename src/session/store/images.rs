//! Images a model refused: the context copy of every message that carries
//! images loses them and says so in its text; the display copy keeps them
//! (the transcript still shows what the user attached).
use super::{SessionStore, StoreError};
use rusqlite::params;

/// The note that takes the place of images in the model's copy.
pub(crate) fn not_sent_note(count: usize) -> String {
    if count == 1 {
        "[image not sent: model is text-only]".to_string()
    } else {
        format!("[{count} images not sent: model is text-only]")
    }
}

impl SessionStore {
    /// Strips the images from the session's context buffer, adding
    /// [`not_sent_note`] to each message that had some. Returns how many
    /// messages changed (0: there were no images to send).
    pub(crate) fn drop_context_images(&self, id: &str) -> Result<usize, StoreError> {
        let id = id.to_string();
        self.with(move |c| {
            let tx = c.transaction()?;
            let rows: Vec<(i64, String, String)> = {
                let mut st = tx.prepare(
                    "SELECT id, content, images FROM messages
                     WHERE session_id = ?1 AND buffer = 1 AND images IS NOT NULL AND images != ''",
                )?;
                st.query_map([&id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
                    .collect::<Result<_, _>>()?
            };
            let mut changed = 0;
            for (row, content, images) in rows {
                let count = serde_json::from_str::<Vec<serde_json::Value>>(&images)
                    .map(|v| v.len())
                    .unwrap_or(1);
                if count == 0 {
                    continue;
                }
                let note = not_sent_note(count);
                let text = if content.trim().is_empty() {
                    note
                } else {
                    format!("{content}\n\n{note}")
                };
                tx.execute(
                    "UPDATE messages SET content = ?2, images = NULL WHERE id = ?1",
                    params![row, text],
                )?;
                changed += 1;
            }
            tx.commit()?;
            Ok(changed)
        })
    }
}
