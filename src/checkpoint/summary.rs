//! A turn's changes as the `files_changed` event and as one line of text.
//! The event's paths are shown names (see `names`): no control character
//! reaches a terminal through them.
use super::diff::Change;
use crate::protocol::FileChange;

pub(crate) fn to_event(c: &Change) -> FileChange {
    FileChange {
        path: c.shown(),
        status: match c.status {
            'A' => "added",
            'D' => "deleted",
            _ => "changed",
        }
        .to_string(),
        added: c.added,
        removed: c.removed,
        binary: c.binary,
    }
}

/// `+3 -1` (or `binary`) for one file.
fn counts(f: &FileChange) -> String {
    if f.binary {
        "binary".into()
    } else {
        format!("+{} -{}", f.added, f.removed)
    }
}

/// One line per turn: `turn 2 changed 3 files (+12 -4): added a.txt (+3 -0), …`.
pub(crate) fn line(turn: usize, files: &[FileChange]) -> String {
    let (a, r) = files
        .iter()
        .fold((0, 0), |(a, r), f| (a + f.added, r + f.removed));
    let list: Vec<String> = files
        .iter()
        .map(|f| format!("{} {} ({})", f.status, f.path, counts(f)))
        .collect();
    let n = files.len();
    format!(
        "turn {turn} changed {n} file{} (+{a} -{r}): {}",
        if n == 1 { "" } else { "s" },
        list.join(", ")
    )
}

/// The hint after a summary.
pub(crate) const HINT: &str = "/diff shows the changes, /undo restores the files";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_lists_every_file_with_counts() {
        let f = |p: &str, s: &str, a, r, b| FileChange {
            path: p.into(),
            status: s.into(),
            added: a,
            removed: r,
            binary: b,
        };
        let l = line(
            2,
            &[
                f("a.txt", "added", 3, 0, false),
                f("b.bin", "changed", 0, 0, true),
            ],
        );
        assert_eq!(
            l,
            "turn 2 changed 2 files (+3 -0): added a.txt (+3 -0), changed b.bin (binary)"
        );
    }
}
