//! What a tool call is about, before it runs: [`CallInfo`].
//!
//! The result side has [`super::ToolDisplay`]; this is the call side. The
//! tool fills it from its typed arguments (the registry asks it once, when
//! the call is known), and it rides on `tool_started` and `approval_request`
//! as `call`, so front ends (the TUI's approval diff, ACP, `--json`) draw a
//! call from typed data and never match on tool names or raw arguments.
//!
//! Invariants: additive only, like `ToolDisplay`. Paths are absolute (the
//! tool resolves them against the session's work directory). For an edit,
//! `old_text` is the file as it was when the call was described (`None`:
//! no such file, or not known — `note` says which when it matters) and
//! `new_text` the whole file as the call means to leave it.

use serde::{Deserialize, Serialize};

/// The sort of thing a call does (the ACP tool kinds, in navi's words).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CallKind {
    /// Reads files or directories.
    Read,
    /// Creates or changes a file or directory.
    Edit,
    Delete,
    Move,
    /// Searches (the web, memory, the tool list).
    Search,
    /// Runs a command or program.
    Execute,
    /// Fetches a URL or an image.
    Fetch,
    /// Keeps notes or a plan (todo, scratchpad).
    Think,
    /// Switches the session's profile.
    SwitchMode,
    #[default]
    Other,
}

/// The intended change to one text file.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FileEdit {
    /// The file, absolute.
    pub path: String,
    /// The file's text before the call; `None` for a new file (or when it
    /// could not be read: then `note` says why).
    #[serde(default)]
    pub old_text: Option<String>,
    /// The file's whole text after the call.
    pub new_text: String,
    /// Why the before/after pair is not a faithful diff (a binary or very
    /// large file, a directory, the earlier text not known on a replay).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// A call to a tool of an MCP server.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct McpCall {
    pub server: String,
    pub tool: String,
}

/// Typed data about one tool call, for display (and for front ends that
/// act on the call, such as an editor showing the diff).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CallInfo {
    pub kind: CallKind,
    /// A short title: the tool and what it works on (`terminal: ls -la`).
    pub title: String,
    /// The files or directories it works on, absolute.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub paths: Vec<String>,
    /// The command line it runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// The directory a command runs in, absolute.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// The SSH host a command runs on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// The URL it fetches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// What it searches for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub query: Option<String>,
    /// The change it means to make to a text file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edit: Option<FileEdit>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp: Option<McpCall>,
}

impl CallInfo {
    /// A call nothing more is known about: kind `other`, titled by its tool.
    pub fn other(tool: &str) -> Self {
        CallInfo {
            title: tool.to_string(),
            ..Default::default()
        }
    }

    /// A call of `kind` titled `<tool>: <what>` (the subject shortened to
    /// one line of at most 120 characters), or just `<tool>`.
    pub fn titled(kind: CallKind, tool: &str, what: Option<&str>) -> Self {
        CallInfo {
            kind,
            title: title(tool, what),
            ..Default::default()
        }
    }
}

/// `<tool>: <what>`, the subject trimmed to one line of 120 characters.
pub(crate) fn title(tool: &str, what: Option<&str>) -> String {
    let Some(w) = what.map(str::trim).filter(|w| !w.is_empty()) else {
        return tool.to_string();
    };
    let line = w.lines().next().unwrap_or("");
    let short: String = line.chars().take(120).collect();
    let ell = if short.len() < w.len() { "…" } else { "" };
    format!("{tool}: {short}{ell}")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn an_edit_serialises_with_null_old_text_for_a_new_file() {
        let c = CallInfo {
            paths: vec!["/w/a.txt".into()],
            edit: Some(FileEdit {
                path: "/w/a.txt".into(),
                old_text: None,
                new_text: "x\n".into(),
                note: None,
            }),
            ..CallInfo::titled(CallKind::Edit, "filesystem", Some("write /w/a.txt"))
        };
        let v = serde_json::to_value(&c).unwrap();
        assert_eq!(
            v,
            json!({"kind": "edit", "title": "filesystem: write /w/a.txt",
                   "paths": ["/w/a.txt"],
                   "edit": {"path": "/w/a.txt", "old_text": null, "new_text": "x\n"}})
        );
        assert_eq!(serde_json::from_value::<CallInfo>(v).unwrap(), c);
    }

    #[test]
    fn titles_are_one_short_line() {
        assert_eq!(title("terminal", Some("  ls -la \n")), "terminal: ls -la");
        assert_eq!(title("terminal", Some("a\nb")), "terminal: a…");
        assert_eq!(title("todo", None), "todo");
        assert_eq!(title("todo", Some("  ")), "todo");
        let long = "x".repeat(200);
        assert_eq!(title("t", Some(&long)).chars().count(), 3 + 120 + 1);
    }
}
