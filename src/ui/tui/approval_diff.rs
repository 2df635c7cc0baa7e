//! What a file change would do, for the approval overlay: a `filesystem`
//! write or append is shown as a line diff against the file as it is now
//! (a new file: all of its content as added lines).
//!
//! Invariants: the file is only read, never touched; at most `MAX_READ`
//! bytes are read (a larger or binary file gets a one-line note instead of
//! a diff); paths resolve like the tool resolves them (relative to the
//! working directory, `~` expanded). The diff comes from `similar`
//! (Myers), grouped into hunks with three lines of context.
use serde_json::Value;
use similar::{ChangeTag, TextDiff};
use std::path::Path;

/// Files larger than this are not diffed (the overlay says so).
const MAX_READ: u64 = 2 * 1024 * 1024;
const CONTEXT: usize = 3;

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum DiffLine {
    /// `@@ -a,b +c,d @@` or a note such as "new file".
    Header(String),
    Added(String),
    Removed(String),
    Context(String),
}

/// The diff for an approval request, or `None` when the call changes no
/// file content (not a filesystem write/append).
pub(crate) fn for_request(tool: &str, args: &Value, base: &Path) -> Option<Vec<DiffLine>> {
    if tool != "filesystem" {
        return None;
    }
    let action = args.get("action").and_then(Value::as_str)?;
    if action != "write" && action != "append" {
        return None;
    }
    let raw = args.get("path").and_then(Value::as_str)?;
    let content = args.get("content").and_then(Value::as_str).unwrap_or("");
    let path = crate::tools::paths::absolute(raw, base);
    let old = match std::fs::metadata(&path) {
        Err(_) => None,
        Ok(m) if m.is_dir() => {
            return Some(vec![DiffLine::Header(format!(
                "{raw} is a directory; the call will fail"
            ))]);
        }
        Ok(m) if m.len() > MAX_READ => {
            return Some(vec![DiffLine::Header(format!(
                "{raw} is {} bytes now; too large to show a diff",
                m.len()
            ))]);
        }
        Ok(_) => match std::fs::read(&path) {
            Ok(b) => match String::from_utf8(b) {
                Ok(s) => Some(s),
                Err(_) => {
                    return Some(vec![DiffLine::Header(format!(
                        "{raw} is a binary file now; it will be {}",
                        if action == "append" {
                            "appended to"
                        } else {
                            "replaced"
                        }
                    ))]);
                }
            },
            Err(e) => {
                return Some(vec![DiffLine::Header(format!(
                    "cannot read {raw} to compare: {e}"
                ))]);
            }
        },
    };
    let new = match (&old, action) {
        (Some(o), "append") => format!("{o}{content}"),
        _ => content.to_string(),
    };
    Some(diff(old.as_deref(), &new))
}

/// Lines of `old` → `new`; `old` `None`: a new file.
pub(crate) fn diff(old: Option<&str>, new: &str) -> Vec<DiffLine> {
    let Some(old) = old else {
        let mut out = vec![DiffLine::Header(format!(
            "new file, {} line(s)",
            new.lines().count()
        ))];
        out.extend(new.lines().map(|l| DiffLine::Added(l.to_string())));
        return out;
    };
    if old == new {
        return vec![DiffLine::Header(
            "no change: the content is the same".into(),
        )];
    }
    let d = TextDiff::from_lines(old, new);
    let mut out = Vec::new();
    for group in d.grouped_ops(CONTEXT) {
        let (Some(first), Some(last)) = (group.first(), group.last()) else {
            continue;
        };
        let (o, n) = (first.old_range().start, first.new_range().start);
        let (oe, ne) = (last.old_range().end, last.new_range().end);
        out.push(DiffLine::Header(format!(
            "@@ -{},{} +{},{} @@",
            o + 1,
            oe - o,
            n + 1,
            ne - n
        )));
        for op in &group {
            for c in d.iter_changes(op) {
                let text = c.value().trim_end_matches(['\n', '\r']).to_string();
                out.push(match c.tag() {
                    ChangeTag::Delete => DiffLine::Removed(text),
                    ChangeTag::Insert => DiffLine::Added(text),
                    ChangeTag::Equal => DiffLine::Context(text),
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn changed_line_shows_as_removed_and_added_with_context() {
        let d = diff(Some("a\nb\nc\n"), "a\nB\nc\n");
        assert_eq!(
            d,
            vec![
                DiffLine::Header("@@ -1,3 +1,3 @@".into()),
                DiffLine::Context("a".into()),
                DiffLine::Removed("b".into()),
                DiffLine::Added("B".into()),
                DiffLine::Context("c".into()),
            ]
        );
    }

    #[test]
    fn new_file_append_and_other_tools() {
        let dir = tempfile::tempdir().unwrap();
        let args = json!({"action": "write", "path": "n.txt", "content": "x\ny\n"});
        let d = for_request("filesystem", &args, dir.path()).unwrap();
        assert_eq!(
            d[1..],
            [DiffLine::Added("x".into()), DiffLine::Added("y".into())]
        );
        std::fs::write(dir.path().join("n.txt"), "x\n").unwrap();
        let args = json!({"action": "append", "path": "n.txt", "content": "z\n"});
        let d = for_request("filesystem", &args, dir.path()).unwrap();
        assert!(d.contains(&DiffLine::Added("z".into())), "{d:?}");
        assert!(d.contains(&DiffLine::Context("x".into())), "{d:?}");
        let args = json!({"action": "delete", "path": "n.txt"});
        assert!(for_request("filesystem", &args, dir.path()).is_none());
        assert!(for_request("terminal", &json!({"command": "ls"}), dir.path()).is_none());
    }
}
