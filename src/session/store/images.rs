//! Images a model refused: the context copy of every message that carries
//! images loses them and says so in its text; the display copy keeps them
//! (the transcript still shows what the user attached).
use super::{SessionStore, StoreError, rows};

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
            let ids: Vec<i64> = {
                let mut st = tx.prepare(
                    "SELECT id FROM messages
                     WHERE session_id = ?1 AND buffer = 1 AND images IS NOT NULL AND images != ''",
                )?;
                st.query_map([&id], |r| r.get(0))?
                    .collect::<Result<_, _>>()?
            };
            let mut changed = 0;
            for row in ids {
                let Some(mut m) = rows::read_message(&tx, row)? else {
                    continue;
                };
                let count = m.take_images().len();
                if count == 0 {
                    continue;
                }
                let note = not_sent_note(count);
                let text = m.text();
                let text = if text.trim().is_empty() {
                    note
                } else {
                    format!("{text}\n\n{note}")
                };
                m.set_text(text);
                rows::write_message(&tx, row, &m)?;
                changed += 1;
            }
            tx.commit()?;
            Ok(changed)
        })
    }
}
