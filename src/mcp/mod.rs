//! MCP servers as tool providers (`[mcp_servers.<name>]`), on the `rmcp` SDK.
//!
//! Invariants:
//! - Nothing runs until a front end calls [`McpHub::start`]; with no server
//!   configured the hub is an empty map and costs nothing.
//! - Servers start in the background. A server's tools enter the tool
//!   registry when it is ready; a turn takes its tool list once, at its start,
//!   so tools of a server that is still starting join at the next user message
//!   and the tool list never changes within a turn.
//! - A failing server never fails anything else: a failed start is one
//!   warning (drained by the next turn), a crash or hang is a tool error for
//!   that call, and the next call restarts the server, with back-off after
//!   repeated failures.
//! - Every call has a timeout and follows the run's cancel token; dropping the
//!   request makes rmcp send `notifications/cancelled` to the server.

pub(crate) mod connect;
mod failure;
pub(crate) mod inspect;
pub(crate) mod inspect_http;
pub(crate) mod progress;
pub(crate) mod report;
pub(crate) mod result;
pub(crate) mod tool;
pub(crate) mod wording;

use crate::config::mcp::McpTransport;
use crate::config::{Config, McpServerConfig};
use crate::tools::{ToolRegistry, ToolResult};
use connect::{Client, StderrTail};
use result::ResultLimits;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, RwLock, Weak};
use std::time::{Duration, Instant};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;
pub(crate) use tool::{McpTool, ToolInfo};

/// Longest wait before a server that keeps failing is tried again.
const BACKOFF_MAX: Duration = Duration::from_secs(60);
/// How long sending `notifications/cancelled` may take.
const CANCEL_NOTICE: Duration = Duration::from_secs(2);

/// Where a server is.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum ServerState {
    /// `enabled = false`.
    Disabled,
    /// Configured, nothing started yet.
    Idle,
    Starting,
    Ready,
    /// Start-up failed.
    Failed(String),
    /// Was ready, then crashed or hung; restarted on the next call.
    Down(String),
}

impl ServerState {
    pub(crate) fn label(&self) -> String {
        match self {
            ServerState::Disabled => "disabled".into(),
            ServerState::Idle => "not started".into(),
            ServerState::Starting => "starting".into(),
            ServerState::Ready => "ready".into(),
            ServerState::Failed(e) => format!("failed: {e}"),
            ServerState::Down(e) => format!("down: {e}"),
        }
    }
}

struct SlotState {
    state: ServerState,
    tools: Vec<ToolInfo>,
    /// Tools refused at listing (name: why).
    skipped: Vec<String>,
    /// Consecutive failures (crash, hang, failed start); reset by a good call.
    strikes: u32,
    retry_at: Option<Instant>,
    restarts: u32,
}

struct Slot {
    name: String,
    cfg: McpServerConfig,
    st: Mutex<SlotState>,
    /// Held while (re)connecting, so one start happens at a time.
    client: tokio::sync::Mutex<Option<Arc<Client>>>,
    stderr: StderrTail,
    /// The sandbox settings and navi's dirs its child is started with.
    sandbox: Arc<(crate::sandbox::SandboxConfig, crate::config::Paths)>,
    /// True once the first start attempt has finished (either way).
    settled: watch::Sender<bool>,
    /// The running stdio server's process and process group (killed when
    /// replaced or dropped).
    process: Mutex<Option<connect::ServerProcess>>,
}

impl Slot {
    /// Whether this server's process runs in navi's sandbox: its entry opts
    /// in, the sandbox mode is not `full-access` and the kernel enforces it.
    fn sandboxed(&self) -> bool {
        self.cfg.transport_kind() == McpTransport::Stdio
            && self.cfg.sandboxed()
            && self.sandbox.0.mode() != crate::sandbox::SandboxMode::FullAccess
            && crate::sandbox::support().available()
    }
}

