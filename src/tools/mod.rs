//! Tools: the agent's hands.
//!
//! Invariants: a tool never panics and never aborts the loop — every failure is
//! a `ToolResult { success: false, .. }` the model reads. Output is capped with
//! a visible truncation marker. Risky calls go through the [`ApprovalGate`]
//! before `execute` runs (the registry does that, not each tool).

pub mod approval;
pub(crate) mod arg_check;
pub mod builtin;
pub(crate) mod child_env;
pub(crate) mod child_setup;
pub mod client;
pub(crate) mod client_exec;
pub(crate) mod client_fs;
pub(crate) mod describe;
pub(crate) mod exec_report;
pub(crate) mod fetch;
pub(crate) mod fs_guard;
pub(crate) mod fs_ops;
pub(crate) mod html_util;
pub(crate) use crate::util::image_probe;
pub(crate) mod net_guard;
pub(crate) mod paths;
pub mod process;
pub(crate) mod registry;
pub(crate) mod sandbox_denial;
pub mod sandbox_exec;
pub(crate) mod sandbox_policy;
pub mod session;
pub(crate) mod shell_builtins;
pub mod shell_check;
pub(crate) mod shell_options;
pub(crate) mod shell_param;
pub(crate) mod shell_parse;
pub(crate) mod shell_wrappers;
pub mod ssh_hosts;
pub(crate) mod typed;
pub mod user;
pub(crate) mod watchdog;
pub(crate) mod write_display;

pub use approval::ApprovalGate;
pub use registry::ToolRegistry;
pub use session::SessionTools;
pub(crate) use typed::{ToolError, ToolOutput, TypedTool};

use crate::config::{Config, Paths};
use crate::llm::ToolSchema;
use crate::protocol::{AgentOrigin, EventSink, ToolDisplay};
use serde_json::{Map, Value};
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use tokio_util::sync::CancellationToken;

/// What a tool returns.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ToolResult {
    pub success: bool,
    pub output: String,
    pub error: Option<String>,
    /// Internal hints (e.g. `source`, `bytes` of an image).
    pub metadata: Map<String, Value>,
    /// Typed data for front ends to draw the result (never sent to the model).
    pub display: Option<ToolDisplay>,
    /// An image the model is to look at on its next step (`image_view`,
    /// an MCP tool's image block).
    pub image: Option<crate::llm::ImageData>,
}

impl ToolResult {
    pub fn ok(output: impl Into<String>) -> Self {
        ToolResult {
            success: true,
            output: output.into(),
            ..Default::default()
        }
    }

    pub fn err(error: impl Into<String>) -> Self {
        ToolResult {
            success: false,
            output: String::new(),
            error: Some(error.into()),
            metadata: Map::new(),
            display: None,
            image: None,
        }
    }

    /// Gives the model `image` to look at after this result.
    pub fn with_image(mut self, mime: impl Into<String>, base64: impl Into<String>) -> Self {
        self.image = Some(crate::llm::ImageData {
            mime: mime.into(),
            base64: base64.into(),
        });
        self
    }

    pub fn with_meta(mut self, key: &str, value: Value) -> Self {
        self.metadata.insert(key.to_string(), value);
        self
    }

    pub fn with_display(mut self, display: ToolDisplay) -> Self {
        self.display = Some(display);
        self
    }

    /// The text the model sees as the tool result.
    pub(crate) fn to_model_content(&self) -> String {
        match (&self.error, self.output.is_empty()) {
            (Some(e), true) => format!("Error: {e}"),
            (Some(e), false) => format!("{}\nError: {e}", self.output),
            (None, _) => self.output.clone(),
        }
    }
}

/// Cuts `s` to at most `limit` bytes (on a char boundary) with a marker that
/// says how much was dropped.
pub(crate) fn truncate_output(s: &str, limit: usize) -> String {
    if s.len() <= limit {
        return s.to_string();
    }
    let mut cut = limit;
    while !s.is_char_boundary(cut) {
        cut -= 1;
    }
    format!(
        "{}\n[... output truncated: {} of {} bytes shown ...]",
        &s[..cut],
        cut,
        s.len()
    )
}

