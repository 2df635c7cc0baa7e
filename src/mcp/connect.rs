//! Starting one server: spawn (stdio) or dial (streamable HTTP), the
//! `initialize` handshake and `tools/list`, all within the server's start-up
//! timeout. The child's stderr is kept as a short tail for `/mcp`.
use super::inspect::{Inspect, TaskOnly};
use crate::config::McpServerConfig;
use crate::config::mcp::McpTransport;
use crate::tools::process::OwnedGroup;
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{RoleClient, ServiceExt};
use std::collections::{HashMap, VecDeque};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::AsyncBufReadExt;

/// A live connection (dropping it closes the transport).
pub(crate) type Client = RunningService<RoleClient, super::progress::NaviClient>;

/// Lines of a server's stderr kept for `/mcp`.
const STDERR_LINES: usize = 20;
/// Longest stderr line kept (bytes).
const STDERR_LINE_MAX: usize = 400;

/// The last lines a server wrote to stderr (lossy UTF-8).
#[derive(Clone, Default)]
pub(crate) struct StderrTail(Arc<Mutex<VecDeque<String>>>);

impl StderrTail {
    pub(crate) fn push(&self, raw: &[u8]) {
        // Shown by `navi mcp check`/`list` and `/mcp`: control characters
        // made visible, so a server cannot write escapes to the terminal.
        let mut line: String = String::from_utf8_lossy(raw)
            .trim_end()
            .chars()
            .map(|c| match c {
                '\u{1b}' => '␛',
                '\t' => c,
                c if (c as u32) < 0x20 => char::from_u32(0x2400 + c as u32).unwrap_or('?'),
                '\u{7f}' => '␡',
                c if c.is_control() => '\u{fffd}',
                c => c,
            })
            .collect();
        if line.is_empty() {
            return;
        }
        if line.len() > STDERR_LINE_MAX {
            line = crate::tools::truncate_output(&line, STDERR_LINE_MAX);
        }
        if let Ok(mut q) = self.0.lock() {
            if q.len() >= STDERR_LINES {
                q.pop_front();
            }
            q.push_back(line);
        }
    }

    /// The newest `n` lines, oldest first.
    pub(crate) fn last(&self, n: usize) -> Vec<String> {
        self.0
            .lock()
            .map(|q| q.iter().skip(q.len().saturating_sub(n)).cloned().collect())
            .unwrap_or_default()
    }
}

/// A started server: the connection, its tools, and (stdio) the server's
/// process group, killed when dropped.
pub(crate) struct Connected {
    pub(crate) client: Client,
    pub(crate) tools: Vec<rmcp::model::Tool>,
    /// The stdio server's process (dropping it ends the server).
    pub(crate) process: Option<ServerProcess>,
    /// Tools listed as needing MCP tasks (navi cannot call them).
    pub(crate) task_only: TaskOnly,
}

/// Connects and lists the tools. Errors are one line saying what to fix.
/// A stdio server that fails its start-up is killed with everything it
/// started (its whole process group).
pub(crate) async fn connect(
    name: &str,
    cfg: &McpServerConfig,
    stderr: &StderrTail,
    sandbox: &(crate::sandbox::SandboxConfig, crate::config::Paths),
) -> Result<Connected, String> {
    let limit = Duration::from_secs_f64(cfg.startup_timeout_secs);
    let mut process: Option<ServerProcess> = None;
    let task_only = TaskOnly::default();
    let work = async {
        let client = match cfg.transport_kind() {
            McpTransport::Stdio => {
                let (transport, p) = spawn(name, cfg, stderr, &task_only, sandbox)?;
                process = Some(p);
                super::progress::NaviClient::default()
                    .serve(transport)
                    .await
                    .map_err(|e| {
                        let tail = stderr.last(3).join(" | ");
                        let tail = if tail.is_empty() {
                            String::new()
                        } else {
                            format!(" (stderr: {tail})")
                        };
                        format!("the MCP handshake failed: {e}{tail}")
                    })?
            }
            McpTransport::Http => {
                // rmcp's HTTP client is built without a crypto provider; use
                // the ring one the rest of Navi uses. Fails harmlessly when
                // one is installed already.
                let _ = rustls::crypto::ring::default_provider().install_default();
                let config = StreamableHttpClientTransportConfig::with_uri(cfg.url.as_str())
                    .custom_headers(http_headers(cfg)?)
                    .max_json_response_size(64 * 1024 * 1024);
                let client = super::inspect_http::InspectHttp::new(task_only.clone())?;
                match super::progress::NaviClient::default()
                    .serve(StreamableHttpClientTransport::with_client(client, config))
                    .await
                    .map_err(|e| error_chain(&e))
                {
                    Ok(c) => c,
                    Err(raw) => return Err(http_error(&cfg.url, &raw).await),
                }
            }
        };
        let tools = client
            .peer()
            .list_all_tools()
            .await
            .map_err(|e| format!("tools/list failed: {e}"))?;
        Ok::<_, String>((client, tools))
    };
    let r = match tokio::time::timeout(limit, work).await {
        Ok(r) => r,
        Err(_) => Err(format!(
            "no answer to initialize/tools/list within {}s (mcp_servers.{name}.startup_timeout_secs)",
            cfg.startup_timeout_secs
        )),
    };
    // On an error `process` is dropped here: the server and its children end.
    r.map(|(client, tools)| Connected {
        client,
        tools,
        process: process.take(),
        task_only,
    })
}

/// An error and every error below it, as one line (transport errors keep
/// the useful part, "Connection refused", in their sources).
pub(crate) fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut next = e.source();
    while let Some(s) = next {
        let t = s.to_string();
        if !text.contains(&t) {
            text.push_str(": ");
            text.push_str(&t);
        }
        next = s.source();
    }
    text
}

