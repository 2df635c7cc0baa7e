//! What a file change would do, for the approval overlay: a `filesystem`
//! write or append is shown as a line diff against the file as it is now
//! (a new file: all of its content as added lines).
//!
//! Invariants: the file is only read, never touched; at most `MAX_READ`
//! bytes are read (a larger or binary file gets a one-line note instead of
//! a diff); paths resolve like the tool resolves them (relative to the
//! working directory, `~` expanded). The diff comes from `similar`
//! (Myers), grouped into hunks with three lines of context.
pub(crate) use crate::text_diff::{DiffLine, diff};
use serde_json::Value;
use std::path::Path;

/// Files larger than this are not diffed (the overlay says so).
const MAX_READ: u64 = 2 * 1024 * 1024;

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
    let path = crate::app::words::resolve_path(raw, base);
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

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