/// A snapshot of one server for `/mcp` and `navi mcp`.
#[derive(Clone, Debug)]
pub(crate) struct ServerStatus {
    pub(crate) name: String,
    pub(crate) target: String,
    pub(crate) state: ServerState,
    pub(crate) tools: Vec<ToolInfo>,
    pub(crate) skipped: Vec<String>,
    pub(crate) restarts: u32,
    pub(crate) stderr_tail: Vec<String>,
}

/// All configured servers.
pub(crate) struct McpHub {
    slots: BTreeMap<String, Arc<Slot>>,
    registry: OnceLock<Weak<RwLock<ToolRegistry>>>,
    me: OnceLock<Weak<McpHub>>,
    started: AtomicBool,
    /// Warnings not yet shown to the user; those with a key are shown once
    /// per key across runs (a server version's tools navi cannot use: the
    /// user can do nothing about them).
    warnings: Mutex<Vec<(Option<String>, String)>>,
    limits: ResultLimits,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Delay before the next start after `strikes` consecutive failures: the
/// first restart is immediate, then 1 s, 2 s, 4 s ... up to a minute.
pub(crate) fn backoff(strikes: u32) -> Duration {
    if strikes <= 1 {
        return Duration::ZERO;
    }
    let secs = 1u64 << (strikes - 2).min(6);
    Duration::from_secs(secs).min(BACKOFF_MAX)
}

impl McpHub {
    /// Builds the hub from config. No I/O.
    pub(crate) fn new(config: &Config, paths: &crate::config::Paths) -> Arc<McpHub> {
        let sandbox = Arc::new((config.sandbox.clone(), paths.clone()));
        let slots = config
            .mcp_servers
            .iter()
            .map(|(name, cfg)| {
                let state = if cfg.enabled {
                    ServerState::Idle
                } else {
                    ServerState::Disabled
                };
                let slot = Slot {
                    name: name.clone(),
                    cfg: cfg.clone(),
                    st: Mutex::new(SlotState {
                        state,
                        tools: Vec::new(),
                        skipped: Vec::new(),
                        strikes: 0,
                        retry_at: None,
                        restarts: 0,
                    }),
                    client: tokio::sync::Mutex::new(None),
                    stderr: StderrTail::default(),
                    sandbox: sandbox.clone(),
                    settled: watch::channel(!cfg.enabled).0,
                    process: Mutex::new(None),
                };
                (name.clone(), Arc::new(slot))
            })
            .collect();
        let hub = Arc::new(McpHub {
            slots,
            registry: OnceLock::new(),
            me: OnceLock::new(),
            started: AtomicBool::new(false),
            warnings: Mutex::new(Vec::new()),
            limits: ResultLimits {
                text_bytes: config.tools.output_limit_bytes.max(1000),
                image_bytes: config.tools.image_max_bytes,
            },
        });
        let _ = hub.me.set(Arc::downgrade(&hub));
        hub
    }

    /// The registry ready servers add their tools to.
    pub(crate) fn attach(&self, registry: &Arc<RwLock<ToolRegistry>>) {
        let _ = self.registry.set(Arc::downgrade(registry));
    }

    /// Starts every enabled server in the background (once; later calls do
    /// nothing). Must be called inside a tokio runtime.
    pub(crate) fn start(&self) {
        if self.slots.is_empty() || self.started.swap(true, Ordering::SeqCst) {
            return;
        }
        let Some(me) = self.me.get().and_then(Weak::upgrade) else {
            return;
        };
        for slot in self.slots.values().filter(|s| s.cfg.enabled) {
            let (hub, slot) = (me.clone(), slot.clone());
            tokio::spawn(async move {
                if let Err(e) = hub.ensure_client(&slot).await {
                    hub.warn(format!(
                        "MCP server '{}' failed to start: {e}; its tools are unavailable (see /mcp)",
                        slot.name
                    ));
                }
                slot.settled.send_replace(true);
            });
        }
    }

    /// Waits until every enabled server's first start has finished (bounded
    /// by its start-up timeout). For one-shot use (`navi run`, `navi mcp`).
    pub(crate) async fn wait_started(&self) {
        for slot in self.slots.values() {
            let mut rx = slot.settled.subscribe();
            let limit = Duration::from_secs_f64(slot.cfg.startup_timeout_secs + 2.0);
            let _ = tokio::time::timeout(limit, rx.wait_for(|v| *v)).await;
        }
    }

