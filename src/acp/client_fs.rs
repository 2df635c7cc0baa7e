//! The editor's side of a session's tools over ACP: `fs/read_text_file`,
//! `fs/write_text_file` and the terminals ([`super::terminal`]), for the
//! capabilities the client announced in `initialize`.
//!
//! The requests go out on the connection from the tool's own task (never
//! from the dispatch loop, which would wait on itself); the SDK numbers
//! them and routes each answer back, as for `session/request_permission`.
use super::session::Cx;
use super::terminal::Shown;
use crate::protocol::{ClientCommand, ClientExit, ClientSide};
use agent_client_protocol::v1::schema::{
    ClientCapabilities, ReadTextFileRequest, WriteTextFileRequest,
};
use std::path::Path;
use tokio_util::sync::CancellationToken;

/// What a client offers, from its `initialize`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Offers {
    pub(crate) read: bool,
    pub(crate) write: bool,
    pub(crate) terminal: bool,
}

impl Offers {
    pub(crate) fn of(caps: &ClientCapabilities) -> Offers {
        Offers {
            read: caps.fs.read_text_file,
            write: caps.fs.write_text_file,
            terminal: caps.terminal,
        }
    }

    pub(crate) fn any(&self) -> bool {
        self.read || self.write || self.terminal
    }
}

/// One session's way to the client's file system and terminals.
pub(crate) struct AcpClient {
    pub(crate) cx: Cx,
    pub(crate) session: String,
    pub(crate) offers: Offers,
    /// The terminal each call runs in, for its last update.
    pub(crate) shown: Shown,
}

/// A client's error as one line: its message, and its data when that says
/// more.
pub(crate) fn said(e: &agent_client_protocol::Error) -> String {
    match &e.data {
        Some(serde_json::Value::String(d)) if d != &e.message => format!("{}: {d}", e.message),
        Some(d) if !d.is_null() && !d.is_string() => format!("{}: {d}", e.message),
        _ => e.message.clone(),
    }
}

#[async_trait::async_trait]
impl ClientSide for AcpClient {
    fn reads(&self) -> bool {
        self.offers.read
    }

    fn writes(&self) -> bool {
        self.offers.write
    }

    fn terminals(&self) -> bool {
        self.offers.terminal
    }

    async fn read_text(&self, path: &Path) -> Result<String, String> {
        let req = ReadTextFileRequest::new(self.session.clone(), path);
        self.cx
            .send_request(req)
            .block_task()
            .await
            .map(|r| r.content)
            .map_err(|e| said(&e))
    }

    async fn write_text(&self, path: &Path, content: &str) -> Result<(), String> {
        let req = WriteTextFileRequest::new(self.session.clone(), path, content);
        self.cx
            .send_request(req)
            .block_task()
            .await
            .map(|_| ())
            .map_err(|e| said(&e))
    }

    async fn run(
        &self,
        cmd: ClientCommand,
        cancel: &CancellationToken,
    ) -> Result<ClientExit, String> {
        super::terminal::run(self, cmd, cancel).await
    }
}
