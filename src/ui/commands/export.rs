//! `/export` and `navi sessions export --format md`: a session's replayed
//! history as one Markdown document. Both front ends call `export_markdown`,
//! so the two files have the same headings.
use crate::protocol::SessionMeta;
use crate::protocol::{AgentEvent, PINNED_NOTE};

/// The whole document: the title, the session line, then the transcript.
pub(crate) fn export_markdown(meta: &SessionMeta, history: &[AgentEvent]) -> String {
    let mut md = export_header(meta);
    md.push_str(&export_body(history));
    md
}

/// The title and the session line (`navi sessions export` streams the
/// body after it, a page of history at a time).
pub(crate) fn export_header(meta: &SessionMeta) -> String {
    let title = if meta.title.is_empty() {
        "(untitled)"
    } else {
        &meta.title
    };
    format!(
        "# {title}\n\nSession `{}` · profile `{}`\n",
        meta.id, meta.profile_id
    )
}

/// The transcript after its title. The body of consecutive pieces of a
/// history that each start at a user message is the body of the whole.
pub(crate) fn export_body(history: &[AgentEvent]) -> String {
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
