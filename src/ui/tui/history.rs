//! `TuiState::load_history`: a stored session's display history → the same
//! cells live events produce.
//!
//! Invariants: `MessageKind::Plan` → plan card, `Notice` → notice (an
//! `error: …` notice → error cell), role `tool` → the done/failed card of its
//! call (paired by id, `success` decides); a call stored without a result
//! shows as failed ("interrupted").
use super::cells::{Cell, CellKind, ToolCard};
use super::state::{RunState, TuiState};
use super::stream_doc::StreamDoc;
use crate::llm::Role;
use crate::session::{MessageKind, StoredMessage};
use serde_json::Value;

impl TuiState {
    /// Replaces the transcript with a stored session's display history.
    pub fn load_history(&mut self, history: &[StoredMessage]) {
        self.transcript.clear();
        self.tools.clear();
        self.open_assistant = None;
        self.open_thinking = None;
        self.last_answer.clear();
        for m in history {
            let content = &m.msg.content;
            match (m.kind, m.msg.role) {
                (MessageKind::Notice, _) | (_, Role::System) => {
                    match content.strip_prefix("error: ") {
                        Some(e) => self.push(CellKind::Error(e.to_string())),
                        None => self.push(CellKind::Notice(content.clone())),
                    };
                }
                (MessageKind::Plan, _) => {
                    self.push(CellKind::Plan(content.clone()));
                }
                (MessageKind::Summary, _) => {
                    self.push(CellKind::Notice(format!(
                        "summary of earlier conversation: {}",
                        crate::ui::format::preview(content, 200)
                    )));
                }
                (_, Role::User) => {
                    self.push(CellKind::User(content.clone()));
                }
                (_, Role::Assistant) => {
                    if let Some(t) = m.msg.thinking.as_ref().filter(|t| !t.trim().is_empty()) {
                        self.push(CellKind::Thinking {
                            text: t.clone(),
                            open: false,
                        });
                    }
                    if !content.trim().is_empty() {
                        self.push(CellKind::Assistant(StreamDoc::finished(content.clone())));
                        self.last_answer = content.clone();
                    }
                    for c in &m.msg.tool_calls {
                        let i = self.push(CellKind::Tool(ToolCard::pending(
                            &c.id,
                            &c.name,
                            &c.arguments,
                        )));
                        self.tools.insert(c.id.clone(), vec![i]);
                    }
                }
                (_, Role::Tool) => {
                    let id = m.msg.tool_call_id.clone().unwrap_or_default();
                    let name = m.msg.tool_name.clone().unwrap_or_else(|| "tool".into());
                    self.tool_call(
                        &id,
                        &name,
                        &Value::Null,
                        content,
                        m.success != Some(false),
                        None,
                    );
                }
            }
        }
        // Calls stored without a result (should not happen after repair).
        let pending: Vec<Vec<usize>> = self.tools.drain().map(|(_, p)| p).collect();
        for p in pending {
            if let Some(Cell {
                kind: CellKind::Tool(card),
                ..
            }) = self.transcript.cell_mut(&p)
            {
                card.finish("interrupted", false);
            }
        }
        self.run = RunState::Idle;
    }
}
