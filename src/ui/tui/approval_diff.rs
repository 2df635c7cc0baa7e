//! What a file change would do, for the approval overlay: the call's typed
//! edit (its file before and after, read by the tool's description when the
//! call was made) shown as a line diff (a new file: all of its content as
//! added lines).
//!
//! Invariants: nothing is read here and no tool name or raw argument is
//! looked at; an edit the tool could not diff faithfully (a directory, a
//! binary or very large file) is one header line saying why. The diff
//! comes from `similar` (Myers), grouped into hunks with three lines of
//! context.
use crate::protocol::CallInfo;
pub(crate) use crate::text_diff::{DiffLine, diff};

/// The diff for an approval request, or `None` when the call changes no
/// file content.
pub(crate) fn for_call(call: &CallInfo) -> Option<Vec<DiffLine>> {
    let edit = call.edit.as_ref()?;
    if let Some(note) = &edit.note {
        return Some(vec![DiffLine::Header(note.clone())]);
    }
    Some(diff(edit.old_text.as_deref(), &edit.new_text))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::protocol::{CallKind, FileEdit};

    fn call(old: Option<&str>, new: &str, note: Option<&str>) -> CallInfo {
        CallInfo {
            edit: Some(FileEdit {
                path: "/w/n.txt".into(),
                old_text: old.map(str::to_string),
                new_text: new.into(),
                note: note.map(str::to_string),
            }),
            ..CallInfo::titled(CallKind::Edit, "x", None)
        }
    }

    #[test]
    fn new_file_changed_file_note_and_no_edit() {
        let d = for_call(&call(None, "x\ny\n", None)).unwrap();
        assert_eq!(
            d[1..],
            [DiffLine::Added("x".into()), DiffLine::Added("y".into())]
        );
        let d = for_call(&call(Some("x\n"), "x\nz\n", None)).unwrap();
        assert!(d.contains(&DiffLine::Added("z".into())), "{d:?}");
        assert!(d.contains(&DiffLine::Context("x".into())), "{d:?}");
        let d = for_call(&call(None, "b", Some("/w/n.txt is a binary file now"))).unwrap();
        assert_eq!(
            d,
            [DiffLine::Header("/w/n.txt is a binary file now".into())]
        );
        let run = CallInfo::titled(CallKind::Execute, "terminal", Some("ls"));
        assert!(for_call(&run).is_none());
    }
}
