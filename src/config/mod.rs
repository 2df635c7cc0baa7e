//! Configuration: TOML file + environment + command-line flags.
//!
//! Precedence: flag > env > file > built-in default. Loading is all-or-nothing:
//! a malformed file, an unknown key or a wrong type is a [`ConfigError`] naming
//! the file, line and key, and nothing of the file is used.

pub(crate) mod checkpoints;
pub(crate) mod env;
pub(crate) mod host;
pub mod keys;
mod load;
pub(crate) mod mcp;
pub mod providers;
pub mod sandbox;
pub(crate) mod suggest;

pub use load::{ConfigError, LoadOptions, Overrides, Paths, load, parse_str, validate};
pub use mcp::McpServerConfig;
pub use providers::{Credentials, KeySource, Provider, ProviderConfig, Secret};
pub use suggest::suggest_name;

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Which wire protocol to speak. Spellings (and `--backend`'s accepted
/// values) come from the `clap::ValueEnum` derive; what each backend does
/// differently lives in its file under `src/llm/` (`llm::descriptor`).
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default, clap::ValueEnum,
)]
#[serde(rename_all = "lowercase")]
pub enum BackendKind {
    #[default]
    Ollama,
    /// OpenAI-compatible chat completions.
    #[value(alias = "openai-compatible", alias = "openai_compatible")]
    #[serde(alias = "openai-compatible", alias = "openai_compatible")]
    Openai,
    /// Anthropic Messages (`/v1/messages`).
    #[value(alias = "messages")]
    #[serde(alias = "messages")]
    Anthropic,
    /// OpenAI Responses (`/v1/responses`).
    #[value(alias = "openai-responses", alias = "openai_responses")]
    #[serde(alias = "openai-responses", alias = "openai_responses")]
    Responses,
}

impl BackendKind {
    pub fn as_str(self) -> &'static str {
        match self {
            BackendKind::Ollama => "ollama",
            BackendKind::Openai => "openai",
            BackendKind::Anthropic => "anthropic",
            BackendKind::Responses => "responses",
        }
    }

    /// Any accepted spelling, case and surrounding blanks ignored.
    pub fn parse(s: &str) -> Option<Self> {
        <Self as clap::ValueEnum>::from_str(s.trim(), true).ok()
    }

    /// The accepted names for messages: `"ollama" or "openai"`.
    pub fn choices() -> String {
        let names: Vec<String> = <Self as clap::ValueEnum>::value_variants()
            .iter()
            .map(|k| format!("{:?}", k.as_str()))
            .collect();
        match names.split_last() {
            Some((last, [])) => last.clone(),
            Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
            None => String::new(),
        }
    }
}

/// `think` as Ollama takes it: a bool or a level.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ThinkSetting {
    Bool(bool),
    Level(String),
}

impl Default for ThinkSetting {
    fn default() -> Self {
        ThinkSetting::Bool(true)
    }
}

