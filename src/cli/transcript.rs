//! `navi sessions show` and `navi sessions export --format md`: a session's
//! replayed history as text. Both read events, never rows.
use crate::protocol::{AgentEvent, PINNED_NOTE};

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

/// The Markdown of `navi sessions export --format md` (after its title).
pub(crate) fn markdown(history: &[AgentEvent]) -> String {
    let mut md = String::new();
    let mut in_answer = false;
    for ev in history {
        let answer = matches!(
            ev,
            AgentEvent::AgentMessage { .. } | AgentEvent::ToolStarted { .. }
        );
        match ev {
            AgentEvent::UserMessage {
                message,
                pinned,
                images,
            } => {
                section(&mut md, "User", message);
                if *images > 0 {
                    md.push_str(&format!("\n({images} image(s) attached)\n"));
                }
                if *pinned {
                    md.push_str(&format!("\n> {PINNED_NOTE}\n"));
                }
            }
            AgentEvent::AgentMessage { content, pinned } => {
                section(&mut md, "Assistant", content);
                if *pinned {
                    md.push_str(&format!("\n> {PINNED_NOTE}\n"));
                }
            }
            AgentEvent::ToolStarted { tool, args, .. } => {
                if !in_answer {
                    section(&mut md, "Assistant", "");
                }
                md.push_str(&format!("\n→ `{tool}({args})`\n"));
            }
            AgentEvent::ToolCall { tool, result, .. } => {
                md.push_str(&format!("\n## Tool result: {tool}\n\n"));
                if !result.is_empty() {
                    md.push_str(&format!("```\n{}\n```\n", result.trim_end()));
                }
            }
            AgentEvent::PlanReady { plan } => section(&mut md, "Plan", plan),
            AgentEvent::Notice { message } => section(&mut md, "Notice", message),
            AgentEvent::Error { message } => section(&mut md, "Error", message),
            AgentEvent::ContextSummary { summary } => {
                section(&mut md, "Summary of earlier conversation", summary)
            }
            _ => {}
        }
        in_answer = answer;
    }
    md
}

fn section(md: &mut String, heading: &str, text: &str) {
    md.push_str(&format!("\n## {heading}\n\n"));
    if !text.is_empty() {
        md.push_str(&format!("{}\n", text.trim_end()));
    }
}
