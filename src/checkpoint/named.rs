//! Which workspace paths a tool call can change, when that is known before
//! it runs: a `filesystem` write, append, mkdir or delete changes its path
//! (under it, for a directory) and nothing else. A turn whose writing calls
//! are all of this kind is recorded from those paths alone (see
//! `shadow_paths`); any other writing call — `terminal`, `code_exec`, a user
//! or MCP tool, a subagent — may change anything, and the turn is recorded
//! whole.
//!
//! A path is taken as the tool resolves it (symbolic links followed, `..`
//! folded), and also with its last component unresolved (a `delete` removes
//! a link itself). Both forms have no link among their directories, so git
//! can add them. Paths outside the workspace are not recorded (as in a
//! whole snapshot); a call naming the workspace itself, or a path navi
//! cannot resolve, counts as one that may change anything.
use crate::llm::ToolCall;
use crate::util::paths::{absolute, resolve, resolve_entry};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path};

/// The paths (relative to the workspace, as bytes) every call may change,
/// or `None` when one of them may change anything.
pub(crate) fn paths(calls: &[&ToolCall], workspace: &Path) -> Option<Vec<Vec<u8>>> {
    let ws = workspace.canonicalize().ok()?;
    let mut out: Vec<Vec<u8>> = Vec::new();
    for call in calls {
        for p in of_call(call, workspace, &ws)? {
            if !out.contains(&p) {
                out.push(p);
            }
        }
    }
    Some(out)
}

fn of_call(call: &ToolCall, workspace: &Path, ws: &Path) -> Option<Vec<Vec<u8>>> {
    if call.name != "filesystem" {
        return None;
    }
    let action = call.arguments.get("action").and_then(|v| v.as_str());
    if !matches!(action, Some("write" | "append" | "mkdir" | "delete")) {
        return None;
    }
    // No usable path: the tool refuses the call and changes nothing.
    let Some(raw) = call.arguments.get("path").and_then(|v| v.as_str()) else {
        return Some(Vec::new());
    };
    if raw.trim().is_empty() || raw.contains('\0') {
        return Some(Vec::new());
    }
    let abs = absolute(raw, workspace);
    let mut out = Vec::new();
    for resolved in [resolve(&abs, workspace), resolve_entry(&abs, workspace)] {
        let resolved = resolved.ok()?;
        let Ok(rel) = resolved.strip_prefix(ws) else {
            continue;
        };
        if rel.as_os_str().is_empty() {
            return None;
        }
        // Never recorded, as in a whole snapshot.
        if rel
            .components()
            .any(|c| c == Component::Normal(".git".as_ref()))
        {
            continue;
        }
        let bytes = rel.as_os_str().as_bytes().to_vec();
        if !out.contains(&bytes) {
            out.push(bytes);
        }
    }
    Some(out)
}

/// Whether `path` is `dir` or lies under it.
pub(crate) fn within(path: &[u8], dir: &[u8]) -> bool {
    path.starts_with(dir) && (path.len() == dir.len() || path.get(dir.len()) == Some(&b'/'))
}

/// The paths of `new` not already covered by `named` (equal to one of them
/// or under one), without those covered by another of them.
pub(crate) fn uncovered(named: &[Vec<u8>], new: &[Vec<u8>]) -> Vec<Vec<u8>> {
    let fresh: Vec<&Vec<u8>> = new
        .iter()
        .filter(|p| !named.iter().any(|n| within(p, n)))
        .collect();
    let mut out: Vec<Vec<u8>> = Vec::new();
    for p in &fresh {
        let covered = fresh.iter().any(|q| q != p && within(p, q));
        if !covered && !out.contains(p) {
            out.push((*p).clone());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call(name: &str, args: serde_json::Value) -> ToolCall {
        ToolCall {
            id: "c".into(),
            name: name.into(),
            arguments: args,
        }
    }

    fn fs(action: &str, path: &str) -> ToolCall {
        call("filesystem", json!({"action": action, "path": path}))
    }

    #[test]
    fn file_tools_name_their_paths_and_commands_name_none() {
        let d = tempfile::tempdir().unwrap();
        let ws = d.path().join("ws");
        std::fs::create_dir_all(ws.join("real")).unwrap();
        std::fs::write(ws.join("real/t.txt"), "t").unwrap();
        std::os::unix::fs::symlink("real", ws.join("dirlink")).unwrap();
        std::os::unix::fs::symlink("real/t.txt", ws.join("filelink")).unwrap();
        let one = |c: ToolCall| paths(&[&c], &ws);
        let b = |s: &str| s.as_bytes().to_vec();
        assert_eq!(one(fs("write", "a/b.txt")), Some(vec![b("a/b.txt")]));
        assert_eq!(
            one(fs("write", &ws.join("x/../c.txt").to_string_lossy())),
            Some(vec![b("c.txt")])
        );
        // Through a linked directory: the real path.
        assert_eq!(
            one(fs("write", "dirlink/n.txt")),
            Some(vec![b("real/n.txt")])
        );
        // A link to a file: its target, and the link itself.
        assert_eq!(
            one(fs("delete", "filelink")),
            Some(vec![b("real/t.txt"), b("filelink")])
        );
        // Outside the workspace, or into .git: nothing to record.
        assert_eq!(one(fs("write", "../elsewhere.txt")), Some(vec![]));
        assert_eq!(one(fs("write", ".git/config")), Some(vec![]));
        assert_eq!(one(fs("mkdir", "")), Some(vec![]));
        // The workspace itself, a command, an unknown tool: anything.
        assert_eq!(one(fs("delete", ".")), None);
        assert_eq!(one(call("terminal", json!({"command": "true"}))), None);
        assert_eq!(one(call("mcp_x", json!({"path": "a"}))), None);
        let (w, t) = (fs("write", "a"), call("code_exec", json!({})));
        assert_eq!(paths(&[&w, &t], &ws), None);
    }

    #[test]
    fn uncovered_skips_what_is_named_already() {
        let v = |s: &[&str]| s.iter().map(|x| x.as_bytes().to_vec()).collect::<Vec<_>>();
        assert_eq!(
            uncovered(&v(&["d", "e.txt"]), &v(&["d/x", "e.txt", "dd", "f", "f/g"])),
            v(&["dd", "f"])
        );
    }
}
