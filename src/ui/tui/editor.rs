//! Ctrl-G / Ctrl-X Ctrl-E: the composer's draft in `$VISUAL` / `$EDITOR`.
//!
//! The TUI leaves the alternate screen and raw mode, stops reading the
//! terminal (crossterm's reader thread would otherwise take the editor's
//! first keys), runs the editor on a private temp file, then restores
//! everything and loads the text back.
//!
//! Invariants: a failing editor (not found, non-zero exit, unreadable file)
//! leaves the draft untouched and says why; the temp file is removed.
use crossterm::event::{Event, EventStream};
use futures_util::Stream;
use std::cell::RefCell;
use std::io::{self, Write};
use std::path::PathBuf;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};

/// The editor command: `$VISUAL`, else `$EDITOR`, else `vi`.
pub(crate) fn editor_command() -> String {
    ["VISUAL", "EDITOR"]
        .iter()
        .filter_map(|k| std::env::var(k).ok())
        .map(|v| v.trim().to_string())
        .find(|v| !v.is_empty())
        .unwrap_or_else(|| "vi".into())
}

fn temp_path() -> PathBuf {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    std::env::temp_dir().join(format!("navi-draft-{}-{nanos}.md", std::process::id()))
}

fn write_private(path: &PathBuf, text: &str) -> io::Result<()> {
    let mut o = std::fs::OpenOptions::new();
    o.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(0o600);
    }
    let mut f = o.open(path)?;
    f.write_all(text.as_bytes())
}

/// Runs `cmd` (a shell command line such as `code -w`) on a temp file
/// holding `draft`; the edited text (one trailing newline dropped), or why not.
/// The terminal must already be out of full-screen mode.
pub(crate) fn run_editor(cmd: &str, draft: &str) -> Result<String, String> {
    let path = temp_path();
    write_private(&path, draft)
        .map_err(|e| format!("cannot write the draft to {}: {e}", path.display()))?;
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("{cmd} \"$1\""))
        .arg("navi-editor")
        .arg(&path)
        .status();
    let result = match status {
        Err(e) => Err(format!("cannot start the editor `{cmd}`: {e}")),
        Ok(s) if !s.success() => Err(format!(
            "the editor `{cmd}` failed ({s}); the draft is unchanged (set $VISUAL or $EDITOR)"
        )),
        Ok(_) => std::fs::read_to_string(&path)
            .map(|t| t.strip_suffix('\n').unwrap_or(&t).to_string())
            .map_err(|e| format!("cannot read the edited draft {}: {e}", path.display())),
    };
    let _ = std::fs::remove_file(&path);
    result
}

/// The terminal input, which can be let go of while an editor runs.
#[derive(Clone, Default)]
pub(crate) struct SharedInput(Rc<RefCell<Option<EventStream>>>);

impl SharedInput {
    pub(crate) fn new() -> Self {
        SharedInput(Rc::new(RefCell::new(Some(EventStream::new()))))
    }

    /// Stops reading the terminal (drops crossterm's reader).
    pub(crate) fn pause(&self) {
        self.0.borrow_mut().take();
    }

    pub(crate) fn resume(&self) {
        *self.0.borrow_mut() = Some(EventStream::new());
    }
}

impl Stream for SharedInput {
    type Item = io::Result<Event>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        // A hung-up terminal reads as ready forever: crossterm would spin on
        // it. It is the end of the input instead (the loop then quits).
        if super::hangup::tty_hung_up() {
            return Poll::Ready(None);
        }
        match self.0.borrow_mut().as_mut() {
            Some(s) => Pin::new(s).poll_next(cx),
            None => Poll::Pending,
        }
    }
}

/// Leaves full-screen mode, runs the editor on `draft`, and comes back.
pub(crate) fn edit_draft(input: &SharedInput, draft: &str) -> Result<String, String> {
    input.pause();
    super::terminal::restore();
    let r = run_editor(&editor_command(), draft);
    let back = super::terminal::resume();
    input.resume();
    back.map_err(|e| format!("cannot return to the full-screen UI: {e}"))?;
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn editor_result_and_failure_keep_the_draft_safe() {
        assert_eq!(
            run_editor("sed -i 's/old/new/'", "an old draft").as_deref(),
            Ok("an new draft")
        );
        let e = run_editor("false", "draft").unwrap_err();
        assert!(e.contains("unchanged"), "{e}");
        let e = run_editor("/nonexistent/editor-xyz", "draft").unwrap_err();
        assert!(e.contains("failed"), "{e}");
    }
}
