//! Checkpoints: what each turn changed in the workspace, so it can be
//! listed (`/diff`), undone (`/undo`) or rewound (`/rewind N --files`).
//!
//! When a session opens, and again when each turn starts, the workspace is
//! recorded in the background as a tree in a shadow git repository (see
//! [`shadow`]). A turn whose writing tools all name their paths (`filesystem`
//! writes, see [`named`]) is recorded from those paths alone and never waits
//! for it; the first tool of a turn that may change anything (a command, a
//! user or MCP tool…) waits for that snapshot unless it is a first one too
//! large to wait for, and the turn is recorded whole. When the turn ends
//! the workspace (or the named paths) is recorded again, and a turn that
//! changed files gets a [`Record`] in the session's state and a
//! `files_changed` event. A checkpoint that cannot be taken is a warning
//! before the tool runs, never a silent gap.
//!
//! Invariants: the user's own repository, index, refs and stash are never
//! written; files are written only by an explicit undo or rewind, through
//! [`crate::nofollow`]; nothing in the workspace configures the git navi
//! runs (see [`git`]).
pub(crate) mod diff;
pub(crate) mod gate;
pub(crate) mod git;
pub(crate) mod index;
pub(crate) mod named;
pub(crate) mod names;
pub(crate) mod prepare;
pub(crate) mod record;
pub(crate) mod repo;
pub(crate) mod restore;
pub mod shadow;
pub(crate) mod summary;
mod turns;

/// `[checkpoints]` is configuration data, kept in `config`.
pub use crate::config::checkpoints::CheckpointConfig;
pub(crate) use prepare::Place;
pub use turns::Checkpoints;

use crate::llm::ToolCall;
use crate::session::SessionStore;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The session state key holding the records (a JSON list).
const KEY: &str = "checkpoints";

/// One turn that changed files.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub(crate) struct Record {
    /// The turn: the number of its user message among the user messages.
    pub(crate) turn: usize,
    /// The pin key of the turn's user message (see `session::pins::key`).
    pub(crate) message: String,
    pub(crate) workspace: PathBuf,
    pub(crate) before: String,
    pub(crate) after: String,
    /// Restored by `/undo` or `/rewind --files`.
    #[serde(default)]
    pub(crate) undone: bool,
    /// Changed files whose last change came while no tool of the turn was
    /// running (someone else's, probably): `/undo` asks first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) foreign: Vec<Vec<u8>>,
}

/// Tools that never change files.
const READ_ONLY: &[&str] = &[
    "todo",
    "scratchpad",
    "web_search",
    "web_view",
    "http_request",
    "image_view",
    "list_tools",
    "tool_manual",
    "memory_search",
    "memory_forget",
    "reload_tools",
];

/// Whether a call may change files in the workspace.
pub(crate) fn may_write(call: &ToolCall) -> bool {
    if READ_ONLY.contains(&call.name.as_str()) {
        return false;
    }
    if call.name == "filesystem" {
        let action = call.arguments.get("action").and_then(|v| v.as_str());
        return !matches!(action, Some("read" | "list" | "stat"));
    }
    true
}

/// The checkpoints of a session, oldest first (none when unreadable).
pub(crate) fn load(store: &SessionStore, session: &str) -> Vec<Record> {
    store
        .get_state(session, KEY)
        .ok()
        .flatten()
        .and_then(|s| serde_json::from_str(&s).ok())
        .unwrap_or_default()
}

pub(crate) fn save(store: &SessionStore, session: &str, records: &[Record]) -> Result<(), String> {
    let json = serde_json::to_string(records).map_err(|e| e.to_string())?;
    store
        .put_state(session, KEY, &json)
        .map_err(|e| e.to_string())
}

/// The directories tools can write besides navi's work dir: the sandbox's
/// workspace and writable roots, and the session directories in the data
/// dir.
pub(crate) fn untrusted(
    config: &crate::config::Config,
    paths: &crate::config::Paths,
    work_dir: &Path,
) -> Vec<PathBuf> {
    let mut v = vec![
        work_dir.to_path_buf(),
        config.sandbox.workspace_dir(work_dir),
        paths.data_dir.join("sessions"),
        crate::attach::FilesPolicy::from_config(config, paths).root,
    ];
    v.extend(config.sandbox.writable_roots.iter().map(PathBuf::from));
    v
}

/// Where the checkpoints of `work_dir` go.
pub(crate) fn place_for(
    config: &crate::config::Config,
    paths: &crate::config::Paths,
    work_dir: &Path,
) -> Place {
    Place {
        data_dir: paths.data_dir.clone(),
        workspace: work_dir.to_path_buf(),
        untrusted: untrusted(config, paths, work_dir),
        max_files: config.checkpoints.max_files,
    }
}

/// A session opened: its first snapshot starts in the background.
pub(crate) fn warm(
    config: &crate::config::Config,
    paths: &crate::config::Paths,
    checkpoints: &Checkpoints,
    session: &str,
    work_dir: &Path,
) {
    if config.checkpoints.enabled {
        checkpoints.warm(session, place_for(config, paths, work_dir));
    }
}

/// Turn start (persistent sessions): numbers the turn and remembers its
/// user message; the snapshot of the workspace starts in the background.
pub(crate) struct TurnStart<'a> {
    pub(crate) config: &'a crate::config::Config,
    pub(crate) paths: &'a crate::config::Paths,
    pub(crate) checkpoints: &'a Checkpoints,
    pub(crate) session: &'a str,
    pub(crate) work_dir: &'a Path,
}

impl TurnStart<'_> {
    pub(crate) fn begin(self, earlier_turns: usize, user: Option<&crate::session::StoredMessage>) {
        if !self.config.checkpoints.enabled {
            return;
        }
        let key = user.map(crate::session::pins::key).unwrap_or_default();
        self.checkpoints.begin(
            self.session,
            earlier_turns + 1,
            key,
            place_for(self.config, self.paths, self.work_dir),
        );
    }
}

/// Turn end: the `files_changed` event (or a warning) for the front end.
pub(crate) async fn end_turn(
    checkpoints: &Checkpoints,
    store: &SessionStore,
    session: &str,
    sink: &crate::protocol::EventSink,
) {
    if let Some(e) = checkpoints.end(store, session).await {
        sink.emit(e).await;
    }
}
