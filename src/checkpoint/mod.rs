//! Checkpoints: what each turn changed in the workspace, so it can be
//! listed (`/diff`), undone (`/undo`) or rewound (`/rewind N --files`).
//!
//! Before the first tool of a turn that may write (anything but the known
//! read-only tools), the workspace is recorded as a tree in a shadow git
//! repository (see [`shadow`]); when the turn ends it is recorded again, and
//! a turn that changed files gets a [`Record`] in the session's state and a
//! `files_changed` event. A checkpoint that cannot be taken is a warning
//! before the tool runs, never a silent gap.
//!
//! Invariant: the user's own repository, index, refs and stash are never
//! touched; files are written only by an explicit undo or rewind.
pub(crate) mod restore;
pub mod shadow;
pub(crate) mod summary;

use crate::llm::ToolCall;
use crate::protocol::AgentEvent;
use crate::session::SessionStore;
use serde::{Deserialize, Serialize};
use shadow::Shadow;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

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

struct Active {
    turn: usize,
    message: String,
    workspace: PathBuf,
    before: Option<String>,
    /// A checkpoint failed this turn (already warned).
    failed: bool,
}

/// The turn in progress of one open session (owned by the session).
#[derive(Default)]
pub struct Checkpoints {
    active: Mutex<Option<Active>>,
}

impl Checkpoints {
    /// A turn starts; its user message is number `turn`.
    pub(crate) fn begin(&self, turn: usize, message: String, workspace: &Path) {
        if let Ok(mut m) = self.active.lock() {
            *m = Some(Active {
                turn,
                message,
                workspace: workspace.to_path_buf(),
                before: None,
                failed: false,
            });
        }
    }

    /// Before a tool batch: records the workspace once per turn when a call
    /// may write. A warning to show when that failed.
    pub(crate) async fn before_tools(
        &self,
        data_dir: &Path,
        session: &str,
        calls: &[ToolCall],
    ) -> Option<String> {
        if !calls.iter().any(may_write) {
            return None;
        }
        let workspace = {
            let m = self.active.lock().ok()?;
            let a = m.as_ref()?;
            if a.before.is_some() || a.failed {
                return None;
            }
            a.workspace.clone()
        };
        let (data, sid) = (data_dir.to_path_buf(), session.to_string());
        let taken =
            tokio::task::spawn_blocking(move || Shadow::open(&data, &workspace, &sid)?.snapshot())
                .await
                .unwrap_or_else(|e| Err(format!("checkpoint task failed: {e}")));
        let mut m = self.active.lock().ok()?;
        let a = m.as_mut()?;
        match taken {
            Ok((tree, note)) => {
                a.before = Some(tree);
                note.map(|n| {
                    format!("checkpoint incomplete: some files could not be read ({n}); /undo cannot restore them")
                })
            }
            Err(e) => {
                a.failed = true;
                Some(format!(
                    "checkpoint unavailable: {e}; the files this turn changes cannot be listed or undone"
                ))
            }
        }
    }

    /// The turn ended: records what it changed. The event to show, or a
    /// warning when the second checkpoint failed.
    pub(crate) async fn end(
        &self,
        data_dir: &Path,
        store: &SessionStore,
        session: &str,
    ) -> Option<AgentEvent> {
        let a = self.active.lock().ok()?.take()?;
        let before = a.before.clone()?;
        let (data, sid, ws) = (
            data_dir.to_path_buf(),
            session.to_string(),
            a.workspace.clone(),
        );
        let b = before.clone();
        let done = tokio::task::spawn_blocking(move || {
            let sh = Shadow::open(&data, &ws, &sid)?;
            let (after, _) = sh.snapshot()?;
            let changes = sh.changes(&b, &after)?;
            Ok::<_, String>((sh, after, changes))
        })
        .await
        .unwrap_or_else(|e| Err(format!("checkpoint task failed: {e}")));
        let (sh, after, changes) = match done {
            Ok(d) => d,
            Err(e) => {
                return Some(AgentEvent::Warning {
                    message: format!(
                        "checkpoint after the turn failed: {e}; /undo cannot restore this turn"
                    ),
                });
            }
        };
        if changes.is_empty() {
            return None;
        }
        let mut records = load(store, session);
        let n = records.len() + 1;
        let kept = sh
            .keep(session, &format!("{n}/before"), &before)
            .and_then(|_| sh.keep(session, &format!("{n}/after"), &after));
        records.push(Record {
            turn: a.turn,
            message: a.message,
            workspace: a.workspace,
            before,
            after,
            undone: false,
        });
        if let Err(e) = kept.and_then(|_| save(store, session, &records)) {
            return Some(AgentEvent::Warning {
                message: format!("cannot save the checkpoint of this turn: {e}"),
            });
        }
        Some(AgentEvent::FilesChanged {
            turn: a.turn,
            files: changes.iter().map(summary::to_event).collect(),
        })
    }
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

/// Turn start (persistent sessions): numbers the turn and remembers its
/// user message; the workspace is the session's work directory.
pub(crate) fn begin_turn(
    checkpoints: &Checkpoints,
    work_dir: &Path,
    earlier_turns: usize,
    user: Option<&crate::session::StoredMessage>,
) {
    let key = user.map(crate::session::pins::key).unwrap_or_default();
    checkpoints.begin(earlier_turns + 1, key, work_dir);
}

/// Turn end: the `files_changed` event (or a warning) for the front end.
pub(crate) async fn end_turn(
    checkpoints: &Checkpoints,
    data_dir: &Path,
    store: &SessionStore,
    session: &str,
    sink: &crate::protocol::EventSink,
) {
    if let Some(e) = checkpoints.end(data_dir, store, session).await {
        sink.emit(e).await;
    }
}
