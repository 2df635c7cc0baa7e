//! Small text helpers shared by the front ends.
use serde_json::Value;

/// The first line of `s`, cut to `max` chars with an ellipsis.
pub(crate) use crate::app::preview;

/// The marker of a session row: `>` current, `*` pinned, else a space.
pub(crate) fn session_mark(s: &crate::protocol::SessionMeta, current: &str) -> &'static str {
    if s.id == current {
        ">"
    } else if s.pinned {
        "*"
    } else {
        " "
    }
}

/// A session's title, or `(untitled)`.
pub(crate) fn session_title(s: &crate::protocol::SessionMeta) -> &str {
    if s.title.is_empty() {
        "(untitled)"
    } else {
        &s.title
    }
}

/// The title as session lists and pickers show it: a pinned session's
/// begins with 📌 (also when it is the current one, whose row mark is `>`).
pub(crate) fn session_title_marked(s: &crate::protocol::SessionMeta) -> String {
    if s.pinned {
        format!("📌 {}", session_title(s))
    } else {
        session_title(s).to_string()
    }
}

/// Tool arguments as a short `key=value, …` string.
pub(crate) fn args_preview(args: &Value, max: usize) -> String {
    let s = match args {
        Value::Object(map) => map
            .iter()
            .map(|(k, v)| match v {
                Value::String(s) => format!("{k}={s:?}"),
                other => format!("{k}={other}"),
            })
            .collect::<Vec<_>>()
            .join(", "),
        Value::Null => String::new(),
        other => other.to_string(),
    };
    preview(&s.replace('\n', " "), max)
}

/// `12.3k/64k`: counts in thousands; a window that is a whole number of
/// KiB-tokens (8192, 65536, …) reads the way people name it (8k, 64k).
pub(crate) fn tokens_short(used: u64, max: u64) -> String {
    fn k(n: u64) -> String {
        if n >= 1000 {
            let v = n as f64 / 1000.0;
            if v >= 100.0 || v.fract() < 0.05 {
                format!("{v:.0}k")
            } else {
                format!("{v:.1}k")
            }
        } else {
            n.to_string()
        }
    }
    let window = if max >= 1024 && !max.is_multiple_of(1000) && max.is_multiple_of(1024) {
        format!("{}k", max / 1024)
    } else {
        k(max)
    };
    format!("{}/{window}", k(used))
}

/// One `/session list` row.
pub(crate) fn session_line(i: usize, s: &crate::protocol::SessionMeta, current: &str) -> String {
    let mark = session_mark(s, current);
    let title = session_title_marked(s);
    format!(
        "{mark}{:>3}  {}  {:<14} {:>4} msgs  {:>8}  {title}  ({})",
        i + 1,
        &s.id[..8.min(s.id.len())],
        s.profile_id,
        s.message_count,
        ago(s.last_active),
        session_project(s)
    )
}

/// Where a session belongs, as lists show it: its project directory
/// (`~/…` under the home directory), or `no project` for sessions stored
/// before navi recorded one.
pub(crate) fn session_project(s: &crate::protocol::SessionMeta) -> String {
    s.project
        .as_deref()
        .map(crate::project::display)
        .unwrap_or_else(|| "no project".into())
}

/// The last part of a session's project directory, for narrow lists;
/// `None` for a session of no project.
pub(crate) fn session_project_name(s: &crate::protocol::SessionMeta) -> Option<String> {
    let p = s.project.as_deref()?;
    Some(
        std::path::Path::new(p)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| p.to_string()),
    )
}

/// The `/session list` row of the current session while nothing was sent
/// in it: it has no database row yet, so no position either.
pub(crate) fn pending_session_line(s: &crate::protocol::SessionMeta) -> String {
    format!(
        ">  -  {}  {:<14} {:>4} msgs  {:>8}  {}(new session)",
        &s.id[..8.min(s.id.len())],
        s.profile_id,
        0,
        "now",
        if s.title.is_empty() {
            String::new()
        } else {
            format!("{} ", s.title)
        }
    )
}

/// "3m ago", "2h ago", "5d ago".
pub(crate) fn ago(ms: i64) -> String {
    let s = ((crate::protocol::now_ms() - ms) / 1000).max(0);
    match s {
        0..=59 => format!("{s}s ago"),
        60..=3599 => format!("{}m ago", s / 60),
        3600..=86_399 => format!("{}h ago", s / 3600),
        _ => format!("{}d ago", s / 86_400),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn previews() {
        assert_eq!(preview("hello\nworld", 20), "hello…");
        assert_eq!(preview("abcdef", 3), "abc…");
        assert_eq!(
            args_preview(&serde_json::json!({"command": "ls -la"}), 40),
            "command=\"ls -la\""
        );
        assert_eq!(tokens_short(12_345, 65_536), "12.3k/64k");
        assert_eq!(tokens_short(900, 8192), "900/8k");
        assert_eq!(tokens_short(2048, 128_000), "2k/128k");
    }
}
