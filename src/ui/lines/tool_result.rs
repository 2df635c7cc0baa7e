//! A finished tool call as lines: the summary after `✓`/`✗` and, when the
//! sandbox probably stopped the call, what the user needs to know about it.
//!
//! The summary is the card's (typed display data when the tool gave some:
//! a command's status and meaningful output line), else the result's first
//! line. A sandbox denial shows the line that reads like one
//! (`Permission denied`) and the part of navi's `[sandbox]` note that says
//! what the sandbox allowed; the instructions meant for the model (how to
//! call again) are left out.
use crate::app::words::{SANDBOX_NOTE as NOTE_MARK, denial_line};
use crate::protocol::ToolDisplay;
use crate::ui::format::preview;

/// The text after `✓ tool: ` (cut to `max` characters).
pub(super) fn summary(display: Option<&ToolDisplay>, result: &str, max: usize) -> String {
    match display {
        Some(d) => preview(&d.summary(), max),
        None => preview(result, max),
    }
}

/// Lines to show under the summary: the denial and navi's notes about the
/// sandbox, each once.
pub(super) fn sandbox_lines(result: &str) -> Vec<String> {
    let notes: Vec<&str> = result
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with(NOTE_MARK))
        .collect();
    if notes.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    if let Some(d) = denial_line(result) {
        out.push(format!("denied: {}", preview(d, 200)));
    }
    for n in notes {
        out.push(for_the_user(n));
    }
    out
}

/// A note without the sentences addressed to the model.
fn for_the_user(note: &str) -> String {
    let kept: Vec<&str> = note
        .split_inclusive(['.', ';'])
        .filter(|s| !s.contains("call the tool again") && !s.contains("call again"))
        .filter(|s| !s.contains("do not retry"))
        .collect();
    let t = kept.concat();
    let t = t.trim().trim_end_matches(';').trim_end();
    if t.is_empty() {
        note.to_string()
    } else {
        t.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_denial_shows_the_error_line_and_what_the_sandbox_allows() {
        // The note as `tools::sandbox_denial::note` writes it.
        let note = "[sandbox] this command may have been stopped by navi's sandbox (a permission error under Landlock/seccomp is the sandbox, not the file system). It may write only under: /w. It has no network (Unix sockets work). If the network is what it needs, call the tool again with \"sandbox\": \"network\"; to run it outside the sandbox call again with \"sandbox\": \"off\". Either asks the user first; do not retry otherwise.";
        let result = format!(
            "exit code: 1\n--- stderr ---\ntouch: cannot touch '/etc/x': Permission denied\n{note}"
        );
        let lines = sandbox_lines(&result);
        assert_eq!(
            lines[0],
            "denied: touch: cannot touch '/etc/x': Permission denied"
        );
        assert!(lines[1].starts_with("[sandbox] this command may have been stopped"));
        assert!(
            lines[1].contains("It may write only under: /w."),
            "{}",
            lines[1]
        );
        assert!(!lines[1].contains("call"), "{}", lines[1]);
        assert!(sandbox_lines("exit code: 1\nPermission denied").is_empty());
    }
}
