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
use std::os::unix::process::ExitStatusExt;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::AsyncBufReadExt;

/// A live connection (dropping it closes the transport).
pub(crate) type Client = RunningService<RoleClient, super::progress::NaviClient>;

/// Lines of a server's stderr kept for `/mcp`.
const STDERR_LINES: usize = 20;
/// Longest stderr line kept (bytes).
const STDERR_LINE_MAX: usize = 400;

/// The last lines a server wrote to stderr (lossy UTF-8), and whether the
/// current process's stderr has reached its end.
#[derive(Clone, Default)]
pub(crate) struct StderrTail(Arc<Mutex<VecDeque<String>>>, Arc<AtomicBool>);

impl StderrTail {
    /// Waits (at most `limit`) until the current process's stderr is read
    /// to its end, so a failure report has its last lines.
    async fn drained(&self, limit: Duration) {
        let until = tokio::time::Instant::now() + limit;
        while !self.1.load(Ordering::SeqCst) && tokio::time::Instant::now() < until {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

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
                let (transport, p, sandboxed) = spawn(name, cfg, stderr, &task_only, sandbox)?;
                let served = super::progress::NaviClient::default()
                    .serve(transport)
                    .await;
                match served {
                    Ok(c) => {
                        process = Some(p);
                        c
                    }
                    Err(e) => {
                        let raw = super::wording::chain(&e);
                        return Err(stdio_failure(name, cfg, &raw, p, stderr, sandboxed).await);
                    }
                }
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
                {
                    Ok(c) => c,
                    Err(e) => return Err(http_error(name, cfg, &super::wording::chain(&e)).await),
                }
            }
        };
        let tools = client.peer().list_all_tools().await.map_err(|e| {
            let why = super::wording::explain(name, cfg, &super::wording::chain(&e));
            format!("tools/list failed: {why}")
        })?;
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

/// A stdio server that failed its handshake: why in words, how it ended
/// (its exit code, when it exited), the last lines of its stderr, and —
/// when navi sandboxed it and that looks like the reason — which keys to
/// change.
async fn stdio_failure(
    name: &str,
    cfg: &McpServerConfig,
    raw: &str,
    mut process: ServerProcess,
    stderr: &StderrTail,
    sandboxed: bool,
) -> String {
    let why = super::wording::explain(name, cfg, raw);
    // A server that closed its output has usually exited: wait a moment for
    // its status (and for its last stderr lines to be read).
    let ended = tokio::time::timeout(Duration::from_millis(500), process._child.wait()).await;
    let how = match ended {
        Ok(Ok(status)) => match (status.code(), status.signal()) {
            (Some(code), _) => format!(" (it exited with code {code})"),
            (None, Some(sig)) => format!(" (it was killed by signal {sig})"),
            _ => String::new(),
        },
        _ => String::new(),
    };
    if ended.is_ok() {
        stderr.drained(Duration::from_millis(300)).await;
    }
    let lines = stderr.last(STDERR_LINES);
    let tail = lines
        .iter()
        .skip(lines.len().saturating_sub(3))
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(" | ");
    let tail = if tail.is_empty() {
        String::new()
    } else {
        format!("; its stderr ends: {tail}")
    };
    let mut texts: Vec<&str> = lines.iter().map(String::as_str).collect();
    texts.push(raw);
    let hint = sandboxed
        .then(|| super::wording::denial_hint(name, cfg, &texts))
        .flatten()
        .map(|h| format!("; {h}"))
        .unwrap_or_default();
    format!("the MCP handshake failed: {why}{how}{tail}{hint}")
}

/// A known cause of a failed HTTP connection, in words (`lower`: the error
/// text in lower case).
pub(crate) fn known_http_reason(lower: &str) -> Option<String> {
    if lower.contains("connection refused") {
        Some("connection refused (is the server running? check the url and port)".to_string())
    } else if lower.contains("dns error") || lower.contains("failed to lookup address") {
        Some("the host name does not resolve (check the url)".to_string())
    } else if lower.contains("timed out") {
        Some("the connection timed out".to_string())
    } else {
        None
    }
}

/// A failed HTTP start-up or call: where, and why in words. The transport's
/// error often hides the cause ("error sending request"), so a failure to
/// send is looked at again with a plain TCP connection to the server's port.
pub(crate) async fn http_error(name: &str, cfg: &McpServerConfig, raw: &str) -> String {
    let lower = raw.to_lowercase();
    let url = &cfg.url;
    let sent = lower.contains("http ") || lower.contains("content type");
    if !sent
        && (lower.contains("error sending request") || lower.contains("connect"))
        && let Some(why) = tcp_probe(url).await
    {
        return format!("cannot reach {url}: {why}");
    }
    if let Some(why) = known_http_reason(&lower) {
        return format!("cannot reach {url}: {why}");
    }
    format!("{url}: {}", super::wording::explain(name, cfg, raw))
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
        Ok(Err(e)) => Some(
            known_http_reason(&e.to_string().to_lowercase())
                .unwrap_or_else(|| super::wording::scrub(&e.to_string())),
        ),
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
) -> Result<(StdioTransport, ServerProcess, bool), String> {
    let mut cmd = tokio::process::Command::new(&cfg.command);
    // Its own session and process group (killed as a whole, see
    // `ServerProcess`; a Ctrl-C at the terminal is navi's to handle, not the
    // server's). No
    // parent-death signal: it is tied to the spawning *thread*, and a tokio
    // worker that did `block_in_place` may end long before navi does. If
    // navi is killed outright, the watchdog kills its session (`detach`
    // announces it; see `tools::watchdog`).
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
    // Unsandboxed unless the entry opts in (docs/mcp.md, "Sandbox"): the
    // configurations MCP servers document (`npx -y …`, `uvx …`, `docker run
    // -i …`) write to the package managers' caches and to the directories
    // they serve, which no sandbox default can know.
    let policy = if cfg.sandboxed() {
        crate::sandbox::Policy::for_mcp(&sandbox.0, &sandbox.1, name, &cfg.writable, cfg.network)
            .map_err(|e| format!("mcp_servers.{name}: {e}"))?
    } else {
        None
    };
    if let Some(policy) = &policy {
        crate::sandbox::enforce::attach(&mut cmd, policy)
            .map_err(|e| format!("mcp_servers.{name}: {e}"))?;
    }
    let mut child = cmd.spawn().map_err(|e| {
        let why = match e.kind() {
            std::io::ErrorKind::NotFound => format!(
                "not found (is it installed and on PATH? check mcp_servers.{name}.command and cwd)"
            ),
            std::io::ErrorKind::PermissionDenied => format!(
                "permission denied (is it an executable file? check mcp_servers.{name}.command)"
            ),
            _ => super::wording::scrub(&e.to_string()),
        };
        format!("cannot start `{}`: {why}", cfg.command)
    })?;
    let group = child.id().map(OwnedGroup::new);
    let (Some(out), Some(input)) = (child.stdout.take(), child.stdin.take()) else {
        return Err(format!("cannot talk to `{}`: no pipes", cfg.command));
    };
    if let Some(err) = child.stderr.take() {
        let tail = stderr.clone();
        tail.1.store(false, Ordering::SeqCst);
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
            tail.1.store(true, Ordering::SeqCst);
        });
    }
    let transport = AsyncRwTransport::new_client(Inspect::new(out, task_only.clone()), input);
    Ok((
        transport,
        ServerProcess {
            _child: child,
            _group: group,
        },
        policy.is_some(),
    ))
}

type Headers = HashMap<reqwest::header::HeaderName, reqwest::header::HeaderValue>;

fn http_headers(cfg: &McpServerConfig) -> Result<Headers, String> {
    let mut headers = HashMap::new();
    for (k, v) in &cfg.headers {
        let name = reqwest::header::HeaderName::from_bytes(k.as_bytes()).map_err(|_| {
            format!("mcp_servers header name {k:?} is not a valid HTTP header name")
        })?;
        let value = reqwest::header::HeaderValue::from_str(v)
            .map_err(|_| {
                format!(
                    "mcp_servers header {k}: the value is not valid in HTTP (control characters or a line break?)"
                )
            })?;
        headers.insert(name, value);
    }
    Ok(headers)
}
