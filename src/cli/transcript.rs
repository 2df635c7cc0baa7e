//! `navi sessions show`: a session's replayed history as text. It reads
//! events, never rows. (`navi sessions export --format md` and `/export` share
//! `ui::commands::export_markdown`.)
//!
//! Both commands stream: the history is read and written a page at a time
//! (`session::replay::Pages`), so memory does not grow with it. The listing
//! of consecutive pages is the listing of the whole (a page starts at a user
//! message), and [`json_field`]/[`json_row`] lay a `--json`/`--format json`
//! document out exactly as `serde_json::to_string_pretty` lays out the whole
//! object (members in the order written, two-space indents).
use super::{Failure, out};
use crate::app::Transcript;
use crate::protocol::AgentEvent;
use serde::Serialize;

/// `navi sessions show ID [--json]`, streamed.
pub(crate) fn show(mut t: Transcript<'_>, json: bool) -> Result<u8, Failure> {
    let (meta, account) = (&t.meta, &t.account);
    let head = if json {
        // The members in the order navi always wrote them.
        let context = serde_json::json!({ "tokens": account.used, "window": account.window });
        format!(
            "{{\n{}{}  \"messages\": [",
            json_field("session", meta, true),
            json_field("context", &context, true)
        )
    } else {
        let title = if meta.title.is_empty() {
            "(untitled)"
        } else {
            &meta.title
        };
        format!(
            "# {title} ({}, profile {})\ncontext: {}\n",
            meta.id,
            meta.profile_id,
            account.describe()
        )
    };
    out::text(&head)?;
    let mut first = true;
    while let Some((rows, events)) = t.next_page()? {
        let chunk = if json {
            let mut s = String::new();
            for m in &rows {
                s.push_str(&json_row(m, first));
                first = false;
            }
            s
        } else {
            listing(&events)
        };
        out::text(&chunk)?;
    }
    if json {
        out::line(&format!("{}}}", json_array_end(!first, false)))?;
    }
    Ok(0)
}

/// `"key": value` as a member of a pretty-printed top-level object, with
/// the comma when more members follow.
pub(crate) fn json_field(key: &str, value: &impl Serialize, more: bool) -> String {
    let v = serde_json::to_string_pretty(value).unwrap_or_else(|_| "null".into());
    format!(
        "  {}: {}{}\n",
        serde_json::Value::from(key),
        v.replace('\n', "\n  "),
        if more { "," } else { "" }
    )
}

/// One element of a top-level member's array (`first`: the array's first).
pub(crate) fn json_row(value: &impl Serialize, first: bool) -> String {
    let v = serde_json::to_string_pretty(value).unwrap_or_else(|_| "null".into());
    format!(
        "{}\n    {}",
        if first { "" } else { "," },
        v.replace('\n', "\n    ")
    )
}

/// The end of a member's array (`any`: it had elements).
pub(crate) fn json_array_end(any: bool, more: bool) -> String {
    format!(
        "{}]{}\n",
        if any { "\n  " } else { "" },
        if more { "," } else { "" }
    )
}

/// The plain listing of `navi sessions show`: one `[who]` header per entry.
pub(crate) fn listing(history: &[AgentEvent]) -> String {
    let mut out = String::new();
    let mut in_answer = false;
    let head = |out: &mut String, who: &str, pinned: bool| {
        out.push_str(&format!(
            "\n[{who}]{}\n",
            if pinned { " 📌 pinned" } else { "" }
        ));
    };
    for ev in history {
        let answer = matches!(
            ev,
            AgentEvent::AgentMessage { .. } | AgentEvent::ToolStarted { .. }
        );
        match ev {
            AgentEvent::UserMessage {
                message, pinned, ..
            } => {
                head(&mut out, "user", *pinned);
                push_text(&mut out, message);
            }
            AgentEvent::AgentMessage { content, pinned } => {
                head(&mut out, "assistant", *pinned);
                push_text(&mut out, content);
            }
            AgentEvent::ToolStarted { tool, args, .. } => {
                if !in_answer {
                    head(&mut out, "assistant", false);
                }
                out.push_str(&format!("→ {tool}({args})\n"));
            }
            AgentEvent::ToolCall { tool, result, .. } => {
                head(&mut out, &format!("tool {tool}"), false);
                push_text(&mut out, result);
            }
            AgentEvent::PlanReady { plan } => {
                head(&mut out, "plan", false);
                push_text(&mut out, plan);
            }
            AgentEvent::Notice { message } => {
                head(&mut out, "notice", false);
                push_text(&mut out, message);
            }
            AgentEvent::Error { message } => {
                head(&mut out, "error", false);
                push_text(&mut out, message);
            }
            AgentEvent::ContextSummary { summary } => {
                head(&mut out, "summary", false);
                push_text(&mut out, summary);
            }
            _ => {}
        }
        in_answer = answer;
    }
    out
}

fn push_text(out: &mut String, text: &str) {
    if !text.is_empty() {
        out.push_str(text);
        out.push('\n');
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn streamed_json_is_laid_out_like_the_whole_object() {
        for rows in [
            vec![],
            vec![json!({"a": 1, "b": "x\ny"}), json!({"c": [1, 2]})],
        ] {
            let whole = json!({"context": {"tokens": 3}, "messages": rows, "session": {"id": "s"}});
            let mut s = String::from("{\n");
            s.push_str(&json_field("context", &json!({"tokens": 3}), true));
            s.push_str("  \"messages\": [");
            for (i, r) in rows.iter().enumerate() {
                s.push_str(&json_row(r, i == 0));
            }
            s.push_str(&json_array_end(!rows.is_empty(), true));
            s.push_str(&json_field("session", &json!({"id": "s"}), false));
            s.push('}');
            assert_eq!(s, serde_json::to_string_pretty(&whole).unwrap());
        }
    }
}
