//! What a finished tool card shows: the one-line summary under it and, when
//! expanded, the body.
//!
//! Both come from the result's typed display data ([`ToolDisplay`]) when the
//! tool gave some: a command's exit status and streams, a write's diff, a
//! page's title and URL. Without it (older sessions, user tools, most
//! built-ins) the result text is shown as it is: its first non-empty line as
//! the summary, all of it as the body. The text written for the model is
//! never parsed.
use crate::protocol::{CommandDisplay, ToolDisplay};
use crate::ui::format::preview;
use std::time::Duration;

/// The summary line (not cut to a width).
pub(crate) fn summary(display: Option<&ToolDisplay>, result: &str) -> String {
    match display {
        Some(d) => d.summary(),
        None => preview(result, 400),
    }
}

/// One line of an expanded card's body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum BodyLine {
    /// Result text or command output.
    Text(String),
    /// A section heading or a note (`stdout`, `@@ -1,3 +1,4 @@`).
    Label(String),
    Added(String),
    Removed(String),
}

/// The body of an expanded card.
pub(crate) fn body(display: Option<&ToolDisplay>, result: &str) -> Vec<BodyLine> {
    match display {
        Some(ToolDisplay::Command(c)) => command_body(c),
        Some(ToolDisplay::FileWrite(w)) if w.diff.is_some() => {
            let mut out = vec![BodyLine::Label(ToolDisplay::FileWrite(w.clone()).summary())];
            out.extend(w.diff.iter().flat_map(|d| d.lines()).filter_map(diff_line));
            out
        }
        _ => text_lines(result),
    }
}

fn text_lines(s: &str) -> Vec<BodyLine> {
    s.lines().map(|l| BodyLine::Text(l.to_string())).collect()
}

fn command_body(c: &CommandDisplay) -> Vec<BodyLine> {
    let mut head = c.status();
    if let Some(h) = &c.host {
        head.push_str(&format!(" on {h}"));
    }
    if let Some(ms) = c.duration_ms {
        head.push_str(&format!(" · {}", duration(Duration::from_millis(ms))));
    }
    let mut out = vec![BodyLine::Label(head)];
    for (name, text) in [("stdout", &c.stdout), ("stderr", &c.stderr)] {
        if text.trim().is_empty() {
            continue;
        }
        out.push(BodyLine::Label(name.to_string()));
        out.extend(text_lines(text));
    }
    if c.stdout.trim().is_empty() && c.stderr.trim().is_empty() {
        out.push(BodyLine::Label("no output".into()));
    }
    if c.truncated {
        out.push(BodyLine::Label(
            "some output was left out (too long)".into(),
        ));
    }
    out
}

/// One line of a unified diff; the `---`/`+++` file lines are left out.
fn diff_line(l: &str) -> Option<BodyLine> {
    if l.starts_with("+++") || l.starts_with("---") {
        return None;
    }
    Some(if let Some(t) = l.strip_prefix('+') {
        BodyLine::Added(t.to_string())
    } else if let Some(t) = l.strip_prefix('-') {
        BodyLine::Removed(t.to_string())
    } else if l.starts_with("@@") || l.starts_with('\\') {
        BodyLine::Label(l.to_string())
    } else {
        BodyLine::Text(l.strip_prefix(' ').unwrap_or(l).to_string())
    })
}

/// `850ms`, `4.2s`, `2m05s`.
pub(crate) fn duration(d: Duration) -> String {
    let ms = d.as_millis();
    if ms < 1000 {
        format!("{ms}ms")
    } else if ms < 60_000 {
        format!("{:.1}s", d.as_secs_f64())
    } else {
        let s = d.as_secs();
        format!("{}m{:02}s", s / 60, s % 60)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{FileWriteDisplay, Stopped};

    fn cmd(exit: i32, stdout: &str, stderr: &str) -> ToolDisplay {
        ToolDisplay::Command(CommandDisplay {
            command: "make".into(),
            exit_code: Some(exit),
            stdout: stdout.into(),
            stderr: stderr.into(),
            duration_ms: Some(4200),
            ..Default::default()
        })
    }

    #[test]
    fn commands_show_exit_status_and_first_output_from_display_data() {
        let d = cmd(2, "", "make: *** No rule to make target\n");
        assert_eq!(
            summary(Some(&d), "anything"),
            "exit 2 · make: *** No rule to make target"
        );
        assert_eq!(
            summary(Some(&cmd(0, "ok 12 tests\n", "")), ""),
            "exit 0 · ok 12 tests"
        );
        assert_eq!(summary(Some(&cmd(0, "", "")), ""), "exit 0 · no output");
        let b = body(Some(&d), "ignored");
        assert_eq!(b[0], BodyLine::Label("exit 2 · 4.2s".into()));
        assert_eq!(b[1], BodyLine::Label("stderr".into()));
        assert_eq!(
            b[2],
            BodyLine::Text("make: *** No rule to make target".into())
        );
        let t = ToolDisplay::Command(CommandDisplay {
            stopped: Some(Stopped::Cancelled),
            truncated: true,
            ..Default::default()
        });
        let b = body(Some(&t), "");
        assert_eq!(b[0], BodyLine::Label("cancelled".into()));
        assert!(b.contains(&BodyLine::Label("no output".into())));
        assert!(b.contains(&BodyLine::Label(
            "some output was left out (too long)".into()
        )));
    }

    #[test]
    fn text_that_looks_like_a_command_report_is_not_parsed() {
        // Without display data the result is plain text, whatever it says.
        let r = "exit code: 2\n--- stdout ---\n(empty)\n--- stderr ---\nboom\n";
        assert_eq!(summary(None, r), "exit code: 2…");
        let r = "Title: Rust Book\nURL: https://doc.rust-lang.org/book/\n\nbody";
        assert_eq!(summary(None, r), "Title: Rust Book…");
        assert_eq!(body(None, "a\nb").len(), 2);
        assert_eq!(summary(None, "wrote 3 B to /tmp/x"), "wrote 3 B to /tmp/x");
    }

    #[test]
    fn writes_show_their_diff() {
        let w = ToolDisplay::FileWrite(FileWriteDisplay {
            path: "/w/a.txt".into(),
            bytes: 4,
            added: 1,
            removed: 1,
            diff: Some("--- a\n+++ b\n@@ -1,2 +1,2 @@\n a\n-b\n+B\n".into()),
            ..Default::default()
        });
        let b = body(Some(&w), "wrote 4 B to /w/a.txt");
        assert_eq!(
            b,
            [
                BodyLine::Label("wrote /w/a.txt · +1 -1 · 4 B".into()),
                BodyLine::Label("@@ -1,2 +1,2 @@".into()),
                BodyLine::Text("a".into()),
                BodyLine::Removed("b".into()),
                BodyLine::Added("B".into()),
            ]
        );
        assert_eq!(duration(Duration::from_millis(4200)), "4.2s");
        assert_eq!(duration(Duration::from_secs(125)), "2m05s");
    }
}
