//! What a tool result looks like to a front end, beside the text the model
//! reads: [`ToolDisplay`].
//!
//! The model's text is written for the model (and may change wording); front
//! ends draw their cards from this typed data instead of parsing that text.
//! It rides on `tool_call` events as `display`, is stored with the tool row,
//! and is replayed with it, so a resumed session shows the same cards.
//! Results without it (older sessions, user tools, most built-ins) are shown
//! as plain text.
//!
//! Invariant: additive only. A kind or field is never renamed or removed; a
//! stored value this build cannot read is treated as absent.

use serde::{Deserialize, Serialize};

/// Structured data about one tool result, for display only.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ToolDisplay {
    /// A command line ran (`terminal`, `ssh_exec`, `code_exec`).
    Command(CommandDisplay),
    /// A file was written or appended to (`filesystem`).
    FileWrite(FileWriteDisplay),
    /// Lines of a text file were read (`filesystem` read).
    FileRead {
        path: String,
        /// The first and last line shown (1-based, inclusive).
        first_line: u64,
        last_line: u64,
        /// Lines in the whole file, when counted.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        total_lines: Option<u64>,
    },
    /// A web page or other URL was fetched (`web_view`, `http_request`).
    Web {
        /// The URL after redirects.
        url: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        title: Option<String>,
        /// The HTTP status, when a response came.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        status: Option<u16>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        content_type: Option<String>,
    },
    /// A search ran (`web_search`).
    Search { query: String, hits: usize },
    /// The result carried images (`image_view`, MCP tools).
    Images {
        count: usize,
        /// Their MIME types, in order.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        mime: Vec<String>,
    },
    /// Anything else: one line that sums the result up.
    Summary { text: String },
}

/// A finished command.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CommandDisplay {
    /// The command line as given (for `code_exec`, `python3`).
    pub command: String,
    /// The SSH host it ran on (`ssh_exec`); absent for local commands.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// The exit code; absent when the process did not exit by itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// Why the process was stopped, when it did not exit by itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<Stopped>,
    pub stdout: String,
    pub stderr: String,
    /// Some output was dropped (the per-stream limit, or the display cap).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
    /// How long it ran, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
}

/// Why a command did not exit by itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum Stopped {
    /// Killed by a signal (out of memory, a resource limit, …).
    Signal { signal: i32 },
    /// Ran past its time limit; its process group was killed.
    Timeout { secs: u64 },
    /// The user stopped it.
    Cancelled,
}

/// A file written or appended to.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FileWriteDisplay {
    /// The path written (resolved).
    pub path: String,
    /// The file did not exist before.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub created: bool,
    /// The content was appended rather than replacing the file.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub appended: bool,
    /// The file's size afterwards, in bytes.
    pub bytes: u64,
    /// Lines added and removed.
    pub added: u64,
    pub removed: u64,
    /// The change as a unified diff; absent for binary or very large files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
}

impl ToolDisplay {
    /// One line that sums the result up (without the tool's name).
    pub fn summary(&self) -> String {
        match self {
            ToolDisplay::Command(c) => c.summary(),
            ToolDisplay::FileWrite(w) => {
                let verb = match (w.created, w.appended) {
                    (true, _) => "created",
                    (false, true) => "appended to",
                    (false, false) => "wrote",
                };
                format!(
                    "{verb} {} · +{} -{} · {}",
                    w.path,
                    w.added,
                    w.removed,
                    size(w.bytes)
                )
            }
            ToolDisplay::FileRead {
                path,
                first_line,
                last_line,
                total_lines,
            } => {
                let total = total_lines.map(|t| format!(" of {t}")).unwrap_or_default();
                format!("{path} · lines {first_line}-{last_line}{total}")
            }
            ToolDisplay::Web {
                url,
                title,
                status,
                content_type,
            } => {
                let mut parts: Vec<String> = Vec::new();
                if let Some(t) = title.as_deref().map(str::trim).filter(|t| !t.is_empty()) {
                    parts.push(t.to_string());
                }
                parts.push(url.clone());
                match status {
                    Some(s) if *s >= 300 || title.is_none() => parts.push(format!("HTTP {s}")),
                    _ => {}
                }
                if title.is_none()
                    && let Some(ct) = content_type
                {
                    parts.push(ct.clone());
                }
                parts.join(" · ")
            }
            ToolDisplay::Search { query, hits } => {
                let plural = if *hits == 1 { "" } else { "s" };
                format!("{hits} result{plural} for \"{query}\"")
            }
            ToolDisplay::Images { count, mime } => {
                let plural = if *count == 1 { "" } else { "s" };
                let mut kinds: Vec<&str> = mime.iter().map(String::as_str).collect();
                kinds.dedup();
                if kinds.is_empty() {
                    format!("{count} image{plural}")
                } else {
                    format!("{count} image{plural} ({})", kinds.join(", "))
                }
            }
            ToolDisplay::Summary { text } => text.clone(),
        }
    }
}

