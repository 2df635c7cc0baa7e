//! Checkpoints and rewinding, as front ends ask for them (`/diff`, `/undo`,
//! `/rewind`): results as plain strings and lines.
use super::App;
use crate::checkpoint::{self, Record};
use crate::session::rewind::RewindError;
use std::path::Path;

impl App {
    /// Where navi keeps its data (checkpoint blobs live under it).
    pub fn data_dir(&self) -> &Path {
        &self.paths.data_dir
    }

    /// The session's per-turn file checkpoints.
    pub(crate) fn checkpoints(&self, session: &str) -> Vec<Record> {
        checkpoint::load(&self.store, session)
    }

    /// How many messages of the user's `/rewind N` can go back to, and the
    /// last `last` of them, numbered as `/rewind N` takes them, with their
    /// text (read from an index: the cost does not grow with the history).
    pub fn user_messages(
        &self,
        session: &str,
        last: usize,
    ) -> Result<(usize, Vec<(usize, String)>), String> {
        let (count, rows) = self
            .store
            .recent_turns(session, last)
            .map_err(|e| e.to_string())?;
        Ok((
            count,
            rows.into_iter()
                .map(|(n, m)| (n, m.msg.text().into_owned()))
                .collect(),
        ))
    }

    /// Rewinds the conversation to before user message `n`: that message's
    /// text and how many later entries were marked.
    pub fn rewind(&self, session: &str, n: usize) -> Result<(String, usize), String> {
        self.store.rewind(session, n).map_err(|e| match e {
            RewindError::NoMessage(c) => {
                format!("no message {n}: this session has {c} message(s) of yours")
            }
            RewindError::Compacted => format!(
                "cannot rewind to message {n}: it was summarised by a compaction; rewind to a later message"
            ),
            RewindError::Store(e) => e.to_string(),
        })
    }

    /// `/undo`: restores the files of the last turn that changed any.
    pub fn undo_last(&self, session: &str, force: bool) -> Result<Vec<String>, String> {
        checkpoint::restore::undo_last(&self.store, &self.paths.data_dir, session, force)
    }

    /// Restores the files as they were before turn `n`.
    pub fn undo_from(&self, session: &str, n: usize, force: bool) -> Result<Vec<String>, String> {
        checkpoint::restore::undo_from(&self.store, &self.paths.data_dir, session, n, force)
    }
}