    fn warn(&self, msg: String) {
        tracing::warn!("{msg}");
        lock(&self.warnings).push((None, msg));
    }

    /// Warnings not shown yet (each is returned once; a keyed one only the
    /// first time its key is shown, see `llm/server_cache.rs`).
    pub(crate) fn take_warnings(&self) -> Vec<String> {
        let cache = crate::llm::server_cache::get();
        std::mem::take(&mut *lock(&self.warnings))
            .into_iter()
            .filter(|(key, _)| match (key, cache) {
                (Some(k), Some(c)) => c.first_time(k),
                _ => true,
            })
            .map(|(_, msg)| msg)
            .collect()
    }

    /// Names of the ready MCP tools in the registry.
    pub(crate) fn ready_tool_names(&self) -> Vec<String> {
        self.slots
            .values()
            .flat_map(|s| {
                let st = lock(&s.st);
                if st.state == ServerState::Ready || matches!(st.state, ServerState::Down(_)) {
                    st.tools.iter().map(|t| t.full_name.clone()).collect()
                } else {
                    Vec::new()
                }
            })
            .collect()
    }

    pub(crate) fn status(&self) -> Vec<ServerStatus> {
        self.slots
            .values()
            .map(|s| {
                let st = lock(&s.st);
                ServerStatus {
                    name: s.name.clone(),
                    target: if s.sandboxed() {
                        format!("{}; sandboxed", report::target(&s.cfg))
                    } else {
                        report::target(&s.cfg)
                    },
                    state: st.state.clone(),
                    tools: st.tools.clone(),
                    skipped: st.skipped.clone(),
                    restarts: st.restarts,
                    stderr_tail: s.stderr.last(5),
                }
            })
            .collect()
    }

    /// A live client for `slot`, (re)starting the server when it is not
    /// running and its back-off has passed.
    async fn ensure_client(&self, slot: &Slot) -> Result<Arc<Client>, String> {
        let mut guard = slot.client.lock().await;
        if let Some(c) = guard.as_ref() {
            if !c.is_transport_closed() && lock(&slot.st).state == ServerState::Ready {
                return Ok(c.clone());
            }
            if !matches!(lock(&slot.st).state, ServerState::Down(_)) {
                self.strike(slot, "the server process exited".into());
            }
        }
        {
            let st = lock(&slot.st);
            if let Some(at) = st.retry_at
                && Instant::now() < at
            {
                let wait = at.saturating_duration_since(Instant::now()).as_secs() + 1;
                return Err(format!(
                    "MCP server '{}' is {}; next restart attempt in {wait}s",
                    slot.name,
                    st.state.label()
                ));
            }
        }
        let restart = guard.take().is_some() || lock(&slot.st).strikes > 0;
        lock(&slot.st).state = ServerState::Starting;
        match connect::connect(&slot.name, &slot.cfg, &slot.stderr, &slot.sandbox).await {
            Ok(connected) => {
                let version = connected
                    .client
                    .peer_info()
                    .and_then(|i| {
                        let s = i.server_info.as_ref()?;
                        Some(format!("{}@{}", s.name, s.version))
                    })
                    .unwrap_or_default();
                let (tools, skipped) =
                    self.accept_tools(slot, &connected.tools, &connected.task_only, &version);
                let client = Arc::new(connected.client);
                *guard = Some(client.clone());
                // The old server's processes (if any) end here.
                *lock(&slot.process) = connected.process;
                let mut st = lock(&slot.st);
                st.state = ServerState::Ready;
                st.tools = tools;
                st.skipped = skipped;
                st.retry_at = None;
                if restart {
                    st.restarts += 1;
                }
                Ok(client)
            }
            Err(e) => {
                let mut st = lock(&slot.st);
                st.strikes += 1;
                st.retry_at = Some(Instant::now() + backoff(st.strikes + 1));
                st.state = ServerState::Failed(e.clone());
                Err(e)
            }
        }
    }

