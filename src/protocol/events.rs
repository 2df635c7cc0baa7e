//! `AgentEvent`: what the core tells every front end, live and on replay.
//!
//! Serialised with serde, tagged by `type`; `navi run --json` writes these
//! objects one per line. Names and fields follow the original WebSocket
//! protocol; additions are documented in `docs/events.md`. Fields are only ever
//! added, never renamed or removed.

use super::TodoItem;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::mpsc;

/// Which (sub)agent produced an event. Top-level events omit it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentOrigin {
    /// The subagent's id (`subagent_<12 hex>`).
    pub id: String,
    /// Nesting depth: 1 for a subagent of the main agent.
    pub depth: u32,
    /// The profile the subagent runs under.
    pub(crate) profile_id: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AgentEvent {
    /// A turn begins.
    StreamStart {
        session_id: String,
    },
    ThinkingDelta {
        delta: String,
        #[serde(default)]
        is_subagent: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        agent: Option<AgentOrigin>,
    },
    ThinkingEnd {
        #[serde(default)]
        is_subagent: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        agent: Option<AgentOrigin>,
    },
    /// The whole reasoning block of one model call.
    TurnThinking {
        thinking: String,
        is_subagent: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        agent: Option<AgentOrigin>,
    },
    PlanReady {
        plan: String,
    },
    /// The planner started (`active: true`) or finished, with or without a
    /// plan (`active: false`). Not sent for subagents.
    Planning {
        active: bool,
    },
    TodoUpdated {
        items: Vec<TodoItem>,
    },
    ToolStarted {
        /// The tool call id, to pair with `tool_call`.
        id: String,
        tool: String,
        args: Value,
        is_subagent: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        agent: Option<AgentOrigin>,
        /// What the call is about (kind, title, paths, the intended edit);
        /// absent in event logs written before it existed.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        call: Option<Box<super::CallInfo>>,
    },
    ToolCall {
        id: String,
        tool: String,
        args: Value,
        result: String,
        success: bool,
        is_subagent: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        agent: Option<AgentOrigin>,
        /// Typed data for drawing the result (exit code, diff, title…);
        /// absent when the tool gives none.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        display: Option<super::ToolDisplay>,
    },
    /// A risky tool call waits for the user. Answer through the run's
    /// approval handle with the same `id`.
    ApprovalRequest {
        id: String,
        tool: String,
        /// The command, path or URL in full.
        summary: String,
        args: Value,
        /// The same typed call data as the call's `tool_started`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        call: Option<Box<super::CallInfo>>,
    },
    StreamDelta {
        delta: String,
        #[serde(default)]
        is_subagent: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        agent: Option<AgentOrigin>,
    },
    StreamEnd {
        content: String,
        context_tokens: u64,
        max_context_tokens: u64,
    },
    StreamStopped,
    TokenUsage {
        prompt_tokens: u64,
        completion_tokens: u64,
        context_tokens: u64,
        max_context_tokens: u64,
    },
    ContextCompressed {
        messages_before: usize,
        messages_after: usize,
        /// The token account before and after (estimated next request);
        /// 0 in event logs written before these fields existed.
        #[serde(default)]
        tokens_before: u64,
        #[serde(default)]
        tokens_after: u64,
        #[serde(default)]
        max_context_tokens: u64,
    },
    /// `/compact --preview`: what a compaction would do; nothing changed yet.
    CompactionPlanned {
        summary: String,
        /// Context messages the summary would replace.
        messages_replaced: usize,
        /// Recent turns kept verbatim, and pinned messages kept.
        turns_kept: usize,
        pinned_kept: usize,
        tokens_before: u64,
        tokens_after: u64,
    },
    ProfileSwitched {
        profile_id: String,
        profile_name: String,
    },
    /// Which model the priority list resolved to, and why.
    ModelSelected {
        model: String,
        reason: String,
    },
    Warning {
        message: String,
    },
    Error {
        message: String,
    },
    /// A message the user sent while the turn ran, added to the context at
    /// the turn's next safe point (after a tool batch).
    UserSteer {
        message: String,
    },
    /// Replay only: a user message of a stored session.
    UserMessage {
        message: String,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        pinned: bool,
        /// Images that went with the message.
        #[serde(default, skip_serializing_if = "is_zero")]
        images: usize,
    },
    /// Replay only: a finished answer of a stored session.
    AgentMessage {
        content: String,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        pinned: bool,
    },
    /// Replay only: a notice the session recorded (a stop, a profile switch…).
    Notice {
        message: String,
    },
    /// Replay only: the summary that replaced older context.
    ContextSummary {
        summary: String,
    },
    /// The user's message was refused as it is (an image the model cannot
    /// take), just before the `error` that says why: the front end gives the
    /// typed text and the attachments back (composer, next line).
    InputReturned,
    /// A tool call that is still running (MCP tools): how long it has run
    /// and, when the server reports it, how far it is. Sent for each
    /// progress notification and every few seconds without one. Live only.
    ToolProgress {
        /// The tool call id, as in `tool_started`.
        id: String,
        tool: String,
        elapsed_ms: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        progress: Option<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        total: Option<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
    },
    /// A subagent (`spawn_agent`) began, before its first model call.
    SubagentStarted {
        agent: AgentOrigin,
    },
    /// A turn changed files in the workspace (sent before `stream_end`);
    /// `/diff` shows the changes, `/undo` restores them.
    FilesChanged {
        /// The turn: the number of its user message among the session's.
        turn: usize,
        files: Vec<FileChange>,
    },
}