/// Why an HTTP connection failed, in words: "connection refused" rather
/// than the transport's chain of wrappers.
pub(crate) fn http_reason(raw: &str) -> String {
    let lower = raw.to_lowercase();
    if lower.contains("connection refused") {
        "connection refused (is the server running? check the url and port)".to_string()
    } else if lower.contains("dns error") || lower.contains("failed to lookup address") {
        "the host name does not resolve (check the url)".to_string()
    } else if lower.contains("timed out") {
        "the connection timed out".to_string()
    } else {
        raw.to_string()
    }
}

/// A failed HTTP start-up: where, and why in words. The transport's error
/// often hides the cause ("error sending request"), so a failure to send
/// is looked at again with a plain TCP connection to the server's port.
pub(crate) async fn http_error(url: &str, raw: &str) -> String {
    let lower = raw.to_lowercase();
    if (lower.contains("error sending request") || lower.contains("connect"))
        && let Some(why) = tcp_probe(url).await
    {
        return format!("cannot reach {url}: {why}");
    }
    format!("cannot reach {url}: {}", http_reason(raw))
}

/// Why a TCP connection to the url's host and port fails (`None`: it works).
async fn tcp_probe(url: &str) -> Option<String> {
    let u = reqwest::Url::parse(url).ok()?;
    let host = u
        .host_str()?
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_string();
    let port = u.port_or_known_default()?;
    let dial = tokio::net::TcpStream::connect((host.as_str(), port));
    match tokio::time::timeout(Duration::from_secs(3), dial).await {
        Ok(Ok(_)) => None,
        Ok(Err(e)) if e.kind() == std::io::ErrorKind::ConnectionRefused => Some(format!(
            "connection refused (nothing listens on {host}:{port}; is the server running?)"
        )),
        Ok(Err(e)) => Some(http_reason(&e.to_string())),
        Err(_) => Some("the connection timed out".into()),
    }
}
/// A running stdio server: the child (killed when dropped) and its whole
/// process group (killed after it).
pub(crate) struct ServerProcess {
    _child: tokio::process::Child,
    _group: Option<OwnedGroup>,
}

type StdioTransport =
    AsyncRwTransport<RoleClient, Inspect<tokio::process::ChildStdout>, tokio::process::ChildStdin>;

/// Starts a stdio server in its own process group, with an environment
/// without navi's secrets (names in its `env` or `env_passthrough`
/// excepted) and the sandbox of its `writable`/`network` policy.
fn spawn(
    name: &str,
    cfg: &McpServerConfig,
    stderr: &StderrTail,
    task_only: &TaskOnly,
    sandbox: &(crate::sandbox::SandboxConfig, crate::config::Paths),
) -> Result<(StdioTransport, ServerProcess), String> {
    let mut cmd = tokio::process::Command::new(&cfg.command);
    // Its own session and process group (killed as a whole, see
    // `ServerProcess`; a Ctrl-C at the terminal is navi's to handle, not the
    // server's). No
    // parent-death signal: it is tied to the spawning *thread*, and a tokio
    // worker that did `block_in_place` may end long before navi does. If
    // navi is killed outright, the server sees its stdin close.
    cmd.args(&cfg.args)
        .envs(&cfg.env)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    // Its own session: no controlling terminal, no inherited fds above 2.
    crate::tools::child_setup::detach(&mut cmd);
    if !cfg.cwd.trim().is_empty() {
        cmd.current_dir(&cfg.cwd);
    }
    crate::tools::child_env::scrub(&mut cmd, &cfg.env_passthrough);
    let policy =
        crate::sandbox::Policy::for_mcp(&sandbox.0, &sandbox.1, name, &cfg.writable, cfg.network)
            .map_err(|e| format!("mcp_servers.{name}: {e}"))?;
    if let Some(policy) = &policy {
        crate::sandbox::enforce::attach(&mut cmd, policy)
            .map_err(|e| format!("mcp_servers.{name}: {e}"))?;
    }
    let mut child = cmd.spawn().map_err(|e| {
        let hint = if e.kind() == std::io::ErrorKind::NotFound {
            " (is it installed and on PATH? check command and cwd)"
        } else {
            ""
        };
        format!("cannot start `{}`: {e}{hint}", cfg.command)
    })?;
    let group = child.id().map(OwnedGroup::new);
    let (Some(out), Some(input)) = (child.stdout.take(), child.stdin.take()) else {
        return Err(format!("cannot talk to `{}`: no pipes", cfg.command));
    };
    if let Some(err) = child.stderr.take() {
        let tail = stderr.clone();
        tokio::spawn(async move {
            let mut reader = tokio::io::BufReader::new(err);
            let mut buf = Vec::new();
            loop {
                buf.clear();
                match reader.read_until(b'\n', &mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(_) => tail.push(&buf),
                }
            }
        });
    }
    let transport = AsyncRwTransport::new_client(Inspect::new(out, task_only.clone()), input);
    Ok((
        transport,
        ServerProcess {
            _child: child,
            _group: group,
        },
    ))
}

type Headers = HashMap<reqwest::header::HeaderName, reqwest::header::HeaderValue>;

fn http_headers(cfg: &McpServerConfig) -> Result<Headers, String> {
    let mut headers = HashMap::new();
    for (k, v) in &cfg.headers {
        let name = reqwest::header::HeaderName::from_bytes(k.as_bytes())
            .map_err(|e| format!("mcp_servers header name {k:?}: {e}"))?;
        let value = reqwest::header::HeaderValue::from_str(v)
            .map_err(|e| format!("mcp_servers header {k}: value is not valid in HTTP: {e}"))?;
        headers.insert(name, value);
    }
    Ok(headers)
}