    /// Ends every server this hub started, with all its child processes
    /// (at the end of a front end's run). Later calls start them again.
    pub(crate) fn shutdown(&self) {
        for slot in self.slots.values() {
            if let Ok(mut c) = slot.client.try_lock() {
                c.take();
            }
            lock(&slot.process).take();
        }
    }

    /// Marks a running server as down; the next call restarts it.
    fn strike(&self, slot: &Slot, why: String) {
        let mut st = lock(&slot.st);
        st.strikes += 1;
        st.retry_at = Some(Instant::now() + backoff(st.strikes));
        st.state = ServerState::Down(why);
    }

    /// Checks names and schemas, registers the good tools, warns about the rest.
    fn accept_tools(
        &self,
        slot: &Slot,
        listed: &[rmcp::model::Tool],
        task_only: &inspect::TaskOnly,
        version: &str,
    ) -> (Vec<ToolInfo>, Vec<String>) {
        let (mut tools, mut skipped) = (Vec::new(), Vec::new());
        for t in listed {
            let raw = serde_json::to_value(t).unwrap_or(Value::Null);
            let name = raw.get("name").and_then(Value::as_str).unwrap_or("");
            if !slot.cfg.allows_tool(name) {
                continue;
            }
            let checked = tool::full_name(&slot.name, name).and_then(|full| {
                if task_only.contains(name) {
                    return Err(
                        "needs MCP tasks (execution.taskSupport = \"required\"), which navi cannot run"
                            .into(),
                    );
                }
                let schema = tool::check_schema(raw.get("inputSchema").unwrap_or(&Value::Null))?;
                if tools.iter().any(|x: &ToolInfo| x.full_name == full) {
                    return Err(format!(
                        "{full} is already taken by another tool of this server"
                    ));
                }
                Ok((full, schema))
            });
            let (full, schema) = match checked {
                Ok(x) => x,
                Err(why) => {
                    skipped.push(format!("{name}: {why}"));
                    continue;
                }
            };
            let hint = raw
                .pointer("/annotations/readOnlyHint")
                .and_then(Value::as_bool)
                == Some(true);
            let desc = raw.get("description").and_then(Value::as_str).unwrap_or("");
            tools.push(ToolInfo {
                server: slot.name.clone(),
                tool: name.to_string(),
                full_name: full,
                description: format!("(MCP server {}) {desc}", slot.name),
                schema,
                read_only: hint && slot.cfg.trust_read_only,
            });
        }
        let mut registered = Vec::new();
        if let Some(reg) = self.registry.get().and_then(Weak::upgrade)
            && let Ok(mut reg) = reg.write()
        {
            for info in tools {
                let t = Arc::new(McpTool {
                    info: info.clone(),
                    hub: self.me.get().cloned().unwrap_or_default(),
                });
                match reg.register_mcp(t) {
                    Ok(()) => registered.push(info),
                    Err(why) => skipped.push(format!("{}: {why}", info.tool)),
                }
            }
        } else {
            registered = tools;
        }
        for s in &skipped {
            let msg = format!("MCP server '{}': tool {s}; skipped", slot.name);
            if s.contains("needs MCP tasks") && !version.is_empty() {
                // The server's own make-up: shown once per server version.
                tracing::warn!("{msg}");
                let key = format!("mcp {} {version}: {s}", slot.name);
                lock(&self.warnings).push((Some(key), msg));
            } else {
                self.warn(msg);
            }
        }
        (registered, skipped)
    }

