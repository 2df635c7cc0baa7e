//! The one-line summary under a finished tool card: what a user wants to
//! know at a glance, not the first line of the raw result.
//!
//! Commands (terminal, ssh_exec, code_exec): the exit status and the first
//! line of output; web pages: the title; file reads: the path and size;
//! everything else: the first non-empty line of the result.
use crate::ui::format::preview;
use serde_json::Value;
use std::time::Duration;

const STATUS_PREFIXES: [&str; 4] = [
    "exit code:",
    "killed by signal",
    "timed out",
    "cancelled by",
];

/// The summary line (not cut to a width).
pub(crate) fn summary(args: &Value, result: &str, success: bool) -> String {
    let first = result.lines().next().unwrap_or("").trim();
    if STATUS_PREFIXES.iter().any(|p| first.starts_with(p)) {
        return command_summary(first, result);
    }
    if !success {
        // A failure says what went wrong in its first line.
        return preview(result, 400);
    }
    if let Some(title) = result
        .lines()
        .take(5)
        .find_map(|l| l.strip_prefix("Title: "))
    {
        let url = result
            .lines()
            .take(6)
            .find_map(|l| l.strip_prefix("URL: "))
            .unwrap_or("");
        return if url.is_empty() {
            title.trim().to_string()
        } else {
            format!("{} · {}", title.trim(), url.trim())
        };
    }
    let action = args.get("action").and_then(Value::as_str).unwrap_or("");
    if action == "read"
        && let Some(path) = args.get("path").and_then(Value::as_str)
    {
        let lines = result.lines().count();
        let plural = if lines == 1 { "" } else { "s" };
        return format!("{path} · {lines} line{plural}, {}", size(result.len()));
    }
    preview(result, 400)
}

fn command_summary(status: &str, result: &str) -> String {
    let status = status.replacen("exit code:", "exit", 1);
    let out = result
        .split("--- stdout ---")
        .nth(1)
        .and_then(|rest| rest.split("--- stderr ---").next())
        .and_then(|s| {
            s.lines()
                .map(str::trim)
                .find(|l| !l.is_empty() && *l != "(empty)")
        });
    let err = result.split("--- stderr ---").nth(1).and_then(|s| {
        s.lines()
            .map(str::trim)
            .find(|l| !l.is_empty() && *l != "(empty)")
    });
    match out.or(err) {
        Some(l) => format!("{status} · {l}"),
        None => format!("{status} · no output"),
    }
}

fn size(n: usize) -> String {
    if n >= 1024 * 1024 {
        format!("{:.1} MB", n as f64 / (1024.0 * 1024.0))
    } else if n >= 1024 {
        format!("{:.1} KB", n as f64 / 1024.0)
    } else {
        format!("{n} B")
    }
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
    use serde_json::json;

    #[test]
    fn commands_show_exit_status_and_first_output() {
        let r = "exit code: 2\n--- stdout ---\n(empty)\n--- stderr ---\nmake: *** No rule to make target\n";
        assert_eq!(
            summary(&json!({}), r, true),
            "exit 2 · make: *** No rule to make target"
        );
        let r = "exit code: 0\n--- stdout ---\nok 12 tests\n--- stderr ---\n(empty)";
        assert_eq!(summary(&json!({}), r, true), "exit 0 · ok 12 tests");
        let r = "exit code: 0\n--- stdout ---\n(empty)\n--- stderr ---\n(empty)";
        assert_eq!(summary(&json!({}), r, true), "exit 0 · no output");
    }

    #[test]
    fn pages_show_their_title_and_reads_their_size() {
        let r = "Title: Rust Book\nURL: https://doc.rust-lang.org/book/\n\nbody";
        assert_eq!(
            summary(&json!({}), r, true),
            "Rust Book · https://doc.rust-lang.org/book/"
        );
        let args = json!({"action": "read", "path": "src/main.rs"});
        assert_eq!(summary(&args, "a\nb\n", true), "src/main.rs · 2 lines, 4 B");
        assert_eq!(
            summary(&json!({}), "wrote 3 B to /tmp/x", true),
            "wrote 3 B to /tmp/x"
        );
        let failed = "error: /x does not exist\nmore";
        assert_eq!(summary(&args, failed, false), "error: /x does not exist…");
        assert_eq!(duration(Duration::from_millis(4200)), "4.2s");
        assert_eq!(duration(Duration::from_secs(125)), "2m05s");
    }
}
