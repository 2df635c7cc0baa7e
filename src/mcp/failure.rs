//! How a call that did not succeed is reported: stopped by the user, the
//! server gone, or refused by the sandbox navi put the server in.
use super::{Client, McpHub, Slot, connect, lock, wording};
use crate::config::mcp::McpTransport;
use crate::tools::ToolResult;

impl McpHub {
    /// A call the user stopped. A cancel is not a failure: the server was
    /// alive when asked, so it starts the next call with a clean record (a
    /// crash after this is restarted at once, no back-off).
    pub(super) fn cancelled(&self, slot: &Slot, client: &Client) -> ToolResult {
        if !client.is_transport_closed() {
            let mut st = lock(&slot.st);
            st.strikes = 0;
            st.retry_at = None;
        }
        ToolResult::err("operation cancelled by user")
    }

    /// A transport-level failure: the server is marked down for a restart.
    pub(super) async fn failed(
        &self,
        slot: &Slot,
        client: &Client,
        tool: &str,
        e: rmcp::ServiceError,
    ) -> ToolResult {
        let raw = wording::chain(&e);
        let why =
            if client.is_transport_closed() && slot.cfg.transport_kind() == McpTransport::Stdio {
                "the server process exited".to_string()
            } else if slot.cfg.transport_kind() == McpTransport::Http {
                connect::http_error(&slot.name, &slot.cfg, &raw).await
            } else {
                wording::explain(&slot.name, &slot.cfg, &raw)
            };
        self.strike(slot, why.clone());
        let msg = format!(
            "MCP server '{}' failed during {tool}: {why}; it will be restarted on the next call",
            slot.name
        );
        self.note_denial(slot, ToolResult::err(self.with_stderr(slot, msg)))
    }

    pub(super) fn with_stderr(&self, slot: &Slot, msg: String) -> String {
        let tail = slot.stderr.last(3);
        if tail.is_empty() {
            msg
        } else {
            format!("{msg}\nserver stderr (last lines):\n{}", tail.join("\n"))
        }
    }

    /// A failed result of a server navi sandboxed, when the failure looks
    /// like the sandbox's doing (a refused write or socket in its text or
    /// the server's stderr), gets a sentence naming the keys to change.
    pub(super) fn note_denial(&self, slot: &Slot, mut result: ToolResult) -> ToolResult {
        if result.success || !slot.sandboxed() {
            return result;
        }
        let error = result.error.clone().unwrap_or_default();
        let tail = slot.stderr.last(5);
        let mut texts: Vec<&str> = vec![&error, &result.output];
        texts.extend(tail.iter().map(String::as_str));
        if let Some(hint) = wording::denial_hint(&slot.name, &slot.cfg, &texts) {
            match &mut result.error {
                Some(e) => {
                    e.push_str("\n[sandbox] ");
                    e.push_str(&hint);
                }
                None => result.error = Some(format!("[sandbox] {hint}")),
            }
        }
        result
    }
}