/// One file in `files_changed`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileChange {
    /// Relative to the workspace.
    pub path: String,
    /// `added`, `changed` or `deleted`.
    pub status: String,
    /// Lines added and removed (0 for binary files).
    pub added: u64,
    pub removed: u64,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub binary: bool,
}

impl AgentEvent {
    /// The `type` tag, as in the JSON form.
    pub fn kind(&self) -> &'static str {
        match self {
            AgentEvent::StreamStart { .. } => "stream_start",
            AgentEvent::ThinkingDelta { .. } => "thinking_delta",
            AgentEvent::ThinkingEnd { .. } => "thinking_end",
            AgentEvent::TurnThinking { .. } => "turn_thinking",
            AgentEvent::PlanReady { .. } => "plan_ready",
            AgentEvent::Planning { .. } => "planning",
            AgentEvent::TodoUpdated { .. } => "todo_updated",
            AgentEvent::ToolStarted { .. } => "tool_started",
            AgentEvent::ToolCall { .. } => "tool_call",
            AgentEvent::ApprovalRequest { .. } => "approval_request",
            AgentEvent::StreamDelta { .. } => "stream_delta",
            AgentEvent::StreamEnd { .. } => "stream_end",
            AgentEvent::StreamStopped => "stream_stopped",
            AgentEvent::TokenUsage { .. } => "token_usage",
            AgentEvent::ContextCompressed { .. } => "context_compressed",
            AgentEvent::CompactionPlanned { .. } => "compaction_planned",
            AgentEvent::ProfileSwitched { .. } => "profile_switched",
            AgentEvent::ModelSelected { .. } => "model_selected",
            AgentEvent::Warning { .. } => "warning",
            AgentEvent::Error { .. } => "error",
            AgentEvent::UserSteer { .. } => "user_steer",
            AgentEvent::UserMessage { .. } => "user_message",
            AgentEvent::AgentMessage { .. } => "agent_message",
            AgentEvent::Notice { .. } => "notice",
            AgentEvent::ContextSummary { .. } => "context_summary",
            AgentEvent::InputReturned => "input_returned",
            AgentEvent::ToolProgress { .. } => "tool_progress",
            AgentEvent::SubagentStarted { .. } => "subagent_started",
            AgentEvent::FilesChanged { .. } => "files_changed",
        }
    }

    /// One JSON object, no trailing newline.
    pub(crate) fn to_json_line(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|e| {
            format!("{{\"type\":\"error\",\"message\":\"cannot serialise event: {e}\"}}")
        })
    }
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// Where a run's events go. Sending never fails the run: when the front end
/// has gone away, events are dropped.
#[derive(Clone, Debug)]
pub struct EventSink {
    tx: mpsc::Sender<AgentEvent>,
}

impl EventSink {
    /// A sink and its receiving end.
    pub fn channel(capacity: usize) -> (Self, mpsc::Receiver<AgentEvent>) {
        let (tx, rx) = mpsc::channel(capacity);
        (EventSink { tx }, rx)
    }

    pub(crate) async fn emit(&self, event: AgentEvent) {
        let _ = self.tx.send(event).await;
    }
}
