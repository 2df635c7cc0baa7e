//! The composer's input history on disk: the same file, and the same format,
//! as plain mode's (reedline's `FileBackedHistory`: one entry a line, a
//! newline inside an entry written as `<\n>`), so both modes share it.
//!
//! Invariants: read after the first frame on a blocking thread, never
//! before; each sent line is appended right away (through reedline itself,
//! which locks the file and keeps it at most `HISTORY_SIZE` entries), so a
//! crash loses nothing already sent. A file that cannot be read or written
//! only costs the history.
use reedline::{FileBackedHistory, History, HistoryItem};
use std::path::Path;

/// Entries kept, as in plain mode.
pub(crate) const HISTORY_SIZE: usize = 5000;

/// The entries in the file, oldest first (empty when there is none).
pub(crate) fn load(path: &Path) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Vec::new();
    };
    let mut v: Vec<String> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.replace("<\\n>", "\n"))
        .collect();
    if v.len() > HISTORY_SIZE {
        v.drain(..v.len() - HISTORY_SIZE);
    }
    v
}

/// Appends `entries` to the file.
pub(crate) fn append(path: &Path, entries: &[String]) -> Result<(), String> {
    let mut h = FileBackedHistory::with_file(HISTORY_SIZE, path.to_path_buf())
        .map_err(|e| format!("history {}: {e}", path.display()))?;
    for e in entries {
        h.save(HistoryItem::from_command_line(e.clone()))
            .map_err(|e| format!("history {}: {e}", path.display()))?;
    }
    h.sync()
        .map_err(|e| format!("history {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_keeps_multi_line_entries() {
        let dir = std::env::temp_dir().join(format!("navi-hist-{}", std::process::id()));
        let p = dir.join("history.txt");
        let _ = std::fs::remove_file(&p);
        append(&p, &["one".into(), "two\nlines".into()]).unwrap();
        append(&p, &["three".into()]).unwrap();
        assert_eq!(load(&p), vec!["one", "two\nlines", "three"]);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
