//! The display data of a file write: what changed, as a unified diff.
//!
//! The old content is read (before the write) only when it is a small
//! regular text file; otherwise the card shows the counts it can know and no
//! diff. Reading goes through [`open_regular`], so a FIFO or device is never
//! opened for reading.
use super::fs_guard::{OpenPolicy, open_regular};
use crate::protocol::{FileWriteDisplay, ToolDisplay};
use similar::{ChangeTag, TextDiff};
use std::io::Read;
use std::path::Path;

/// Files larger than this are not diffed.
const MAX_DIFF_INPUT: u64 = 256 * 1024;
/// A diff longer than this is left out (the counts stay).
const MAX_DIFF_BYTES: usize = 64 * 1024;

/// What the file held before the write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Before {
    /// There was no file.
    Missing,
    Text(String),
    /// Too large, not text, or unreadable: no diff.
    Unknown,
}

/// Reads what `path` holds now, for the diff.
pub(crate) fn before(path: &Path, policy: OpenPolicy) -> Before {
    let meta = match std::fs::symlink_metadata(path).and_then(|_| std::fs::metadata(path)) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Before::Missing,
        Err(_) => return Before::Unknown,
    };
    if !meta.is_file() || meta.len() > MAX_DIFF_INPUT {
        return Before::Unknown;
    }
    let Ok((file, _)) = open_regular(path, policy) else {
        return Before::Unknown;
    };
    let mut buf = Vec::new();
    if file.take(MAX_DIFF_INPUT + 1).read_to_end(&mut buf).is_err() {
        return Before::Unknown;
    }
    match String::from_utf8(buf) {
        Ok(s) if !s.contains('\0') => Before::Text(s),
        _ => Before::Unknown,
    }
}

/// The display data of writing (or appending) `data` to `path`, which held
/// `old` before; `bytes` is the file's size afterwards.
pub(crate) fn display(
    path: &Path,
    old: Before,
    data: &str,
    append: bool,
    bytes: u64,
) -> ToolDisplay {
    let shown = path.display().to_string();
    let mut d = FileWriteDisplay {
        path: shown.clone(),
        created: old == Before::Missing,
        appended: append && old != Before::Missing,
        bytes,
        ..Default::default()
    };
    let (old, new) = match old {
        Before::Missing => (String::new(), data.to_string()),
        Before::Text(t) if append => {
            let new = format!("{t}{data}");
            (t, new)
        }
        Before::Text(t) => (t, data.to_string()),
        Before::Unknown => {
            // Only an append's additions are known.
            if append {
                d.added = data.lines().count() as u64;
            }
            return ToolDisplay::FileWrite(d);
        }
    };
    let diff = TextDiff::from_lines(&old, &new);
    for c in diff.iter_all_changes() {
        match c.tag() {
            ChangeTag::Insert => d.added += 1,
            ChangeTag::Delete => d.removed += 1,
            ChangeTag::Equal => {}
        }
    }
    let from = if d.created {
        "/dev/null".to_string()
    } else {
        format!("a/{shown}")
    };
    let text = diff
        .unified_diff()
        .context_radius(3)
        .header(&from, &format!("b/{shown}"))
        .to_string();
    if !text.is_empty() && text.len() <= MAX_DIFF_BYTES {
        d.diff = Some(text);
    }
    ToolDisplay::FileWrite(d)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn write(d: ToolDisplay) -> FileWriteDisplay {
        match d {
            ToolDisplay::FileWrite(w) => w,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_new_file_is_all_additions() {
        let w = write(display(
            Path::new("/w/a.txt"),
            Before::Missing,
            "one\ntwo\n",
            false,
            8,
        ));
        assert!(w.created && !w.appended);
        assert_eq!((w.added, w.removed, w.bytes), (2, 0, 8));
        let diff = w.diff.unwrap();
        assert!(
            diff.starts_with("--- /dev/null\n+++ b//w/a.txt\n@@"),
            "{diff}"
        );
        assert!(diff.contains("+one\n+two\n"), "{diff}");
    }

    #[test]
    fn a_replacement_and_an_append_diff_against_the_old_text() {
        let old = Before::Text("a\nb\nc\n".into());
        let w = write(display(Path::new("f"), old, "a\nB\nc\n", false, 6));
        assert!(!w.created);
        assert_eq!((w.added, w.removed), (1, 1));
        let diff = w.diff.unwrap();
        assert!(diff.contains("-b\n+B\n"), "{diff}");
        let w = write(display(
            Path::new("f"),
            Before::Text("a\n".into()),
            "z\n",
            true,
            4,
        ));
        assert!(w.appended);
        assert_eq!((w.added, w.removed), (1, 0));
        assert!(w.diff.unwrap().contains("+z\n"));
    }

    #[test]
    fn unknown_old_content_gives_no_diff() {
        let w = write(display(Path::new("f"), Before::Unknown, "x\ny\n", true, 9));
        assert_eq!((w.added, w.removed, w.diff), (2, 0, None));
        let w = write(display(Path::new("f"), Before::Unknown, "x\n", false, 2));
        assert_eq!((w.added, w.diff), (0, None));
        let big = "line\n".repeat(20_000);
        let w = write(display(Path::new("f"), Before::Missing, &big, false, 1));
        assert_eq!((w.added, w.diff), (20_000, None));
    }

    #[test]
    fn before_reads_small_text_files_only() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.txt");
        let policy = OpenPolicy::default();
        assert_eq!(before(&p, policy), Before::Missing);
        std::fs::write(&p, "hi\n").unwrap();
        assert_eq!(before(&p, policy), Before::Text("hi\n".into()));
        std::fs::write(&p, [0u8, 159, 146, 150]).unwrap();
        assert_eq!(before(&p, policy), Before::Unknown);
        assert_eq!(before(dir.path(), policy), Before::Unknown);
    }
}
