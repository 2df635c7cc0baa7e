//! Starting one server: spawn (stdio) or dial (streamable HTTP), the
//! `initialize` handshake and `tools/list`, all within the server's start-up
//! timeout. The child's stderr is kept as a short tail for `/mcp`.
use crate::config::McpServerConfig;
use crate::config::mcp::McpTransport;
use rmcp::service::RunningService;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt};
use std::collections::{HashMap, VecDeque};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::AsyncBufReadExt;

/// A live connection (dropping it closes the transport and kills the child).
pub(crate) type Client = RunningService<RoleClient, ()>;

/// Lines of a server's stderr kept for `/mcp`.
const STDERR_LINES: usize = 20;
/// Longest stderr line kept (bytes).
const STDERR_LINE_MAX: usize = 400;

/// The last lines a server wrote to stderr (lossy UTF-8).
#[derive(Clone, Default)]
pub(crate) struct StderrTail(Arc<Mutex<VecDeque<String>>>);

impl StderrTail {
    pub(crate) fn push(&self, raw: &[u8]) {
        let mut line = String::from_utf8_lossy(raw).trim_end().to_string();
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

/// Connects and lists the tools. Errors are one line saying what to fix.
pub(crate) async fn connect(
    name: &str,
    cfg: &McpServerConfig,
    stderr: &StderrTail,
    sandbox: &(crate::sandbox::SandboxConfig, crate::config::Paths),
) -> Result<(Client, Vec<rmcp::model::Tool>), String> {
    let limit = Duration::from_secs_f64(cfg.startup_timeout_secs);
    let work = async {
        let client = match cfg.transport_kind() {
            McpTransport::Stdio => {
                let transport = spawn(name, cfg, stderr, sandbox)?;
                ().serve(transport).await.map_err(|e| {
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
                ().serve(StreamableHttpClientTransport::from_config(config))
                    .await
                    .map_err(|e| format!("the MCP handshake with {} failed: {e}", cfg.url))?
            }
        };
        let tools = client
            .peer()
            .list_all_tools()
            .await
            .map_err(|e| format!("tools/list failed: {e}"))?;
        Ok::<_, String>((client, tools))
    };
    match tokio::time::timeout(limit, work).await {
        Ok(r) => r,
        Err(_) => Err(format!(
            "no answer to initialize/tools/list within {}s (mcp_servers.{name}.startup_timeout_secs)",
            cfg.startup_timeout_secs
        )),
    }
}

/// Starts a stdio server: with the parent-death signal,
/// an environment without navi's secrets (names in its `env` or
/// `env_passthrough` excepted), and the sandbox of its `writable`/`network`
/// policy.
fn spawn(
    name: &str,
    cfg: &McpServerConfig,
    stderr: &StderrTail,
    sandbox: &(crate::sandbox::SandboxConfig, crate::config::Paths),
) -> Result<TokioChildProcess, String> {
    let mut cmd = tokio::process::Command::new(&cfg.command);
    cmd.args(&cfg.args).envs(&cfg.env).kill_on_drop(true);
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
    crate::tools::process::die_with_parent(&mut cmd);
    let (proc, err) = TokioChildProcess::builder(cmd)
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| {
            let hint = if e.kind() == std::io::ErrorKind::NotFound {
                " (is it installed and on PATH? check command and cwd)"
            } else {
                ""
            };
            format!("cannot start `{}`: {e}{hint}", cfg.command)
        })?;
    if let Some(err) = err {
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
    Ok(proc)
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
