//! Navi's events as ACP `session/update`s: pure functions, no I/O.
//!
//! A live turn and a replayed history go through the same [`Mapper`]; the
//! only difference is that a live turn streams its text and thinking as
//! deltas, while a replay carries whole messages.

use crate::protocol::{AgentEvent, CallInfo, CallKind, TodoItem, TodoStatus, ToolDisplay};
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
    /// Tool calls announced and not yet finished, with what they are about.
    open_calls: HashMap<String, CallInfo>,
    /// The call announced last, still `pending` (not yet reported running).
    unstarted: Option<String>,
}

impl Mapper {
    /// The updates that show `event`, in order (often none or one).
    pub(crate) fn map(&mut self, event: &AgentEvent) -> Vec<SessionUpdate> {
        let mut out = self.started(event);
        out.extend(self.map_one(event));
        out
    }

    /// A call announced as `pending` runs once anything else happens (a
    /// call that asks first is flipped by [`Mapper::asking`] instead).
    fn started(&mut self, event: &AgentEvent) -> Vec<SessionUpdate> {
        let flip = match event {
            AgentEvent::ToolCall { id, .. } => self.unstarted.as_deref() != Some(id.as_str()),
            AgentEvent::ApprovalRequest { .. } => false,
            _ => true,
        };
        match self.unstarted.take() {
            Some(id) if flip => vec![SessionUpdate::ToolCallUpdate(running(&id))],
            other => {
                self.unstarted = other;
                vec![]
            }
        }
    }

    /// The permission question about call `id` is being asked: it stays
    /// `pending` until the answer (then [`running`] flips it).
    pub(crate) fn asking(&mut self, id: &str) {
        if self.unstarted.as_deref() == Some(id) {
            self.unstarted = None;
        }
    }

    fn map_one(&mut self, event: &AgentEvent) -> Vec<SessionUpdate> {
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
            AgentEvent::ToolStarted {
                id,
                tool,
                args,
                call,
                ..
            } => {
                let info = call
                    .as_deref()
                    .cloned()
                    .unwrap_or_else(|| CallInfo::other(tool));
                let update = SessionUpdate::ToolCall(tool_call(id, &info, args));
                self.open_calls.insert(id.clone(), info);
                self.unstarted = Some(id.clone());
                vec![update]
            }
            AgentEvent::ToolCall {
                id,
                tool,
                args,
                result,
                success,
                display,
                ..
            } => {
                let mut out = Vec::new();
                if self.unstarted.as_deref() == Some(id.as_str()) {
                    self.unstarted = None;
                }
                let info = match self.open_calls.remove(id) {
                    Some(info) => info,
                    None => {
                        // A call never announced (a replayed result without
                        // its call): announce it first so the update has a
                        // target.
                        let info = CallInfo::other(tool);
                        out.push(SessionUpdate::ToolCall(tool_call(id, &info, args)));
                        info
                    }
                };
                out.push(SessionUpdate::ToolCallUpdate(tool_result(
                    id,
                    &info,
                    result,
                    *success,
                    display.as_ref(),
                )));
                out
            }
            AgentEvent::TodoUpdated { items } => vec![SessionUpdate::Plan(plan(items))],
            AgentEvent::PlanReady { plan } if !plan.trim().is_empty() => {
                vec![thought(&format!("Plan:\n{plan}\n"))]
            }
            AgentEvent::Warning { message: m } => {
                vec![thought(&format!("\n⚠ {}\n", super::news::for_editor(m)))]
            }
            AgentEvent::Notice { message: m } => {
                vec![thought(&format!("\n{}\n", super::news::for_editor(m)))]
            }
            AgentEvent::Error { message: m } => {
                vec![message(&format!(
                    "\n\nError: {}\n",
                    super::news::for_editor(m)
                ))]
            }
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
        self.unstarted = None;
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

/// The ACP kind of a call.
pub(crate) fn kind(k: CallKind) -> ToolKind {
    match k {
        CallKind::Read => ToolKind::Read,
        CallKind::Edit => ToolKind::Edit,
        CallKind::Delete => ToolKind::Delete,
        CallKind::Move => ToolKind::Move,
        CallKind::Search => ToolKind::Search,
        CallKind::Execute => ToolKind::Execute,
        CallKind::Fetch => ToolKind::Fetch,
        CallKind::Think => ToolKind::Think,
        CallKind::SwitchMode => ToolKind::SwitchMode,
        CallKind::Other => ToolKind::Other,
    }
}

/// The files a call works on (absolute, as the tool described them); a
/// command's directory when it names no file.
fn locations(info: &CallInfo) -> Vec<ToolCallLocation> {
    let mut paths: Vec<&String> = info.paths.iter().collect();
    if paths.is_empty()
        && let Some(cwd) = &info.cwd
    {
        paths.push(cwd);
    }
    paths
        .into_iter()
        .map(|p| ToolCallLocation::new(p.as_str()))
        .collect()
}

/// An edit as an ACP diff: the file before (`None`: new) and after. None
/// when the tool could not pair them faithfully (its note says why).
pub(crate) fn diff(info: &CallInfo) -> Option<ToolCallContent> {
    let e = info.edit.as_ref().filter(|e| e.note.is_none())?;
    Some(ToolCallContent::Diff(
        Diff::new(e.path.as_str(), e.new_text.clone()).old_text(e.old_text.clone()),
    ))
}

/// A call's update that says it now runs.
pub(crate) fn running(id: &str) -> ToolCallUpdate {
    ToolCallUpdate::new(
        id.to_string(),
        ToolCallUpdateFields::new().status(ToolCallStatus::InProgress),
    )
}

fn tool_call(id: &str, info: &CallInfo, args: &Value) -> ToolCall {
    let mut call = ToolCall::new(id.to_string(), info.title.clone())
        .kind(kind(info.kind))
        .status(ToolCallStatus::Pending)
        .locations(locations(info))
        .raw_input(args.clone());
    if let Some(d) = diff(info) {
        call = call.content(vec![d]);
    }
    call
}

/// What `rawOutput` carries: always an object (clients parse it as one).
fn raw_output(result: &str, ok: bool, display: Option<&ToolDisplay>) -> Value {
    let mut out = serde_json::Map::new();
    out.insert("output".into(), Value::String(result.to_string()));
    out.insert("success".into(), Value::Bool(ok));
    if let Some(d) = display.and_then(|d| serde_json::to_value(d).ok()) {
        out.insert("display".into(), d);
    }
    Value::Object(out)
}

fn tool_result(
    id: &str,
    info: &CallInfo,
    result: &str,
    ok: bool,
    display: Option<&ToolDisplay>,
) -> ToolCallUpdate {
    let mut content: Vec<ToolCallContent> = Vec::new();
    if ok && let Some(d) = diff(info) {
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
            .raw_output(raw_output(result, ok, display)),
    )
}

/// The call as the permission question shows it: the tool's own title,
/// kind, locations and diff (the call itself was announced by
/// `tool_started`, still `pending`).
pub(crate) fn permission_call(
    id: &str,
    tool: &str,
    summary: &str,
    args: &Value,
    call: Option<&CallInfo>,
) -> ToolCallUpdate {
    let other = CallInfo::other(tool);
    let info = call.unwrap_or(&other);
    let mut fields = ToolCallUpdateFields::new()
        .title(format!("{tool}: {summary}"))
        .kind(kind(info.kind))
        .status(ToolCallStatus::Pending)
        .raw_input(args.clone());
    let locs = locations(info);
    if !locs.is_empty() {
        fields = fields.locations(locs);
    }
    if let Some(d) = diff(info) {
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