impl CommandDisplay {
    /// `exit 0`, `killed by signal 9`, `timed out after 30s`, `cancelled`.
    pub fn status(&self) -> String {
        match (self.stopped, self.exit_code) {
            (Some(Stopped::Signal { signal }), _) => format!("killed by signal {signal}"),
            (Some(Stopped::Timeout { secs }), _) => format!("timed out after {secs}s"),
            (Some(Stopped::Cancelled), _) => "cancelled".into(),
            (None, Some(c)) => format!("exit {c}"),
            (None, None) => "finished".into(),
        }
    }

    /// The status and the output's meaningful line (see
    /// [`meaningful_line`]): from stdout first when the command succeeded,
    /// from stderr first when it failed (where the error is).
    pub fn summary(&self) -> String {
        let status = match &self.host {
            Some(h) => format!("{} on {h}", self.status()),
            None => self.status(),
        };
        let ok = self.exit_code == Some(0) && self.stopped.is_none();
        let (a, b) = if ok {
            (&self.stdout, &self.stderr)
        } else {
            (&self.stderr, &self.stdout)
        };
        match meaningful_line(a).or_else(|| meaningful_line(b)) {
            Some(l) => format!("{status} · {l}"),
            None => format!("{status} · no output"),
        }
    }
}

/// The line of a command's output that says how it went: the last line
/// that is not blank and not a separator (a row of `-`, `=`, `.`…), with
/// separator runs around it cut (`=== 3 passed ===` → `3 passed`). A short
/// verdict after a blank line (unittest's `OK`) keeps the line before it:
/// `Ran 3 tests in 0.001s · OK`.
pub(crate) fn meaningful_line(text: &str) -> Option<String> {
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    let last = lines.iter().rposition(|l| !is_separator(l))?;
    let verdict = strip_rules(lines[last]);
    let short = verdict.chars().count() <= 16 && verdict.split_whitespace().count() <= 3;
    if short
        && last > 0
        && is_separator(lines[last - 1])
        && let Some(prev) = lines[..last].iter().rposition(|l| !is_separator(l))
    {
        return Some(format!("{} · {verdict}", strip_rules(lines[prev])));
    }
    Some(verdict)
}

/// Blank, or made only of rule characters (`-----`, `=====`, `....`, `───`).
fn is_separator(line: &str) -> bool {
    line.chars().all(|c| c.is_whitespace() || is_rule_char(c))
}

fn is_rule_char(c: char) -> bool {
    matches!(c, '-' | '=' | '_' | '*' | '~' | '#' | '+' | '.' | ':' | '|')
        || ('\u{2500}'..='\u{257f}').contains(&c)
}

/// Cuts runs of three or more rule characters at either end of a line;
/// the text between keeps its own spacing.
fn strip_rules(line: &str) -> String {
    let rule = |w: &str| w.chars().count() >= 3 && w.chars().all(is_rule_char);
    let mut t = line.trim();
    while let Some((first, rest)) = t.split_once(char::is_whitespace) {
        if !rule(first) {
            break;
        }
        t = rest.trim_start();
    }
    while let Some((rest, last)) = t.rsplit_once(char::is_whitespace) {
        if !rule(last) {
            break;
        }
        t = rest.trim_end();
    }
    if t.is_empty() || rule(t) {
        return line.trim().to_string();
    }
    t.to_string()
}

