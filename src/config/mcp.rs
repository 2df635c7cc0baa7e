//! `[mcp_servers.<name>]`: external MCP servers whose tools Navi offers the
//! model. Checked here so a bad entry is a config error (exit 2) naming the
//! server and key, before anything starts.
use super::ConfigError;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// How Navi talks to one server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum McpTransport {
    /// Spawn `command` and speak JSON-RPC over its stdin/stdout.
    Stdio,
    /// POST to `url` (MCP streamable HTTP).
    Http,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct McpServerConfig {
    /// `"stdio"` or `"http"`; empty = `stdio` when `command` is set, `http` when `url` is.
    pub(crate) transport: String,
    /// Program to start (stdio transport), looked up on PATH.
    pub(crate) command: String,
    pub(crate) args: Vec<String>,
    /// Extra environment for the program (added to Navi's own).
    pub(crate) env: BTreeMap<String, String>,
    /// Working directory of the program; empty = Navi's.
    pub(crate) cwd: String,
    /// Endpoint of a streamable-HTTP server.
    pub(crate) url: String,
    /// Extra HTTP headers (e.g. `Authorization`).
    pub(crate) headers: BTreeMap<String, String>,
    pub(crate) enabled: bool,
    /// How long start-up (spawn + `initialize` + `tools/list`) may take.
    pub(crate) startup_timeout_secs: f64,
    /// How long one tool call may take before it fails.
    pub(crate) tool_timeout_secs: f64,
    /// Only these tools of the server (empty = all of them).
    pub(crate) enabled_tools: Vec<String>,
    /// Never these tools.
    pub(crate) disabled_tools: Vec<String>,
    /// Believe the server's `readOnlyHint` annotation: such tools then run
    /// without approval. Off by default: every MCP tool asks first.
    pub(crate) trust_read_only: bool,
    /// Whether a stdio server starts inside navi's sandbox. Unset: only when
    /// the entry asks for a limit (`writable` or `network = false`); a
    /// server is otherwise a program the user chose to run, like in Codex or
    /// Claude Code (see docs/mcp.md, "Sandbox").
    pub(crate) sandbox: Option<bool>,
    /// Directories a stdio server may write to under the sandbox (besides
    /// its private temporary directory).
    pub(crate) writable: Vec<String>,
    /// Whether a sandboxed stdio server may use the network.
    pub(crate) network: bool,
    /// Secret-looking variables of navi's environment the server still gets.
    pub(crate) env_passthrough: Vec<String>,
}

impl Default for McpServerConfig {
    fn default() -> Self {
        McpServerConfig {
            transport: String::new(),
            command: String::new(),
            args: Vec::new(),
            env: BTreeMap::new(),
            cwd: String::new(),
            url: String::new(),
            headers: BTreeMap::new(),
            enabled: true,
            startup_timeout_secs: 30.0,
            tool_timeout_secs: 120.0,
            enabled_tools: Vec::new(),
            disabled_tools: Vec::new(),
            trust_read_only: false,
            sandbox: None,
            writable: Vec::new(),
            network: true,
            env_passthrough: Vec::new(),
        }
    }
}

impl McpServerConfig {
    /// The transport, once [`validate`] has accepted the entry.
    pub(crate) fn transport_kind(&self) -> McpTransport {
        match self.transport.trim().to_ascii_lowercase().as_str() {
            "http" | "streamable_http" | "streamable-http" => McpTransport::Http,
            "" if self.command.trim().is_empty() && !self.url.trim().is_empty() => {
                McpTransport::Http
            }
            _ => McpTransport::Stdio,
        }
    }

    /// Whether the server is to run in the sandbox (`[sandbox].mode` may
    /// still turn it off: `full-access` sandboxes nothing).
    pub(crate) fn sandboxed(&self) -> bool {
        self.sandbox
            .unwrap_or(!self.writable.is_empty() || !self.network)
    }

    /// Whether `tool` (the server's own name) passes `enabled_tools`/`disabled_tools`.
    pub(crate) fn allows_tool(&self, tool: &str) -> bool {
        (self.enabled_tools.is_empty() || self.enabled_tools.iter().any(|t| t == tool))
            && !self.disabled_tools.iter().any(|t| t == tool)
    }
}

fn invalid(origin: &str, key: String, value: impl ToString, why: &str) -> ConfigError {
    ConfigError::Invalid {
        origin: origin.to_string(),
        key,
        value: value.to_string(),
        why: why.to_string(),
    }
}

/// A server name becomes the prefix of its tools' names (`<server>__<tool>`),
/// so it must be short, plain and free of the separator.
pub(crate) fn valid_server_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 32
        && !name.contains("__")
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// Checks every `[mcp_servers.*]` entry.
pub(crate) fn validate(
    servers: &BTreeMap<String, McpServerConfig>,
    origin: &str,
) -> Result<(), ConfigError> {
    for (name, s) in servers {
        let key = |k: &str| format!("mcp_servers.{name}.{k}");
        if !valid_server_name(name) {
            return Err(invalid(
                origin,
                format!("mcp_servers.{name}"),
                name,
                "a server name must be 1-32 letters, digits, '-' or '_' without \"__\" (it prefixes tool names as <server>__<tool>)",
            ));
        }
        let t = s.transport.trim().to_ascii_lowercase();
        if !matches!(
            t.as_str(),
            "" | "stdio" | "http" | "streamable_http" | "streamable-http"
        ) {
            return Err(invalid(
                origin,
                key("transport"),
                &s.transport,
                "unknown transport; use \"stdio\" (with command) or \"http\" (with url)",
            ));
        }
        super::sandbox::check_dirs(origin, &key("writable"), &s.writable)?;
        let has_cmd = !s.command.trim().is_empty();
        let has_url = !s.url.trim().is_empty();
        match s.transport_kind() {
            McpTransport::Stdio if !has_cmd => {
                return Err(invalid(
                    origin,
                    key("command"),
                    "",
                    "missing: set command = \"program\" (stdio) or url = \"http://...\" (streamable HTTP)",
                ));
            }
            McpTransport::Stdio if has_url => {
                return Err(invalid(
                    origin,
                    key("url"),
                    &s.url,
                    "a stdio server takes command, not url; keep one of them",
                ));
            }
            McpTransport::Http if !has_url => {
                return Err(invalid(
                    origin,
                    key("url"),
                    "",
                    "missing: an http server needs url = \"http://host:port/mcp\"",
                ));
            }
            McpTransport::Http
                if !(s.url.starts_with("http://") || s.url.starts_with("https://")) =>
            {
                return Err(invalid(
                    origin,
                    key("url"),
                    &s.url,
                    "must be an http:// or https:// URL",
                ));
            }
            _ => {}
        }
        for (k, v) in [
            ("startup_timeout_secs", s.startup_timeout_secs),
            ("tool_timeout_secs", s.tool_timeout_secs),
        ] {
            if !(v.is_finite() && v > 0.0) {
                return Err(invalid(
                    origin,
                    key(k),
                    v,
                    "must be a positive number of seconds",
                ));
            }
        }
        for h in s.headers.keys() {
            if h.is_empty()
                || !h
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-_".contains(&b))
            {
                return Err(invalid(
                    origin,
                    key("headers"),
                    h,
                    "not a valid HTTP header name",
                ));
            }
        }
    }
    Ok(())
}
