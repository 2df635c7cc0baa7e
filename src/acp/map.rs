//! Navi's events as ACP `session/update`s: pure functions, no I/O.
//!
//! A live turn and a replayed history go through the same [`Mapper`]; the
//! only difference is that a live turn streams its text and thinking as
//! deltas, while a replay carries whole messages.

use crate::protocol::{AgentEvent, TodoItem, TodoStatus};
use agent_client_protocol::v1::schema::{
    ContentBlock, ContentChunk, Diff, Plan, PlanEntry, PlanEntryPriority, PlanEntryStatus,
    SessionUpdate, ToolCall, ToolCallContent, ToolCallLocation, ToolCallStatus, ToolCallUpdate,
    ToolCallUpdateFields, ToolKind,
};
use serde_json::Value;
use std::collections::HashMap;

/// What the mapper remembers across the events of one session.
#[derive(Default)]
pub(crate) struct Mapper {
    /// Text already streamed as deltas since the last `stream_start`, so the
    /// final `stream_end` is not sent twice.
    streamed_text: bool,
    /// Thinking already streamed as deltas, so `turn_thinking` is not sent
    /// twice.
    streamed_thinking: bool,
    /// Tool calls announced and not yet finished: id → (tool, args).
    open_calls: HashMap<String, (String, Value)>,
}

impl Mapper {
    /// The updates that show `event`, in order (often none or one).
    pub(crate) fn map(&mut self, event: &AgentEvent) -> Vec<SessionUpdate> {
        match event {
            AgentEvent::StreamStart { .. } => {
                self.streamed_text = false;
                self.streamed_thinking = false;
                vec![]
            }
            AgentEvent::ThinkingDelta {
                delta, is_subagent, ..
            } if !is_subagent => {
                self.streamed_thinking = true;
                vec![thought(delta)]
            }
            AgentEvent::TurnThinking {
                thinking,
                is_subagent,
                ..
            } if !is_subagent => {
                if std::mem::take(&mut self.streamed_thinking) || thinking.trim().is_empty() {
                    vec![]
                } else {
                    vec![thought(thinking)]
                }
            }
            AgentEvent::StreamDelta {
                delta, is_subagent, ..
            } if !is_subagent => {
                if delta.is_empty() {
                    return vec![];
                }
                self.streamed_text = true;
                vec![message(delta)]
            }
            AgentEvent::StreamEnd { content, .. } => {
                if std::mem::take(&mut self.streamed_text) || content.trim().is_empty() {
                    vec![]
                } else {
                    vec![message(content)]
                }
            }
            AgentEvent::AgentMessage { content, .. } if !content.trim().is_empty() => {
                vec![message(content)]
            }
            AgentEvent::UserMessage { message, .. } => vec![user(message)],
            AgentEvent::UserSteer { message } => vec![user(message)],
            AgentEvent::ToolStarted { id, tool, args, .. } => {
                self.open_calls
                    .insert(id.clone(), (tool.clone(), args.clone()));
                vec![SessionUpdate::ToolCall(tool_call(id, tool, args))]
            }
            AgentEvent::ToolCall {
                id,
                tool,
                args,
                result,
                success,
                ..
            } => {
                let mut out = Vec::new();
                if self.open_calls.remove(id).is_none() {
                    // A call never announced (a replayed result without its
                    // call): announce it first so the update has a target.
                    out.push(SessionUpdate::ToolCall(tool_call(id, tool, args)));
                }
                out.push(SessionUpdate::ToolCallUpdate(tool_result(
                    id, tool, args, result, *success,
                )));
                out
            }
            AgentEvent::TodoUpdated { items } => vec![SessionUpdate::Plan(plan(items))],
            AgentEvent::PlanReady { plan } if !plan.trim().is_empty() => {
                vec![thought(&format!("Plan:\n{plan}\n"))]
            }
            AgentEvent::Warning { message: m } => vec![thought(&format!("\n⚠ {m}\n"))],
            AgentEvent::Notice { message: m } => vec![thought(&format!("\n{m}\n"))],
            AgentEvent::Error { message: m } => vec![message(&format!("\n\nError: {m}\n"))],
            AgentEvent::ContextSummary { summary } => {
                vec![thought(&format!(
                    "Summary of earlier context:\n{summary}\n"
                ))]
            }
            AgentEvent::ContextCompressed {
                messages_before,
                messages_after,
                ..
            } => vec![thought(&format!(
                "\ncontext compacted: {messages_before} → {messages_after} messages\n"
            ))],
            _ => vec![],
        }
    }

    /// Calls still open (announced, no result): how a stop leaves them.
    pub(crate) fn close_open(&mut self) -> Vec<SessionUpdate> {
        self.open_calls
            .drain()
            .map(|(id, _)| {
                SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                    id,
                    ToolCallUpdateFields::new().status(ToolCallStatus::Failed),
                ))
            })
            .collect()
    }
}

fn text_chunk(s: &str) -> ContentChunk {
    ContentChunk::new(ContentBlock::from(s.to_string()))
}

fn thought(s: &str) -> SessionUpdate {
    SessionUpdate::AgentThoughtChunk(text_chunk(s))
}

fn message(s: &str) -> SessionUpdate {
    SessionUpdate::AgentMessageChunk(text_chunk(s))
}

