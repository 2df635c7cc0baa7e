//! A `terminal` command run in the editor's terminal
//! ([`super::client::ClientSide::run`]) and what the model reads of it.
//!
//! Invariants: the same report as a local run (status line, the output,
//! the same errors for a non-zero exit, a signal, the time limit and a
//! stop), except that the editor's terminal has one stream (stdout and
//! stderr together) and says so; a terminal the editor killed ends the
//! call with the output there was and the signal.
use super::ToolResult;
use super::client::{ClientExit, ClientSide};
use super::exec_report::report_capped;
use super::process::{Captured, Ending, RunOutcome};
use std::time::Duration;

/// The signal number of a name the client gives (`SIGKILL`, `KILL`, `9`).
fn signal_number(name: &str) -> Option<i32> {
    let n = name.trim();
    if let Ok(v) = n.parse::<i32>() {
        return Some(v);
    }
    let bare = n.strip_prefix("SIG").unwrap_or(n);
    let table = [
        ("HUP", 1),
        ("INT", 2),
        ("QUIT", 3),
        ("ILL", 4),
        ("TRAP", 5),
        ("ABRT", 6),
        ("BUS", 7),
        ("FPE", 8),
        ("KILL", 9),
        ("USR1", 10),
        ("SEGV", 11),
        ("USR2", 12),
        ("PIPE", 13),
        ("ALRM", 14),
        ("TERM", 15),
        ("XCPU", 24),
        ("XFSZ", 25),
    ];
    table
        .iter()
        .find(|(s, _)| bare.eq_ignore_ascii_case(s))
        .map(|(_, v)| *v)
}

/// How the run ended, as a local run would say it.
fn ending(exit: &ClientExit) -> Ending {
    if exit.cancelled {
        Ending::Cancelled
    } else if exit.timed_out {
        Ending::TimedOut
    } else if let Some(s) = &exit.signal {
        Ending::Signaled(signal_number(s).unwrap_or(0))
    } else {
        Ending::Exited(exit.exit_code.map_or(-1, |c| c as i32))
    }
}

/// The run as the local report's input: all output on stdout.
pub(crate) fn outcome(exit: &ClientExit, limit: usize) -> RunOutcome {
    RunOutcome {
        pid: 0,
        ending: ending(exit),
        stdout: Captured::of(exit.output.as_bytes(), limit),
        stderr: Captured::of(&[], limit),
        pipes_abandoned: false,
        elapsed: exit.elapsed,
        sandbox_notes: Vec::new(),
    }
}

/// What the model reads of a command the editor ran.
pub(crate) fn report(
    exit: &ClientExit,
    outcome: &RunOutcome,
    timeout: Duration,
    max_line: usize,
) -> ToolResult {
    let mut r = report_capped(outcome, "the command", timeout, max_line);
    r.output = r
        .output
        .replacen(
            "--- stdout ---",
            "--- output (the editor's terminal: stdout and stderr together) ---",
            1,
        )
        .replacen("--- stderr ---\n(empty)", "", 1)
        .trim_end()
        .to_string();
    if exit.truncated {
        r.output
            .push_str("\n[note: the editor's terminal kept only the end of the output]");
    }
    if let (Some(s), Ending::Signaled(0)) = (&exit.signal, &outcome.ending) {
        r.output = r
            .output
            .replacen("killed by signal 0", &format!("killed by signal {s}"), 1);
        r.error = Some(format!("the command was killed by signal {s}"));
    }
    r.metadata.remove("pid");
    r
}

/// Runs `cmd` through `client` and reports it; `Err` when the editor
/// could not start it (nothing ran).
/// With `policy` (the command ran under `navi __sandbox-exec` with it),
/// the steps after a local sandboxed run follow: git metadata the command
/// made is neutralised, and a denial gets the same note.
pub(crate) async fn run(
    client: &dyn ClientSide,
    cmd: super::client::ClientCommand,
    cancel: &tokio_util::sync::CancellationToken,
    (command, max_line, limit): (&str, usize, usize),
    policy: Option<&crate::sandbox::Policy>,
) -> Result<ToolResult, String> {
    let timeout = cmd.timeout;
    let ran = client.run(cmd, cancel).await;
    let mut outcome_notes = Vec::new();
    if let Some(p) = policy {
        // Also when the editor failed: the command may have run part-way.
        outcome_notes = crate::sandbox::git_sweep::after_call(p);
    }
    let exit = ran?;
    let mut outcome = outcome(&exit, limit);
    outcome.sandbox_notes = outcome_notes;
    let mut result = report(&exit, &outcome, timeout, max_line);
    super::sandbox_denial::annotate(&mut result, &outcome, policy);
    result.display = Some(super::exec_report::display(
        &outcome, command, None, timeout,
    ));
    Ok(result)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn exit(output: &str) -> ClientExit {
        ClientExit {
            output: output.into(),
            ..Default::default()
        }
    }

    #[test]
    fn exits_signals_and_stops_read_like_local_runs() {
        let t = Duration::from_secs(5);
        let ok = ClientExit {
            exit_code: Some(0),
            ..exit("hello\n")
        };
        let r = report(&ok, &outcome(&ok, 1000), t, 1000);
        assert!(r.success);
        assert!(r.output.starts_with("exit code: 0"), "{}", r.output);
        assert!(r.output.contains("hello"));
        assert!(!r.output.contains("stderr ---"), "{}", r.output);

        let bad = ClientExit {
            exit_code: Some(3),
            ..exit("")
        };
        let r = report(&bad, &outcome(&bad, 1000), t, 1000);
        assert!(!r.success);
        assert!(r.error.unwrap().contains("code 3"));

        let killed = ClientExit {
            signal: Some("SIGKILL".into()),
            ..exit("part\n")
        };
        let r = report(&killed, &outcome(&killed, 1000), t, 1000);
        assert!(!r.success);
        assert!(r.output.contains("killed by signal 9"), "{}", r.output);
        assert!(r.output.contains("part"));

        let odd = ClientExit {
            signal: Some("terminated by editor".into()),
            ..exit("")
        };
        let r = report(&odd, &outcome(&odd, 1000), t, 1000);
        assert!(r.error.unwrap().contains("terminated by editor"));

        let late = ClientExit {
            timed_out: true,
            truncated: true,
            ..exit("x")
        };
        let r = report(&late, &outcome(&late, 1000), t, 1000);
        assert!(r.output.contains("timed out after 5s"), "{}", r.output);
        assert!(r.output.contains("kept only the end"));
    }

    #[test]
    fn signal_names() {
        assert_eq!(signal_number("SIGTERM"), Some(15));
        assert_eq!(signal_number("kill"), Some(9));
        assert_eq!(signal_number("2"), Some(2));
        assert_eq!(signal_number("nope"), None);
    }
}
