//! What the full-screen UI leaves in the terminal's scrollback when it quits
//! (it runs on the alternate screen, which the terminal throws away).
//!
//! Invariants: plain text (no escape sequences), written after the terminal
//! was restored; the resume hint names the session id, which `--session`
//! accepts, and is printed only for a session that holds messages.
use super::cells::{CellKind, ToolStatus};
use super::state::TuiState;
use crate::config::Scrollback;

/// The text to print on quit; empty when there is nothing worth keeping.
pub fn farewell(st: &TuiState, mode: Scrollback) -> String {
    let has_messages = st.session.as_ref().is_some_and(|m| m.message_count > 0)
        || st
            .transcript
            .cells
            .iter()
            .any(|c| matches!(c.kind, CellKind::User(_)));
    if !has_messages {
        return String::new();
    }
    let mut out = String::new();
    match mode {
        Scrollback::None => {}
        Scrollback::Last => {
            let last = if st.last_answer.trim().is_empty() {
                st.transcript
                    .cells
                    .iter()
                    .rev()
                    .find_map(|c| match &c.kind {
                        CellKind::Assistant(d) if !d.text.trim().is_empty() => Some(d.text.clone()),
                        _ => None,
                    })
            } else {
                Some(st.last_answer.clone())
            };
            if let Some(a) = last {
                out.push_str(a.trim_end());
                out.push_str("\n\n");
            }
        }
        Scrollback::Full => {
            for c in &st.transcript.cells {
                if let Some(t) = cell_text(&c.kind) {
                    out.push_str(t.trim_end());
                    out.push_str("\n\n");
                }
            }
        }
    }
    out.push_str(&format!(
        "resume with: navi --session {}\n",
        st.status.session_id
    ));
    out
}

fn prefixed(mark: &str, text: &str) -> String {
    let pad = " ".repeat(mark.chars().count());
    text.trim_end()
        .lines()
        .enumerate()
        .map(|(i, l)| {
            if i == 0 {
                format!("{mark}{l}")
            } else {
                format!("{pad}{l}")
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The scrollback text of one cell. The match names every kind (no `_`
/// arm), so a new `CellKind` does not compile until it says whether it is
/// kept in the scrollback.
fn cell_text(kind: &CellKind) -> Option<String> {
    Some(match kind {
        CellKind::User(t) => prefixed("› ", t),
        CellKind::Assistant(d) if d.text.trim().is_empty() => return None,
        CellKind::Assistant(d) => prefixed("• ", &d.text),
        CellKind::Tool(card) => {
            let mark = match card.status {
                ToolStatus::Pending => "…",
                ToolStatus::Done => "✓",
                ToolStatus::Failed => "✗",
            };
            let first = card.result.lines().next().unwrap_or("").trim();
            format!("{mark} {}  {first}", card.tool)
        }
        CellKind::Notice(t) => prefixed("· ", t),
        CellKind::Warning(t) => prefixed("⚠ ", t),
        CellKind::Error(t) => prefixed("✗ ", t),
        CellKind::Changes { summary, .. } => prefixed("± ", summary),
        // Thinking, plans and command output stay on the screen only.
        CellKind::Thinking { .. } | CellKind::Plan(_) | CellKind::Info(_) => return None,
    })
}