/// Cuts every line longer than `max` bytes (on a char boundary) and puts a
/// note on the next line saying how much was dropped. Lines within the cap,
/// and the notes themselves, are left alone, so applying it twice is harmless.
pub(crate) fn cap_long_lines(s: &str, max: usize) -> std::borrow::Cow<'_, str> {
    let max = max.max(80);
    if s.split('\n').all(|l| l.len() <= max) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len().min(1 << 20));
    for (i, line) in s.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        if line.len() <= max {
            out.push_str(line);
            continue;
        }
        let mut cut = max;
        while !line.is_char_boundary(cut) {
            cut -= 1;
        }
        out.push_str(&line[..cut]);
        out.push_str(&format!(
            "\n[... line cut: {} more bytes not shown ([tools].max_line_bytes) ...]",
            line.len() - cut
        ));
    }
    std::borrow::Cow::Owned(out)
}

/// Resources shared by all tools of every session, built once by the
/// composition root. What belongs to one session is in [`SessionTools`].
pub struct ToolEnv {
    pub(crate) config: Arc<Config>,
    pub(crate) paths: Paths,
    http: OnceLock<reqwest::Client>,
    /// The client of the web tools that may reach only public addresses
    /// (and `[security].net_allowed_hosts`).
    guarded_http: OnceLock<Result<reqwest::Client, String>>,
}

impl ToolEnv {
    pub fn new(config: Arc<Config>, paths: Paths) -> Self {
        ToolEnv {
            config,
            paths,
            http: OnceLock::new(),
            guarded_http: OnceLock::new(),
        }
    }

    /// One shared HTTP client for the web tools, built on first use.
    pub(crate) fn http(&self) -> &reqwest::Client {
        self.http.get_or_init(|| {
            reqwest::Client::builder()
                .user_agent(concat!("navi/", env!("CARGO_PKG_VERSION")))
                .connect_timeout(std::time::Duration::from_secs(10))
                .build()
                .unwrap_or_default()
        })
    }

    /// For `http_request`/`web_view`/`image_view`: when `raw_url` leads to a
    /// non-public address (not allowed by config), records what it resolved
    /// to for this call and returns the reason the user is asked.
    pub(crate) async fn net_approval(&self, raw_url: &str, ctx: &ToolContext) -> Option<String> {
        ctx.session.take_vetted(&ctx.call_id);
        let url = fetch::parse_url(raw_url).ok()?;
        let policy = net_guard::NetPolicy::from_config(&self.config.security.net_allowed_hosts);
        // A host that does not resolve fails in execute with a clear message.
        let vetted = net_guard::vet(&url, &policy).await.ok()?;
        if vetted.blocked.is_empty() {
            return None;
        }
        let reason = vetted.reason();
        ctx.session.keep_vetted(&ctx.call_id, vetted);
        Some(reason)
    }

    /// The HTTP client for one web-tool call to `url`. Public hosts (and
    /// allowed ones) use the shared guarded client; a non-public host only
    /// when this call was approved, pinned to the addresses approved.
    pub(crate) async fn web_client(
        &self,
        url: &reqwest::Url,
        ctx: &ToolContext,
    ) -> Result<reqwest::Client, String> {
        let policy = net_guard::NetPolicy::from_config(&self.config.security.net_allowed_hosts);
        let vetted = net_guard::vet(url, &policy).await?;
        let approved = ctx
            .session
            .take_vetted(&ctx.call_id)
            .filter(|a| a.host == vetted.host);
        if let Some(approved) = approved {
            return net_guard::client(&policy, Some(&approved));
        }
        if let Some((ip, why)) = vetted.blocked.first() {
            return Err(net_guard::refusal(&vetted.host, *ip, why));
        }
        self.guarded_http
            .get_or_init(|| net_guard::client(&policy, None))
            .clone()
    }