impl ThinkSetting {
    pub(crate) fn parse(s: &str) -> Option<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "true" | "1" | "yes" | "on" => Some(ThinkSetting::Bool(true)),
            "false" | "0" | "no" | "off" => Some(ThinkSetting::Bool(false)),
            l @ ("low" | "medium" | "high") => Some(ThinkSetting::Level(l.to_string())),
            _ => None,
        }
    }

    pub(crate) fn is_valid(&self) -> bool {
        match self {
            ThinkSetting::Bool(_) => true,
            ThinkSetting::Level(l) => matches!(l.as_str(), "low" | "medium" | "high"),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LlmConfig {
    pub backend: BackendKind,
    /// The provider bare model names go to (`--provider`, `NAVI_PROVIDER`);
    /// empty: the one `backend` stands for (see `providers.rs`).
    pub provider: String,
    pub ollama_host: String,
    pub openai_base_url: String,
    pub(crate) openai_api_key: String,
    /// Model used when a profile names none that the server has.
    pub(crate) default_model: String,
    pub num_ctx: u32,
    pub think: ThinkSetting,
    pub(crate) keep_alive: String,
    pub(crate) first_chunk_timeout_secs: f64,
    pub(crate) chunk_timeout_secs: f64,
    pub(crate) connect_retries: u32,
    /// Cap on tokens generated per call (`max_tokens` / `num_predict`); 0 = no cap.
    pub(crate) max_tokens: u32,
    /// The small-model path (lean preset, constrained tool calls):
    /// `auto` (below ~1B parameters), `on` or `off`.
    pub small_model: SmallModel,
}

/// `[llm].small_model`: `auto` (default: chosen from the model's size),
/// `on` (always the lean preset and constrained calls), `off` (never).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum SmallModel {
    /// The default: since the lean preset routes requests itself, SmolLM2
    /// answers plain questions plainly and runs the right command for tool
    /// tasks (docs/small-models.md).
    #[default]
    Auto,
    On,
    Off,
}

impl Default for LlmConfig {
    fn default() -> Self {
        LlmConfig {
            backend: BackendKind::Ollama,
            provider: String::new(),
            ollama_host: "http://localhost:11434".into(),
            openai_base_url: "http://localhost:8080/v1".into(),
            openai_api_key: String::new(),
            default_model: "gemma4:e2b-it-q8_0".into(),
            num_ctx: 65536,
            think: ThinkSetting::Bool(true),
            keep_alive: "5m".into(),
            first_chunk_timeout_secs: 120.0,
            chunk_timeout_secs: 60.0,
            connect_retries: 2,
            max_tokens: 4096,
            small_model: SmallModel::Auto,
        }
    }
}

/// `ask` (default) | `auto` | `deny`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum ApprovalMode {
    #[default]
    Ask,
    Auto,
    Deny,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SecurityConfig {
    /// Roots the filesystem tool may touch; `["*"]` means anywhere.
    pub fs_allowed_paths: Vec<String>,
    /// Executables the terminal tool may run; `["*"]` means all.
    pub terminal_allowed_commands: Vec<String>,
    pub ssh_hosts_file: String,
    /// OpenSSH `StrictHostKeyChecking`: `yes` or `accept-new`.
    pub ssh_host_key_checking: String,
    pub approval: ApprovalMode,
    /// Per-tool overrides of `approval`, e.g. `{ terminal = "auto" }`.
    pub approval_tools: BTreeMap<String, ApprovalMode>,
    /// Secret-looking environment variables tool processes may still see
    /// (exact names or `PREFIX_*`); all others are scrubbed.
    pub env_passthrough: Vec<String>,
    /// Hosts, IPs or CIDRs the web tools may reach without approval even
    /// though they are loopback, link-local or private.
    pub net_allowed_hosts: Vec<String>,
    /// Read files with more than one hard link inside `fs_allowed_paths`.
    pub fs_allow_hard_links: bool,
    /// With a terminal allow-list: also accept redirections from and to
    /// files (`< f`, `> f`, `$(< f)`, `exec 3> f`).
    pub terminal_allow_file_redirects: bool,
}

impl Default for SecurityConfig {
    fn default() -> Self {
        SecurityConfig {
            fs_allowed_paths: vec!["*".into()],
            terminal_allowed_commands: vec!["*".into()],
            ssh_hosts_file: "ssh_hosts.json".into(),
            ssh_host_key_checking: "yes".into(),
            approval: ApprovalMode::Ask,
            approval_tools: BTreeMap::new(),
            env_passthrough: Vec::new(),
            net_allowed_hosts: Vec::new(),
            fs_allow_hard_links: false,
            terminal_allow_file_redirects: false,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ContextConfig {
    pub(crate) compression_enabled: bool,
    pub compression_threshold: f64,
    pub(crate) compression_target: f64,
    pub keep_recent: u32,
    pub(crate) summary_temperature: f64,
    pub(crate) warn_threshold: f64,
    pub(crate) hard_limit: f64,
    /// Share of the window one tool result, tool argument or message may
    /// take in the context; bigger ones are stored and previewed.
    pub(crate) item_max_share: f64,
}

impl Default for ContextConfig {
    fn default() -> Self {
        ContextConfig {
            compression_enabled: true,
            compression_threshold: 0.80,
            compression_target: 0.60,
            keep_recent: 10,
            summary_temperature: 0.3,
            warn_threshold: 0.80,
            hard_limit: 0.95,
            item_max_share: 0.25,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub(crate) struct SessionFilesConfig {
    pub(crate) dir: String,
    pub(crate) max_size_mb: u64,
    pub(crate) ttl_hours: u64,
    /// Text attachments and piped stdin up to this size go into the message;
    /// larger ones are stored as session files with a preview.
    pub(crate) inline_max_kb: u64,
}

impl Default for SessionFilesConfig {
    fn default() -> Self {
        SessionFilesConfig {
            dir: "session_files".into(),
            max_size_mb: 200,
            ttl_hours: 24,
            inline_max_kb: 64,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
pub(crate) struct PersonaConfig {
    /// Inline persona text; wins over `file` when non-empty.
    pub(crate) text: String,
    /// Path to a persona file; empty = the built-in `persona.txt`.
    pub(crate) file: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub(crate) struct UiConfig {
    pub(crate) theme: String,
    pub(crate) show_thinking: bool,
    pub(crate) max_fps: u32,
    /// How a long turn's end is announced: bell, osc9, osc777 or off.
    pub(crate) notify: NotifyKind,
    /// A turn at least this long is announced.
    pub(crate) notify_after_secs: u64,
}

impl Default for UiConfig {
    fn default() -> Self {
        UiConfig {
            theme: "auto".into(),
            show_thinking: true,
            max_fps: 60,
            notify: Default::default(),
            notify_after_secs: 30,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ToolsConfig {
    /// User tools directory (manifest + script per tool).
    pub(crate) dir: String,
    pub terminal_timeout_secs: u64,
    pub code_exec_timeout_secs: u64,
    pub python: String,
    pub output_limit_bytes: usize,
    pub http_timeout_secs: u64,
    pub web_search_engine: String,
    pub web_search_url: String,
    pub ssh_timeout_secs: u64,
    /// `code_exec` address-space limit (RLIMIT_AS) in MiB; 0 = no limit.
    pub code_exec_memory_mb: u64,
    /// `code_exec` largest file a script may write (RLIMIT_FSIZE) in MiB; 0 = no limit.
    pub code_exec_file_size_mb: u64,
    /// Most bytes `http_request` / `web_view` / `web_search` download per response.
    pub fetch_max_bytes: usize,
    /// Largest image `image_view` accepts, in bytes.
    pub image_max_bytes: usize,
    /// Seconds one filesystem operation may take before it is abandoned.
    pub(crate) fs_timeout_secs: u64,
    /// Longest line kept in tool output; longer lines are cut with a note.
    pub max_line_bytes: usize,
    /// Send only a profile's core tools with full schemas and offer the
    /// rest by name through `load_tools` (their schemas join the session's
    /// requests once loaded). Off: every enabled tool on every request.
    pub on_demand: bool,
}

impl Default for ToolsConfig {
    fn default() -> Self {
        ToolsConfig {
            dir: "tools".into(),
            terminal_timeout_secs: 120,
            code_exec_timeout_secs: 60,
            python: "python3".into(),
            output_limit_bytes: 30_000,
            http_timeout_secs: 30,
            web_search_engine: "duckduckgo".into(),
            web_search_url: "https://html.duckduckgo.com/html/".into(),
            ssh_timeout_secs: 120,
            code_exec_memory_mb: 1024,
            code_exec_file_size_mb: 64,
            fetch_max_bytes: 5_000_000,
            image_max_bytes: 10_000_000,
            fs_timeout_secs: 30,
            max_line_bytes: 8_000,
            on_demand: true,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
pub(crate) struct StorageConfig {
    /// Data directory; empty = `$NAVI_DATA_DIR` or the platform data dir.
    pub(crate) data_dir: String,
    /// SQLite file; empty = `<data_dir>/navi.db`.
    pub(crate) db_path: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LoggingConfig {
    pub level: String,
}

impl Default for LoggingConfig {
    fn default() -> Self {
        LoggingConfig {
            level: "info".into(),
        }
    }
}

/// Long-term memory (`docs/memory.md`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub(crate) struct MemoryConfig {
    /// Off: no extraction, no summary in requests, no memory tools.
    pub(crate) enabled: bool,
    /// New facts are active at once instead of waiting in the inbox.
    pub(crate) auto_accept: bool,
    /// A session idle this long (minutes) is ready for extraction.
    pub(crate) idle_minutes: u64,
    /// At most this many of a session's latest messages are read per extraction.
    pub(crate) max_messages: usize,
}

impl Default for MemoryConfig {
    fn default() -> Self {
        MemoryConfig {
            enabled: true,
            auto_accept: false,
            idle_minutes: 30,
            max_messages: 200,
        }
    }
}

/// What the full-screen UI leaves in the terminal's scrollback on quit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Scrollback {
    /// The last answer.
    #[default]
    Last,
    /// The whole transcript of the open session.
    Full,
    /// Nothing but the resume hint.
    None,
}

/// `[ui] notify`: how a long turn's end is announced (see `ui/notify.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub(crate) enum NotifyKind {
    /// BEL: most terminals flash or mark the tab; tmux marks the window.
    #[default]
    Bell,
    /// `ESC ] 9 ; text BEL` (iTerm2, Windows Terminal, WezTerm, kitty…).
    Osc9,
    /// `ESC ] 777 ; notify ; title ; text BEL` (rxvt-unicode, foot, Ghostty…).
    Osc777,
    Off,
}

/// `[tui]`: the full-screen UI only.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
pub(crate) struct TuiConfig {
    pub(crate) scrollback: Scrollback,
}

/// The whole configuration, one section per concern.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    pub llm: LlmConfig,
    pub security: SecurityConfig,
    pub context: ContextConfig,
    pub(crate) session_files: SessionFilesConfig,
    pub(crate) persona: PersonaConfig,
    pub(crate) ui: UiConfig,
    pub tools: ToolsConfig,
    pub(crate) storage: StorageConfig,
    pub logging: LoggingConfig,
    pub(crate) memory: MemoryConfig,
    pub(crate) planning: PlanningConfig,
    pub(crate) tui: TuiConfig,
    /// External MCP servers, by name (`[mcp_servers.<name>]`).
    pub(crate) mcp_servers: BTreeMap<String, McpServerConfig>,
    /// `[sandbox]`: the kernel sandbox around tool processes.
    pub sandbox: sandbox::SandboxConfig,
    /// `[providers.<name>]`: servers a model can come from (see
    /// `providers.rs`).
    pub providers: BTreeMap<String, ProviderConfig>,
    /// API keys found at load time (environment, key file, `[llm]`); never
    /// serialised or printed.
    #[serde(skip)]
    pub credentials: Credentials,
    /// `[checkpoints]`: recording what turns change (docs/checkpoints.md).
    pub(crate) checkpoints: checkpoints::CheckpointConfig,
    /// `[project]`: AGENTS.md instructions (docs/config.md).
    pub(crate) project: crate::project::ProjectConfig,
}

/// When the planner is worth a call.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub(crate) struct PlanningConfig {
    /// A message of at most this many words with no multi-step cue (a
    /// greeting, a short question or imperative) skips the planner; 0 = never skip.
    pub(crate) skip_question_words: u32,
    /// false: never plan (as `--no-plan` on every run), even for
    /// `planning_mandatory` profiles.
    pub(crate) enabled: bool,
    /// A model window below this many tokens: no planning unless the
    /// profile has `planning_mandatory`; 0 = no limit.
    pub(crate) min_window: u64,
    /// A model whose name states fewer parameters than this many billion
    /// (`smollm2:135m`, `qwen2.5:1.5b`): no planning unless
    /// `planning_mandatory`; 0 = no limit.
    pub(crate) min_model_billions: u32,
}

impl Default for PlanningConfig {
    fn default() -> Self {
        PlanningConfig {
            skip_question_words: 12,
            enabled: true,
            min_window: 8192,
            min_model_billions: 4,
        }
    }
}

/// Splits a comma-separated env value into trimmed, non-empty items.
pub(crate) fn split_list(s: &str) -> Vec<String> {
    s.split(',')
        .map(str::trim)
        .filter(|x| !x.is_empty())
        .map(String::from)
        .collect()
}
