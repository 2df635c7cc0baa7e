//! Sessions: the model and its SQLite store.
//!
//! Dual buffer: the display history (what the user saw; only appended to) and
//! the LLM context (what the model sees; may be replaced by a summary). Each
//! message is written when it happens, so a crash loses nothing already shown.
//! Invariant on load: every tool call in either buffer has exactly one tool
//! result after it (a crash mid-tool is repaired with an "interrupted" result,
//! only by the process holding the session's lock: see [`lock`] and
//! [`SessionStore::load_held`]).

mod deltas;
pub(crate) mod lock;
pub mod pins;
mod reader;
pub mod replay;
pub(crate) mod rewind;
mod schema;
pub(crate) mod store;
mod writer;

pub use crate::protocol::{SessionMeta, now_ms};
pub(crate) use lock::LockError;
pub use lock::SessionLock;
pub(crate) use store::new_meta;
pub use store::{SessionStore, StoreError};

use crate::llm::ChatMessage;
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Buffer {
    Display,
    Context,
}

impl Buffer {
    fn code(self) -> i64 {
        match self {
            Buffer::Display => 0,
            Buffer::Context => 1,
        }
    }
}

/// What a stored message is, beyond its role.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum MessageKind {
    #[default]
    Message,
    /// A planning-phase plan (rendered as a plan card).
    Plan,
    /// A compression summary replacing older context.
    Summary,
    /// A UI notice (stopped, profile switched); display buffer only.
    Notice,
    /// A turn's failure, as shown to the user; display buffer only. Older
    /// builds stored these as notices starting with `error: `.
    Error,
}

impl MessageKind {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            MessageKind::Message => "message",
            MessageKind::Plan => "plan",
            MessageKind::Summary => "summary",
            MessageKind::Notice => "notice",
            MessageKind::Error => "error",
        }
    }

    fn parse(s: &str) -> Self {
        match s {
            "plan" => MessageKind::Plan,
            "summary" => MessageKind::Summary,
            "notice" => MessageKind::Notice,
            "error" => MessageKind::Error,
            _ => MessageKind::Message,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StoredMessage {
    /// Row id (0 until written).
    pub(crate) id: i64,
    #[serde(flatten)]
    pub msg: ChatMessage,
    pub kind: MessageKind,
    /// For tool results: whether the tool succeeded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub success: Option<bool>,
    /// Unix milliseconds.
    pub(crate) created_at: i64,
    /// Left behind by `/rewind`: kept in the history, not in the context.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) rewound: bool,
    /// For tool results in the display buffer: the typed display data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display: Option<crate::protocol::ToolDisplay>,
}

impl StoredMessage {
    pub fn new(msg: ChatMessage, kind: MessageKind) -> Self {
        StoredMessage {
            id: 0,
            msg,
            kind,
            success: None,
            created_at: now_ms(),
            rewound: false,
            display: None,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Session {
    pub meta: SessionMeta,
    pub display: Vec<StoredMessage>,
    pub context: Vec<StoredMessage>,
}

/// A title from the first user message: its first line, at most 60 chars.
pub(crate) fn title_from(text: &str) -> String {
    let line = text
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim();
    let mut t: String = line.chars().take(60).collect();
    if line.chars().count() > 60 {
        t.push('…');
    }
    t
}

/// Adds an "interrupted" result for every tool call lacking one. Returns true
/// when something was added.
pub(crate) fn repair_unpaired(messages: &mut Vec<StoredMessage>) -> bool {
    use crate::llm::Role;
    let mut out: Vec<StoredMessage> = Vec::with_capacity(messages.len());
    let mut repaired = false;
    let mut i = 0;
    while i < messages.len() {
        let m = messages[i].clone();
        i += 1;
        let calls: Vec<crate::llm::ToolCall> = m.msg.tool_calls().cloned().collect();
        out.push(m);
        if calls.is_empty() {
            continue;
        }
        let mut answered = std::collections::HashSet::new();
        while i < messages.len() && messages[i].msg.role == Role::Tool {
            if let Some(id) = messages[i].msg.tool_call_id() {
                answered.insert(id.to_string());
            }
            out.push(messages[i].clone());
            i += 1;
        }
        for call in calls.iter().filter(|c| !answered.contains(&c.id)) {
            let mut r = StoredMessage::new(
                ChatMessage::tool_result(
                    call,
                    "operation interrupted: navi stopped before this tool finished",
                ),
                MessageKind::Message,
            );
            r.success = Some(false);
            out.push(r);
            repaired = true;
        }
    }
    *messages = out;
    repaired
}