    /// Calls `tool` on `server`. Every failure is an error result the model
    /// reads; a crash or hang marks the server down for a restart.
    pub(crate) async fn call(
        &self,
        server: &str,
        tool: &str,
        args: Map<String, Value>,
        cancel: &CancellationToken,
        progress: Option<&progress::ProgressSink>,
    ) -> ToolResult {
        let Some(slot) = self.slots.get(server) else {
            return ToolResult::err(format!("no MCP server named '{server}'"));
        };
        let client = tokio::select! {
            c = self.ensure_client(slot) => c,
            _ = cancel.cancelled() => return ToolResult::err("operation cancelled by user"),
        };
        let client = match client {
            Ok(c) => c,
            Err(e) => {
                // Always say which server.
                let e = if e.contains(&format!("'{server}'")) {
                    e
                } else {
                    format!("MCP server '{server}' cannot start: {e}")
                };
                return ToolResult::err(self.with_stderr(slot, e));
            }
        };
        let params = rmcp::model::CallToolRequestParams::new(tool.to_string()).with_arguments(args);
        let request =
            rmcp::model::ClientRequest::CallToolRequest(rmcp::model::CallToolRequest::new(params));
        let handle = match client
            .peer()
            .send_request_with_option(request, rmcp::service::PeerRequestOptions::no_options())
            .await
        {
            Ok(h) => h,
            Err(e) => return self.failed(slot, &client, tool, e).await,
        };
        let (id, peer) = (handle.id.clone(), handle.peer.clone());
        // The server's progress notifications for this call.
        let mut updates = client
            .service()
            .progress
            .subscribe(handle.progress_token.clone())
            .await;
        let started = Instant::now();
        let limit = Duration::from_secs_f64(slot.cfg.tool_timeout_secs);
        let call = tokio::time::timeout(limit, handle.await_response());
        tokio::pin!(call);
        let mut heartbeat = tokio::time::interval_at(
            tokio::time::Instant::now() + progress::HEARTBEAT,
            progress::HEARTBEAT,
        );
        let outcome = loop {
            tokio::select! {
                r = &mut call => break r,
                _ = cancel.cancelled() => {
                    // Tell the server before returning: the process may exit
                    // right after a stop.
                    let note = rmcp::model::CancelledNotificationParam::new(
                        Some(id),
                        Some("cancelled by the user".into()),
                    );
                    let _ = tokio::time::timeout(CANCEL_NOTICE, peer.notify_cancelled(note)).await;
                    return self.cancelled(slot, &client);
                }
                Some(p) = futures_util::StreamExt::next(&mut updates) => {
                    if let Some(sink) = progress {
                        sink.report(started, Some(&p)).await;
                    }
                    heartbeat.reset();
                }
                _ = heartbeat.tick() => {
                    if let Some(sink) = progress {
                        sink.report(started, None).await;
                    }
                }
            }
        };
        // Notifications that arrived with the answer still count.
        if let Some(sink) = progress {
            tokio::task::yield_now().await;
            while let Some(Some(p)) =
                futures_util::FutureExt::now_or_never(futures_util::StreamExt::next(&mut updates))
            {
                sink.report(started, Some(&p)).await;
            }
        }
        drop(updates);
        if cancel.is_cancelled() {
            // The answer (or the transport's end) raced with the stop: the
            // stop wins, and it is not the server's failure.
            return self.cancelled(slot, &client);
        }
        if outcome.is_err() {
            let note =
                rmcp::model::CancelledNotificationParam::new(Some(id), Some("timed out".into()));
            let _ = tokio::time::timeout(CANCEL_NOTICE, peer.notify_cancelled(note)).await;
        }
        match outcome {
            Ok(Ok(res)) => {
                lock(&slot.st).strikes = 0;
                let v = serde_json::to_value(&res).unwrap_or(Value::Null);
                self.note_denial(slot, result::map_result(&v, self.limits))
            }
            Ok(Err(rmcp::ServiceError::McpError(e))) => self.note_denial(
                slot,
                ToolResult::err(format!(
                    "MCP server '{server}' refused {tool}: {} (code {})",
                    e.message, e.code.0
                )),
            ),
            Ok(Err(e)) => self.failed(slot, &client, tool, e).await,
            Err(_) => {
                self.strike(
                    slot,
                    format!(
                        "{tool} did not answer within {}s",
                        slot.cfg.tool_timeout_secs
                    ),
                );
                ToolResult::err(format!(
                    "MCP server '{server}' did not answer {tool} within {}s (mcp_servers.{server}.tool_timeout_secs); the call was cancelled and the server will be restarted on the next call",
                    slot.cfg.tool_timeout_secs
                ))
            }
        }
    }
}
