//! `/export`: a session's replayed history as a Markdown document.
use crate::protocol::{AgentEvent, PINNED_NOTE};
use crate::session::SessionMeta;

/// The transcript as Markdown.
pub(crate) fn export_markdown(meta: &SessionMeta, history: &[AgentEvent]) -> String {
    let title = if meta.title.is_empty() {
        "Navi session"
    } else {
        &meta.title
    };
    let mut md = format!(
        "# {title}\n\nSession `{}`, profile `{}`\n\n",
        meta.id, meta.profile_id
    );
    for ev in history {
        match ev {
            AgentEvent::Notice { message } => md.push_str(&format!("> {message}\n\n")),
            AgentEvent::Error { message } => md.push_str(&format!("> error: {message}\n\n")),
            AgentEvent::ContextSummary { summary } => md.push_str(&format!(
                "> summary of earlier conversation:\n> {}\n\n",
                summary.trim().replace('\n', "\n> ")
            )),
            AgentEvent::PlanReady { plan } => md.push_str(&format!("## Plan\n\n{plan}\n\n")),
            AgentEvent::UserMessage {
                message, pinned, ..
            } => {
                md.push_str(&format!("## You\n\n{message}\n\n"));
                if *pinned {
                    md.push_str(&format!("> {PINNED_NOTE}\n\n"));
                }
            }
            AgentEvent::AgentMessage { content, pinned } => {
                if !content.is_empty() {
                    md.push_str(&format!("## Navi\n\n{content}\n\n"));
                }
                if *pinned {
                    md.push_str(&format!("> {PINNED_NOTE}\n\n"));
                }
            }
            AgentEvent::ToolStarted { tool, args, .. } => {
                md.push_str(&format!("**→ {tool}** `{args}`\n\n"));
            }
            AgentEvent::ToolCall {
                tool,
                result,
                success,
                ..
            } => {
                let mark = if *success { "✓" } else { "✗" };
                md.push_str(&format!(
                    "{mark} `{tool}`:\n\n```\n{}\n```\n\n",
                    result.trim_end()
                ));
            }
            _ => {}
        }
    }
    md
}
