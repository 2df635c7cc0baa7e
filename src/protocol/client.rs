//! The editor's side of a session's tools: when a front end (ACP's
//! `fs/*` and `terminal/*`) offers its own file system and terminals, the
//! tools go through [`ClientSide`] instead of the disk and a local child
//! process. A front end implements it and hands it to the session
//! (`SessionHandle::set_client`); the tools never know which protocol is
//! behind it.
//!
//! Invariants: a front end that offers nothing leaves the session without a
//! client, and every tool behaves as before; whatever the client answers,
//! a failure becomes a tool error the model reads (never a panic, never a
//! partial write on navi's side); paths are absolute and already checked
//! against `[security].fs_allowed_paths` by the tool.
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// One command for the client's terminal.
#[derive(Clone, Debug)]
pub struct ClientCommand {
    /// The tool call the terminal belongs to (the editor shows it there).
    pub call_id: String,
    pub program: String,
    pub args: Vec<String>,
    /// Extra variables (the client's own environment is the base).
    pub env: Vec<(String, String)>,
    pub cwd: PathBuf,
    /// Most bytes of output the client keeps (it drops the beginning).
    pub output_limit: u64,
    /// How long before navi kills it.
    pub timeout: Duration,
}

/// How a command in the client's terminal ended.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ClientExit {
    /// Everything the terminal printed (stdout and stderr together), as
    /// the client kept it.
    pub output: String,
    /// The client dropped the beginning of the output.
    pub truncated: bool,
    pub exit_code: Option<u32>,
    /// The signal that ended it, as the client names it (`SIGKILL`, `9`…).
    pub signal: Option<String>,
    /// navi killed it: the time limit.
    pub timed_out: bool,
    /// navi killed it: the user stopped the turn.
    pub cancelled: bool,
    /// How long it ran.
    pub elapsed: Duration,
}

/// What the client offers. A `false` capability is never called.
#[async_trait::async_trait]
pub trait ClientSide: Send + Sync {
    /// Reads go through [`ClientSide::read_text`].
    fn reads(&self) -> bool;
    /// Writes go through [`ClientSide::write_text`].
    fn writes(&self) -> bool;
    /// Commands may run through [`ClientSide::run`].
    fn terminals(&self) -> bool;
    /// The text of `path` as the editor has it (an unsaved buffer included).
    async fn read_text(&self, path: &Path) -> Result<String, String>;
    /// Replaces the text of `path` in the editor (it saves, or keeps an
    /// unsaved buffer, as it does for its own edits).
    async fn write_text(&self, path: &Path, content: &str) -> Result<(), String>;
    /// Runs `cmd` in a terminal of the client, shown live in the call;
    /// killed on `cancel` or at its timeout; released in every case.
    async fn run(
        &self,
        cmd: ClientCommand,
        cancel: &CancellationToken,
    ) -> Result<ClientExit, String>;
}

/// A session's client, if its front end offers one.
pub type Client = Arc<dyn ClientSide>;
