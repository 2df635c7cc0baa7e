//! Filling a call's [`CallInfo`]: path helpers the tools' `describe` use,
//! and the one place that reads an edited file's text before the call
//! (`load_old_text`), so the approval overlay, ACP's diff and `--json` all
//! show the same before/after pair.
//!
//! Invariants: the file is only read, never touched; at most `MAX_READ`
//! bytes; a directory, a binary or an over-large file gets a `note` instead
//! of an `old_text`, so no front end shows a whole file as new when it is
//! not.
use crate::protocol::{CallInfo, FileEdit};
use std::path::{Component, Path, PathBuf};

/// Files larger than this are not read for a diff.
pub(crate) const MAX_READ: u64 = 2 * 1024 * 1024;

/// What an edit's note says on a replay: the old text is not kept.
pub(crate) const NOT_KEPT: &str = "the file's earlier text is not kept";

/// `raw` as an absolute path against `base` (`~` expanded, `.` and `..`
/// folded by name, symlinks not followed), as a string.
pub(crate) fn abs(raw: &str, base: &Path) -> String {
    let joined = super::paths::absolute(raw, base);
    let mut out = PathBuf::new();
    for c in joined.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out.to_string_lossy().into_owned()
}

/// A write (or append) of `content` to `path` (absolute), before the old
/// text is read: `new_text` is what the call writes.
pub(crate) fn edit(path: String, content: &str, append: bool) -> FileEdit {
    FileEdit {
        path,
        old_text: None,
        new_text: content.to_string(),
        note: append.then(|| APPEND_PENDING.to_string()),
    }
}

/// Marks an append whose old text is not read yet (replaced when it is).
const APPEND_PENDING: &str = "appends to the file";

/// What an append adds, before [`load_old_text`] joins it to the file's
/// text (`None` for any other call).
pub(crate) fn appended(info: &CallInfo) -> Option<String> {
    let e = info.edit.as_ref()?;
    (e.note.as_deref() == Some(APPEND_PENDING)).then(|| e.new_text.clone())
}

/// Reads the edited file (if any) so `old_text` is the file now and
/// `new_text` the whole file after the call. Blocking; call it off the
/// async threads.
pub(crate) fn load_old_text(info: &mut CallInfo) {
    let Some(e) = info.edit.as_mut() else {
        return;
    };
    let append = e.note.as_deref() == Some(APPEND_PENDING);
    e.note = None;
    let path = Path::new(&e.path);
    let shown = e.path.clone();
    match std::fs::metadata(path) {
        Err(_) => {}
        Ok(m) if m.is_dir() => e.note = Some(format!("{shown} is a directory; the call will fail")),
        Ok(m) if m.len() > MAX_READ => {
            e.note = Some(format!(
                "{shown} is {} bytes now; too large to show a diff",
                m.len()
            ))
        }
        Ok(_) => match std::fs::read(path).map(String::from_utf8) {
            Ok(Ok(old)) => {
                if append {
                    e.new_text = format!("{old}{}", e.new_text);
                }
                e.old_text = Some(old);
            }
            Ok(Err(_)) => {
                let what = if append { "appended to" } else { "replaced" };
                e.note = Some(format!("{shown} is a binary file now; it will be {what}"));
            }
            Err(err) => e.note = Some(format!("cannot read {shown} to compare: {err}")),
        },
    }
}

/// For a stored call replayed later: the file has moved on, so its old
/// text is not read; the note says so.
pub(crate) fn mark_not_kept(info: &mut CallInfo) {
    if let Some(e) = info.edit.as_mut() {
        e.note = Some(NOT_KEPT.to_string());
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::protocol::CallKind;

    fn info(e: FileEdit) -> CallInfo {
        CallInfo {
            edit: Some(e),
            ..CallInfo::titled(CallKind::Edit, "t", None)
        }
    }

    #[test]
    fn paths_are_absolute_and_folded() {
        let base = Path::new("/w/p");
        assert_eq!(abs("a/./b.txt", base), "/w/p/a/b.txt");
        assert_eq!(abs("../q/c", base), "/w/q/c");
        assert_eq!(abs("/etc/hosts", base), "/etc/hosts");
    }

    #[test]
    fn old_text_for_new_existing_appended_binary_and_directory() {
        let d = tempfile::tempdir().unwrap();
        let p = |n: &str| d.path().join(n).to_string_lossy().into_owned();
        let mut i = info(edit(p("new.txt"), "x\n", false));
        load_old_text(&mut i);
        let e = i.edit.unwrap();
        assert_eq!((e.old_text, e.new_text, e.note), (None, "x\n".into(), None));

        std::fs::write(d.path().join("a.txt"), "one\ntwo\n").unwrap();
        let mut i = info(edit(p("a.txt"), "ONE\ntwo\n", false));
        load_old_text(&mut i);
        let e = i.edit.unwrap();
        assert_eq!(e.old_text.as_deref(), Some("one\ntwo\n"));
        assert_eq!(e.new_text, "ONE\ntwo\n");

        let mut i = info(edit(p("a.txt"), "three\n", true));
        load_old_text(&mut i);
        let e = i.edit.unwrap();
        assert_eq!(e.new_text, "one\ntwo\nthree\n");
        assert_eq!(e.note, None);

        std::fs::write(d.path().join("b.bin"), [0xff, 0xfe, 0]).unwrap();
        let mut i = info(edit(p("b.bin"), "t", false));
        load_old_text(&mut i);
        let e = i.edit.unwrap();
        assert!(e.old_text.is_none());
        assert!(e.note.unwrap().contains("binary"));

        let mut i = info(edit(d.path().to_string_lossy().into_owned(), "t", false));
        load_old_text(&mut i);
        assert!(i.edit.unwrap().note.unwrap().contains("directory"));
    }

    #[test]
    fn built_in_tools_describe_their_calls() {
        use crate::tools::Tool;
        use crate::tools::builtin::{filesystem::FilesystemTool, terminal::TerminalTool};
        use serde_json::json;
        let base = Path::new("/w");
        let fs = FilesystemTool;
        let w = fs.describe(
            &json!({"action":"append","path":"a.txt","content":"z"}),
            base,
        );
        assert_eq!(w.kind, CallKind::Edit);
        assert_eq!(w.paths, ["/w/a.txt"]);
        assert_eq!(w.edit.as_ref().unwrap().path, "/w/a.txt");
        let r = fs.describe(&json!({"action":"read","path":"../b"}), base);
        assert_eq!(
            (r.kind, r.paths, r.edit),
            (CallKind::Read, vec!["/b".into()], None)
        );
        let d = fs.describe(&json!({"action":"delete","path":"c"}), base);
        assert_eq!(d.kind, CallKind::Delete);
        let bad = fs.describe(&json!({"action":"fly"}), base);
        assert_eq!(
            (bad.kind, bad.title.as_str()),
            (CallKind::Other, "filesystem")
        );
        let t = TerminalTool.describe(&json!({"command":"ls -la","cwd":"sub"}), base);
        assert_eq!(t.kind, CallKind::Execute);
        assert_eq!(t.command.as_deref(), Some("ls -la"));
        assert_eq!(t.cwd.as_deref(), Some("/w/sub"));
        assert_eq!(t.title, "terminal: ls -la");
    }
}