    /// A per-session scratch directory under the data dir (created on demand).
    pub(crate) fn session_dir(&self, session_id: &str, kind: &str) -> std::io::Result<PathBuf> {
        let safe: String = session_id
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let dir = self.paths.data_dir.join("sessions").join(safe).join(kind);
        crate::private_fs::create_dir_all(&dir)?;
        Ok(dir)
    }
}

/// Everything a tool call may use, passed explicitly.
#[derive(Clone)]
pub struct ToolContext {
    /// The conversation making the call: the session, or a subagent's id.
    pub session_id: String,
    /// Set when this call runs inside a subagent of a persistent session.
    pub parent_session_id: Option<String>,
    pub call_id: String,
    pub env: Arc<ToolEnv>,
    pub cancel: CancellationToken,
    pub events: EventSink,
    /// Set when the calling agent is a subagent.
    pub origin: Option<AgentOrigin>,
    /// The tools the calling agent has (for `list_tools` / `tool_manual`).
    pub tool_list: Arc<Vec<ToolSchema>>,
    /// The profile's `step_validation_enabled`: `todo` refuses `done` without evidence.
    pub step_validation: bool,
    /// What the session (for a subagent: its parent session) keeps for its
    /// tools: work directory, todo list, scratchpads, approvals.
    pub session: Arc<SessionTools>,
    /// The agent's own session object, for the tools the agent itself
    /// provides (`spawn_agent`); `None` outside a turn.
    pub owner: Option<Arc<dyn std::any::Any + Send + Sync>>,
    /// What the call is about, as `tool_started` announced it; the approval
    /// request carries the same.
    pub call_info: Option<Arc<crate::protocol::CallInfo>>,
}

impl ToolContext {
    /// Session whose per-session state (todo, scratchpad, dirs) the call uses.
    pub(crate) fn state_session(&self) -> &str {
        self.session.id()
    }

    /// The directory the call works in.
    pub(crate) fn work_dir(&self) -> &std::path::Path {
        self.session.work_dir()
    }

    /// The editor's file system and terminals, when the front end offers
    /// them (ACP); `None`: the disk and local processes.
    pub(crate) fn client(&self) -> Option<client::Client> {
        self.session.client()
    }
}

/// The object-safe interface the registry holds (`Arc<dyn Tool>`). Built-ins
/// get it from [`TypedTool`]; user and MCP tools implement it directly.
#[async_trait::async_trait]
pub trait Tool: Send + Sync {
    fn name(&self) -> &str;
    fn description(&self) -> &str;
    /// JSON schema of the arguments object.
    fn parameters(&self) -> Value;
    /// `Some(what will happen, in full)` when this call needs approval.
    fn approval_summary(&self, _args: &Value) -> Option<String> {
        None
    }
    /// What the registry asks the user about before `execute`; like
    /// [`Tool::approval_summary`] but may look things up first (the web tools
    /// resolve the host to see whether it is public).
    async fn approval_request(&self, args: &Value, _ctx: &ToolContext) -> Option<String> {
        self.approval_summary(args)
    }
    /// What this call is about, for front ends: kind, title, absolute
    /// paths, the intended edit (without the file's old text: the registry
    /// reads it, see [`describe`]). No I/O. Tools that say nothing more are
    /// `other`, titled by their name.
    fn describe(&self, _args: &Value, _base: &std::path::Path) -> crate::protocol::CallInfo {
        crate::protocol::CallInfo::other(self.name())
    }
    async fn execute(&self, args: &Value, ctx: &ToolContext) -> ToolResult;

    fn schema(&self) -> ToolSchema {
        ToolSchema {
            name: self.name().to_string(),
            description: self.description().to_string(),
            parameters: self.parameters(),
        }
    }
}
