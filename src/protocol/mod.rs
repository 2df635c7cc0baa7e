//! The protocol between the core and every front end.
//!
//! This module depends on nothing else in the crate (only serde and tokio),
//! like codex-rs's `protocol` crate. The agent, the tools and the front ends
//! all speak it:
//!
//! - [`Op`]s go in, one per thing a front end does to an open session (a
//!   message, a steer, a stop, an approval answer, a compaction, a rewind…).
//! - [`SessionEvent`]s come out, on the session's one stream: the
//!   [`AgentEvent`]s of each run, then how it ended.
//! - A stored session's display history is replayed to a front end as the same
//!   events ([`HistoryItem::to_events`]), so each front end has one rendering
//!   path for live turns and for history.

mod call;
mod client;
mod display;
mod events;
mod history;
mod info;
mod op;
pub mod plan;

pub use call::{CallInfo, CallKind, FileEdit, McpCall};
pub use client::{Client, ClientCommand, ClientExit, ClientSide};
pub use display::{CommandDisplay, FileWriteDisplay, Stopped, ToolDisplay};
pub use events::{AgentEvent, AgentOrigin, EventSink, FileChange};

/// Said in `ModelSelected`'s reason (and the model line) when a run takes
/// the lean preset for tiny models (docs/small-models.md).
pub const LEAN_NOTE: &str = "lean preset for a tiny model";
pub use history::{
    CallItem, HistoryItem, INTERRUPTED, PINNED_NOTE, earlier_count, earlier_notice, last_answer,
    replay,
};
pub use info::{ModelInfo, ProfileSummary, SessionMeta, now_ms};
pub use op::{InputAttachment, Op, OpError, SessionEvent, TurnEnd};

use serde::{Deserialize, Serialize};

/// The tool that starts a subagent. Front ends nest a subagent's events under
/// the card of this tool's call.
pub(crate) const SPAWN_AGENT_TOOL: &str = "spawn_agent";
/// The tool that switches the session's profile.
pub(crate) const SWITCH_PROFILE_TOOL: &str = "switch_profile";

/// Which `/compact`: at once, a preview kept for confirmation, or applying
/// the kept preview.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CompactMode {
    Now,
    Preview,
    Apply,
}

/// The user's answer to an approval request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// Run this one call.
    Once,
    /// Run this and every later call of the same tool in this session.
    Session,
    Deny,
}

/// Where a todo item stands.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TodoStatus {
    #[default]
    Pending,
    InProgress,
    Done,
    Failed,
    Skipped,
}

impl TodoStatus {
    pub(crate) const ALL: [TodoStatus; 5] = [
        TodoStatus::Pending,
        TodoStatus::InProgress,
        TodoStatus::Done,
        TodoStatus::Failed,
        TodoStatus::Skipped,
    ];

    /// The wire name (`in_progress`, …).
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            TodoStatus::Pending => "pending",
            TodoStatus::InProgress => "in_progress",
            TodoStatus::Done => "done",
            TodoStatus::Failed => "failed",
            TodoStatus::Skipped => "skipped",
        }
    }

    /// Parses a wire name; `None` for anything else.
    #[cfg(test)]
    pub(crate) fn parse(s: &str) -> Option<TodoStatus> {
        TodoStatus::ALL.into_iter().find(|t| t.as_str() == s)
    }

    /// Done, failed or skipped: nothing more will happen to it.
    pub(crate) fn is_finished(self) -> bool {
        matches!(
            self,
            TodoStatus::Done | TodoStatus::Failed | TodoStatus::Skipped
        )
    }

    /// The one-character mark the TUI shows.
    pub(crate) fn glyph(self) -> &'static str {
        match self {
            TodoStatus::Pending => "○",
            TodoStatus::InProgress => "▶",
            TodoStatus::Done => "✓",
            TodoStatus::Failed => "✗",
            TodoStatus::Skipped => "–",
        }
    }
}

impl TodoStatus {
    /// The text checkbox line-mode output and the tool's listing show.
    pub(crate) fn checkbox(self) -> &'static str {
        match self {
            TodoStatus::Pending => "[ ]",
            TodoStatus::InProgress => "[~]",
            TodoStatus::Done => "[x]",
            TodoStatus::Failed => "[!]",
            TodoStatus::Skipped => "[-]",
        }
    }
}

impl std::fmt::Display for TodoStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A todo item as shown in the side pane.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TodoItem {
    pub(crate) id: u32,
    pub(crate) text: String,
    pub status: TodoStatus,
    /// `TOOL: name`, `AGENT: profile` or `SELF` when the item came from a plan.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub executor: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) validation: Option<String>,
}
