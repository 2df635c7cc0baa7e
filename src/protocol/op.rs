//! Operations: what a front end asks of an open session, and the stream of
//! what happens in it. A [`crate::app::SessionHandle`] takes [`Op`]s and
//! gives back [`SessionEvent`]s; nothing else passes between a front end and
//! the core. Both are serde types so a front end in another process (an
//! editor over ACP, a test) can speak them as JSON.
use super::{AgentEvent, CompactMode, Decision};
use serde::{Deserialize, Serialize};

/// What a front end sends to an open session.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Op {
    /// A new user turn, with files or images.
    UserMessage {
        text: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        attachments: Vec<InputAttachment>,
    },
    /// Text for the running turn, added at its next safe point.
    Steer { text: String },
    /// A cooperative stop of what runs (a turn or a compaction).
    Stop,
    /// The answer to an `approval_request` event with this id.
    Approval { id: String, decision: Decision },
    /// `/compact`: now, as a preview, or applying the preview.
    Compact { mode: CompactMode },
    /// Pins (or unpins) display message `index` (1-based, as `/pin` lists
    /// them; 0 is the latest answer): it survives compaction verbatim.
    Pin { index: usize, pinned: bool },
    /// Switches the session to another profile from its next turn.
    SwitchProfile { profile: String },
    /// The model this session uses from its next turn, kept with the
    /// session; `None` goes back to the profile's priority list.
    SwitchModel { model: Option<String> },
    /// A new title for the session.
    Rename { title: String },
    /// Pins the session itself at the top of the session list (or unpins it).
    PinSession { pinned: bool },
    /// Goes back to before the user's message `message` (1-based, as
    /// `/rewind` lists them): it and what followed stay in the history,
    /// marked, and leave the model's context. `files`: the files the turns
    /// from it on changed are restored first (`force`: even files edited
    /// by hand since); a refusal changes nothing.
    Rewind {
        message: usize,
        #[serde(default)]
        files: bool,
        #[serde(default)]
        force: bool,
    },
    /// Restores the files the last turn not yet undone changed.
    Undo {
        #[serde(default)]
        force: bool,
    },
    /// Reads a file (or image) to go with the next message, by the rules of
    /// attachments (small text inline, images as images, other files copied
    /// into the session's files); relative paths start at the session's
    /// working directory.
    Attach { path: std::path::PathBuf },
    /// Takes back what was allowed "for the session": one tool, or all
    /// (`None`).
    RevokeApproval {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tool: Option<String>,
    },
    /// Deletes the session (with its messages) and ends it; the handle
    /// takes nothing more.
    Delete,
}

/// A file or image that goes with a user message.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum InputAttachment {
    /// A file on this machine: inlined when it is small text, sent as an
    /// image when it is one, else copied into the session's files.
    Path { path: std::path::PathBuf },
    /// Text with a name (an editor's embedded resource, piped input).
    Text { name: String, text: String },
    /// Raw bytes with a name (base64), treated like a file of that name.
    Bytes { name: String, data_base64: String },
    /// An image (base64) with its media type.
    Image {
        mime: String,
        data_base64: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
    },
}

/// How something a front end started ended.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum TurnEnd {
    /// The turn answered (or the compaction finished).
    Done {
        /// False when the iteration cap cut it short.
        #[serde(default = "yes")]
        completed: bool,
    },
    /// Stopped by the user; what it had is saved.
    Stopped,
    /// The message was refused as it is (an image for a text-only model);
    /// nothing was stored and the front end gives the input back.
    Refused { message: String },
    Failed {
        message: String,
        /// No model was reached (server down, no such model, no key): a new
        /// session that got nothing else is not kept.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        unreached: bool,
    },
}

fn yes() -> bool {
    true
}

/// One item of an open session's event stream.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
// Events are moved one at a time through a channel; boxing each would cost
// an allocation per streamed token for no gain.
#[allow(clippy::large_enum_variant)]
pub enum SessionEvent {
    /// Something that happened in the running turn or compaction.
    Agent { event: AgentEvent },
    /// The turn or compaction ended; the session takes a new message.
    /// `steers`: what was sent to steer it that it never took in, for the
    /// front end to give back.
    TurnEnded {
        end: TurnEnd,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        steers: Vec<String>,
    },
}

/// Why an [`Op`] was not taken.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum OpError {
    #[error("a turn is running; /stop it first")]
    Busy,
    #[error("nothing is running")]
    NotRunning,
    /// The session was closed or deleted.
    #[error("the session is closed")]
    Closed,
    #[error("{0}")]
    Invalid(String),
}
