//! `/copy`: putting text on the clipboard, and saying honestly what happened.
//!
//! Inside tmux, OSC 52 from an application only reaches the outer terminal
//! when tmux passes it through, which tmux 3.3+ does not by default; so
//! inside tmux the text goes into tmux's own buffer with `tmux load-buffer
//! -w -` (`-w` also hands it to the system clipboard when tmux's
//! `set-clipboard` allows). Elsewhere an OSC 52 sequence is written; no
//! terminal acknowledges it, so the notice says it was sent, not that it
//! arrived.
use std::io::Write;
use std::process::{Command, Stdio};

/// What `/copy` did: an escape sequence to write (if any) and what to tell
/// the user.
pub(crate) struct Copied {
    pub(crate) sequence: Option<String>,
    pub(crate) notice: String,
}

/// Copies `text` (inside tmux when `$TMUX` is set).
pub(crate) fn copy(text: &str) -> Copied {
    let n = text.chars().count();
    if std::env::var_os("TMUX").is_some() {
        return match tmux_load(text, true).or_else(|_| tmux_load(text, false).map(|_| false)) {
            Ok(true) => Copied {
                sequence: None,
                notice: match tmux_option("set-clipboard").as_deref() {
                    Some("off") => format!(
                        "copied {n} characters to tmux's paste buffer (prefix + ] pastes); tmux's set-clipboard is off, so not to the system clipboard"
                    ),
                    _ => format!(
                        "copied {n} characters to tmux's paste buffer and, through tmux, to the system clipboard"
                    ),
                },
            },
            Ok(false) => Copied {
                sequence: None,
                notice: format!(
                    "copied {n} characters to tmux's paste buffer only (prefix + ] pastes; this tmux cannot forward it to the system clipboard)"
                ),
            },
            Err(e) => Copied {
                sequence: Some(crate::ui::commands::osc52(text)),
                notice: format!(
                    "could not copy through tmux ({e}); sent OSC 52 instead, which tmux drops unless allow-passthrough is on: nothing may have been copied"
                ),
            },
        };
    }
    Copied {
        sequence: Some(crate::ui::commands::osc52(text)),
        notice: format!(
            "sent {n} characters to the terminal's clipboard (OSC 52); it cannot be confirmed: if nothing arrived, the terminal does not allow clipboard writes"
        ),
    }
}

/// `tmux load-buffer [-w] -` with `text` on stdin. `Ok(true)` on success.
fn tmux_load(text: &str, to_clipboard: bool) -> Result<bool, String> {
    let mut cmd = Command::new("tmux");
    cmd.arg("load-buffer");
    if to_clipboard {
        cmd.arg("-w");
    }
    cmd.arg("-")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().map_err(|e| format!("cannot run tmux: {e}"))?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin
            .write_all(text.as_bytes())
            .map_err(|e| format!("cannot write to tmux: {e}"))?;
    }
    let out = child
        .wait_with_output()
        .map_err(|e| format!("tmux failed: {e}"))?;
    if out.status.success() {
        Ok(true)
    } else {
        Err(String::from_utf8_lossy(&out.stderr).trim().to_string())
    }
}

fn tmux_option(name: &str) -> Option<String> {
    let out = Command::new("tmux")
        .args(["show-options", "-gv", name])
        .stderr(Stdio::null())
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}
