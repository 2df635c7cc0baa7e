//! Turns a finished child process into the `ToolResult` the model reads.
//!
//! Invariant: exit code, stdout and stderr are always all reported (empty
//! streams say so); `success` is true only for exit code 0; timeouts and
//! cancellations are errors that say the process group was killed. Metadata
//! carries `pid` and `exit_code` (absent when killed).

use super::ToolResult;
use super::process::{Ending, RunOutcome};
use crate::protocol::{CommandDisplay, Stopped, ToolDisplay};
use serde_json::json;
use std::time::Duration;

/// [`report`] with lines longer than `max_line` bytes cut (with a note).
pub(crate) fn report_capped(
    outcome: &RunOutcome,
    what: &str,
    timeout: Duration,
    max_line: usize,
) -> ToolResult {
    let mut r = report(outcome, what, timeout);
    if let std::borrow::Cow::Owned(c) = super::cap_long_lines(&r.output, max_line) {
        r.output = c;
    }
    r
}

/// Formats `outcome`; `what` names the thing that ran (e.g. "command").
pub(crate) fn report(outcome: &RunOutcome, what: &str, timeout: Duration) -> ToolResult {
    let stdout = outcome.stdout.text();
    let stderr = outcome.stderr.text();
    let status_line = match outcome.ending {
        Ending::Exited(c) => format!("exit code: {c}"),
        Ending::Signaled(s) => format!("killed by signal {s}"),
        Ending::TimedOut => format!(
            "timed out after {}s (process group killed)",
            timeout.as_secs()
        ),
        Ending::Cancelled => "cancelled by user (process group killed)".into(),
    };
    let mut output = status_line.clone();
    output.push_str("\n--- stdout ---\n");
    output.push_str(if stdout.is_empty() {
        "(empty)"
    } else {
        &stdout
    });
    if !output.ends_with('\n') {
        output.push('\n');
    }
    output.push_str("--- stderr ---\n");
    output.push_str(if stderr.is_empty() {
        "(empty)"
    } else {
        &stderr
    });
    if outcome.pipes_abandoned {
        output.push_str(
            "\n[note: background processes kept the output open after the main process exited; later output was not captured]",
        );
    }
    let mut result = match outcome.ending {
        Ending::Exited(0) => ToolResult::ok(output),
        Ending::Exited(c) => ToolResult {
            success: false,
            output,
            error: Some(format!("{what} exited with code {c}")),
            ..Default::default()
        },
        Ending::Signaled(s) => ToolResult {
            success: false,
            output,
            error: Some(format!(
                "{what} was killed by signal {s}{}",
                match s {
                    9 => " (SIGKILL: out of memory or a resource limit?)",
                    24 => " (SIGXCPU: CPU time limit reached)",
                    25 => " (SIGXFSZ: file size limit reached)",
                    _ => "",
                }
            )),
            ..Default::default()
        },
        Ending::TimedOut => ToolResult {
            success: false,
            output,
            error: Some(format!(
                "{what} timed out after {}s and its process group was killed; split the work into shorter steps",
                timeout.as_secs()
            )),
            ..Default::default()
        },
        Ending::Cancelled => ToolResult {
            success: false,
            output,
            error: Some("operation cancelled by user".into()),
            ..Default::default()
        },
    };
    result = result.with_meta("pid", json!(outcome.pid));
    if let Ending::Exited(c) = outcome.ending {
        result = result.with_meta("exit_code", json!(c));
    }
    result
}

/// Bytes of each stream kept in the display data (the model's text has it all).
const DISPLAY_STREAM_CAP: usize = 32 * 1024;

/// The display data of a finished command: `command` as given, `host` for
/// remote ones.
pub(crate) fn display(
    outcome: &RunOutcome,
    command: &str,
    host: Option<&str>,
    timeout: Duration,
) -> ToolDisplay {
    let (exit_code, stopped) = match outcome.ending {
        Ending::Exited(c) => (Some(c), None),
        Ending::Signaled(s) => (None, Some(Stopped::Signal { signal: s })),
        Ending::TimedOut => (
            None,
            Some(Stopped::Timeout {
                secs: timeout.as_secs(),
            }),
        ),
        Ending::Cancelled => (None, Some(Stopped::Cancelled)),
    };
    let (stdout, cut_out) = cap(outcome.stdout.text());
    let (stderr, cut_err) = cap(outcome.stderr.text());
    ToolDisplay::Command(CommandDisplay {
        command: command.to_string(),
        host: host.map(String::from),
        exit_code,
        stopped,
        stdout,
        stderr,
        truncated: cut_out || cut_err || outcome.stdout.truncated() || outcome.stderr.truncated(),
        duration_ms: Some(u64::try_from(outcome.elapsed.as_millis()).unwrap_or(u64::MAX)),
    })
}

/// `s` cut to [`DISPLAY_STREAM_CAP`] bytes on a char boundary; whether it was cut.
fn cap(mut s: String) -> (String, bool) {
    if s.len() <= DISPLAY_STREAM_CAP {
        return (s, false);
    }
    let mut cut = DISPLAY_STREAM_CAP;
    while !s.is_char_boundary(cut) {
        cut -= 1;
    }
    s.truncate(cut);
    (s, true)
}
