//! Telling the model (and the user) that the sandbox, not the command, was
//! the reason a call failed, and how to ask for more.
//!
//! The kernel gives no marker: a write Landlock refuses fails with EACCES
//! ("Permission denied"), a write to a read-only carve-out the same, and a
//! socket the seccomp filter refuses with EPERM ("Operation not permitted").
//! A failed sandboxed command whose output carries one of those messages
//! gets a note saying what the sandbox allowed and how to ask to run the
//! command with the network, or outside the sandbox — both only after an
//! approval that says exactly that.
use crate::sandbox::Policy;
use crate::tools::ToolResult;
use crate::tools::process::{Ending, RunOutcome};

/// Error texts that a denial by Landlock or seccomp produces in common
/// programs (coreutils, shells, Python, git, curl).
const SIGNS: [&str; 8] = [
    "permission denied",
    "operation not permitted",
    "read-only file system",
    "[errno 1]",
    "[errno 13]",
    "eacces",
    "eperm",
    "could not resolve host",
];

/// Whether a sandboxed child's failure looks like the sandbox stopped it.
pub(crate) fn looks_denied(outcome: &RunOutcome) -> bool {
    if matches!(outcome.ending, Ending::Exited(0)) {
        return false;
    }
    let text = format!("{}\n{}", outcome.stderr.text(), outcome.stdout.text()).to_lowercase();
    SIGNS.iter().any(|s| text.contains(s))
}

/// The first line of `text` that reads like a denial (`Permission
/// denied`, `Operation not permitted`…), for showing the user.
pub(crate) fn denial_line(text: &str) -> Option<&str> {
    text.lines().map(str::trim).find(|l| {
        let low = l.to_lowercase();
        !l.starts_with(NOTE_MARK) && SIGNS.iter().any(|s| low.contains(s))
    })
}

/// How every note navi adds to a sandboxed result begins.
pub(crate) const NOTE_MARK: &str = "[sandbox]";

/// The note for a call the sandbox probably stopped.
pub(crate) fn note(policy: &Policy) -> String {
    let writable: Vec<String> = policy
        .writable
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    let read_only: Vec<String> = policy
        .read_only
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    let mut s = String::from(
        "[sandbox] this command may have been stopped by navi's sandbox (a permission error under Landlock/seccomp is the sandbox, not the file system).",
    );
    s.push_str(&format!(
        " It may write only under: {}.",
        if writable.is_empty() {
            "nothing".into()
        } else {
            writable.join(", ")
        }
    ));
    if !read_only.is_empty() {
        s.push_str(&format!(" Read-only there: {}.", read_only.join(", ")));
    }
    if !policy.network {
        s.push_str(" It has no network (Unix sockets work).");
        s.push_str(
            " If the network is what it needs, call the tool again with \"sandbox\": \"network\";",
        );
    }
    s.push_str(
        " to run it outside the sandbox call again with \"sandbox\": \"off\". Either asks the user first; do not retry otherwise.",
    );
    s
}

fn append(result: &mut ToolResult, text: &str) {
    if !result.output.ends_with('\n') && !result.output.is_empty() {
        result.output.push('\n');
    }
    result.output.push_str(text);
}

/// Adds the note to `result` when the sandbox probably denied the call, and
/// what the sandbox did after it (git metadata neutralised).
pub(crate) fn annotate(result: &mut ToolResult, outcome: &RunOutcome, policy: Option<&Policy>) {
    for n in &outcome.sandbox_notes {
        append(result, n);
    }
    let Some(policy) = policy else {
        return;
    };
    if !crate::sandbox::support().available() || !looks_denied(outcome) {
        return;
    }
    append(result, &note(policy));
}
