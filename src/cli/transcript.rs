//! `navi sessions show`: a session's replayed history as text. It reads
//! events, never rows. (`navi sessions export --format md` and `/export` share
//! `ui::commands::export_markdown`.)
use crate::protocol::AgentEvent;

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