fn user(s: &str) -> SessionUpdate {
    SessionUpdate::UserMessageChunk(text_chunk(s))
}

/// The ACP kind of a navi tool call.
pub(crate) fn kind(tool: &str, args: &Value) -> ToolKind {
    match tool {
        "filesystem" => match args.get("action").and_then(Value::as_str) {
            Some("read" | "list" | "stat") => ToolKind::Read,
            Some("write" | "append" | "mkdir") => ToolKind::Edit,
            Some("delete") => ToolKind::Delete,
            _ => ToolKind::Other,
        },
        "terminal" | "code_exec" | "ssh_exec" => ToolKind::Execute,
        "web_view" | "http_request" | "image_view" => ToolKind::Fetch,
        "web_search" | "memory_search" | "list_tools" => ToolKind::Search,
        "todo" | "scratchpad" => ToolKind::Think,
        "switch_profile" => ToolKind::SwitchMode,
        _ => ToolKind::Other,
    }
}

/// A short title: the tool and what it works on.
pub(crate) fn title(tool: &str, args: &Value) -> String {
    let s = |k: &str| args.get(k).and_then(Value::as_str);
    let what = match tool {
        "filesystem" => s("path").map(|p| format!("{} {p}", s("action").unwrap_or(""))),
        "terminal" | "ssh_exec" => s("command").map(str::to_string),
        "web_view" | "http_request" | "image_view" => s("url").or(s("path")).map(str::to_string),
        "web_search" | "memory_search" => s("query").map(str::to_string),
        _ => None,
    };
    match what {
        Some(w) => {
            let w = w.trim();
            let short: String = w.chars().take(120).collect();
            let ell = if short.len() < w.len() { "…" } else { "" };
            format!("{tool}: {short}{ell}")
        }
        None => tool.to_string(),
    }
}

/// The files a call works on.
fn locations(tool: &str, args: &Value) -> Vec<ToolCallLocation> {
    let path = match tool {
        "filesystem" | "image_view" => args.get("path").and_then(Value::as_str),
        "terminal" => args.get("cwd").and_then(Value::as_str),
        _ => None,
    };
    path.map(|p| vec![ToolCallLocation::new(p)])
        .unwrap_or_default()
}

/// A whole-file write shown as a diff (navi does not keep the old text here).
fn diff(tool: &str, args: &Value) -> Option<ToolCallContent> {
    if tool != "filesystem" || args.get("action").and_then(Value::as_str) != Some("write") {
        return None;
    }
    let path = args.get("path").and_then(Value::as_str)?;
    let content = args.get("content").and_then(Value::as_str)?;
    Some(ToolCallContent::Diff(Diff::new(path, content)))
}

fn tool_call(id: &str, tool: &str, args: &Value) -> ToolCall {
    ToolCall::new(id.to_string(), title(tool, args))
        .name(tool.to_string())
        .kind(kind(tool, args))
        .status(ToolCallStatus::InProgress)
        .locations(locations(tool, args))
        .raw_input(args.clone())
}

fn tool_result(id: &str, tool: &str, args: &Value, result: &str, ok: bool) -> ToolCallUpdate {
    let mut content: Vec<ToolCallContent> = Vec::new();
    if ok && let Some(d) = diff(tool, args) {
        content.push(d);
    }
    if !result.is_empty() {
        content.push(ToolCallContent::from(result.to_string()));
    }
    let status = if ok {
        ToolCallStatus::Completed
    } else {
        ToolCallStatus::Failed
    };
    ToolCallUpdate::new(
        id.to_string(),
        ToolCallUpdateFields::new()
            .status(status)
            .content(content)
            .raw_output(Value::String(result.to_string())),
    )
}

/// The update for the permission question about a call (the call itself
/// was announced by `tool_started`).
pub(crate) fn permission_call(id: &str, tool: &str, summary: &str, args: &Value) -> ToolCallUpdate {
    let mut fields = ToolCallUpdateFields::new()
        .title(format!("{tool}: {summary}"))
        .kind(kind(tool, args))
        .raw_input(args.clone());
    let locs = locations(tool, args);
    if !locs.is_empty() {
        fields = fields.locations(locs);
    }
    if let Some(d) = diff(tool, args) {
        fields = fields.content(vec![d]);
    }
    ToolCallUpdate::new(id.to_string(), fields)
}

/// Navi's todo list as an ACP plan (the whole list each time, as ACP wants).
pub(crate) fn plan(items: &[TodoItem]) -> Plan {
    Plan::new(
        items
            .iter()
            .map(|t| {
                let status = match t.status {
                    TodoStatus::Pending => PlanEntryStatus::Pending,
                    TodoStatus::InProgress => PlanEntryStatus::InProgress,
                    TodoStatus::Done | TodoStatus::Failed | TodoStatus::Skipped => {
                        PlanEntryStatus::Completed
                    }
                };
                let text = match t.status {
                    TodoStatus::Failed => format!("{} (failed)", t.text),
                    TodoStatus::Skipped => format!("{} (skipped)", t.text),
                    _ => t.text.clone(),
                };
                PlanEntry::new(text, PlanEntryPriority::Medium, status)
            })
            .collect(),
    )
}

#[cfg(test)]
#[path = "map_tests.rs"]
mod tests;