/// `512 B`, `3.4 KB`, `1.2 MB`.
fn size(n: u64) -> String {
    if n >= 1024 * 1024 {
        format!("{:.1} MB", n as f64 / (1024.0 * 1024.0))
    } else if n >= 1024 {
        format!("{:.1} KB", n as f64 / 1024.0)
    } else {
        format!("{n} B")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_command_is_tagged_and_omits_what_it_lacks() {
        let d = ToolDisplay::Command(CommandDisplay {
            command: "make".into(),
            exit_code: Some(2),
            stderr: "make: *** No rule\n".into(),
            ..Default::default()
        });
        let v = serde_json::to_value(&d).unwrap_or_default();
        assert_eq!(
            v,
            json!({"kind": "command", "command": "make", "exit_code": 2,
                   "stdout": "", "stderr": "make: *** No rule\n"})
        );
        assert_eq!(d.summary(), "exit 2 · make: *** No rule");
        let back: ToolDisplay = serde_json::from_value(v).unwrap_or(ToolDisplay::Summary {
            text: String::new(),
        });
        assert_eq!(back, d);
    }

    #[test]
    fn stopped_commands_say_why() {
        let mut c = CommandDisplay {
            command: "sleep 99".into(),
            stopped: Some(Stopped::Timeout { secs: 5 }),
            ..Default::default()
        };
        assert_eq!(c.summary(), "timed out after 5s · no output");
        c.stopped = Some(Stopped::Signal { signal: 9 });
        c.host = Some("web1".into());
        assert_eq!(c.summary(), "killed by signal 9 on web1 · no output");
        let v = serde_json::to_value(Stopped::Cancelled).unwrap_or_default();
        assert_eq!(v, json!({"reason": "cancelled"}));
    }

    #[test]
    fn summaries_of_the_other_kinds() {
        let w = ToolDisplay::FileWrite(FileWriteDisplay {
            path: "/w/a.txt".into(),
            created: true,
            bytes: 12,
            added: 2,
            ..Default::default()
        });
        assert_eq!(w.summary(), "created /w/a.txt · +2 -0 · 12 B");
        let r = ToolDisplay::FileRead {
            path: "src/main.rs".into(),
            first_line: 1,
            last_line: 40,
            total_lines: Some(90),
        };
        assert_eq!(r.summary(), "src/main.rs · lines 1-40 of 90");
        let p = ToolDisplay::Web {
            url: "https://doc.rust-lang.org/book/".into(),
            title: Some("Rust Book".into()),
            status: Some(200),
            content_type: Some("text/html".into()),
        };
        assert_eq!(p.summary(), "Rust Book · https://doc.rust-lang.org/book/");
        let s = ToolDisplay::Search {
            query: "tokio".into(),
            hits: 1,
        };
        assert_eq!(s.summary(), "1 result for \"tokio\"");
        let i = ToolDisplay::Images {
            count: 2,
            mime: vec!["image/png".into(), "image/png".into()],
        };
        assert_eq!(i.summary(), "2 images (image/png)");
    }

    #[test]
    fn a_command_summary_is_its_meaningful_line() {
        let unittest = ".\n---\n----------------------------------------------------------------------\nRan 3 tests in 0.001s\n\nOK\n";
        let c = CommandDisplay {
            exit_code: Some(0),
            stderr: unittest.into(),
            ..Default::default()
        };
        assert_eq!(c.summary(), "exit 0 · Ran 3 tests in 0.001s · OK");
        let pytest = "collected 3 items\n\nt.py ...  [100%]\n\n============ 3 passed in 0.02s ============\n";
        assert_eq!(
            meaningful_line(pytest).as_deref(),
            Some("3 passed in 0.02s")
        );
        assert_eq!(meaningful_line("=====\n-----\n\n"), None);
        assert_eq!(meaningful_line("a.txt\nb.txt\n").as_deref(), Some("b.txt"));
        let py = CommandDisplay {
            exit_code: Some(1),
            stdout: "starting\n".into(),
            stderr: "Traceback (most recent call last):\n  File \"x.py\"\nZeroDivisionError: division by zero\n".into(),
            ..Default::default()
        };
        assert_eq!(py.summary(), "exit 1 · ZeroDivisionError: division by zero");
        // `-rw-r--r--` is text, not a rule.
        assert_eq!(
            meaningful_line("-rw-r--r-- 1 root a\n").as_deref(),
            Some("-rw-r--r-- 1 root a")
        );
    }

    #[test]
    fn an_unknown_kind_does_not_parse() {
        let v = json!({"kind": "hologram", "x": 1});
        assert!(serde_json::from_value::<ToolDisplay>(v).is_err());
    }
}
