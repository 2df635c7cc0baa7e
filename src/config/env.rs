//! Environment overrides, under the names an existing Navi `.env` uses.
use super::load::ConfigError;
use super::{ApprovalMode, BackendKind, Config, ThinkSetting, split_list};

/// Which environment variable feeds which config key (for error messages).
pub(crate) const FEEDS: [(&str, &str); 27] = [
    ("NAVI_BACKEND", "llm.backend"),
    ("NAVI_PROVIDER", "llm.provider"),
    ("ANTHROPIC_BASE_URL", "providers.anthropic.base_url"),
    ("OLLAMA_HOST", "llm.ollama_host"),
    ("OLLAMA_DEFAULT_MODEL", "llm.default_model"),
    ("OLLAMA_NUM_CTX", "llm.num_ctx"),
    ("OLLAMA_THINK", "llm.think"),
    ("OPENAI_BASE_URL", "llm.openai_base_url"),
    (
        "LLM_STREAM_FIRST_CHUNK_TIMEOUT",
        "llm.first_chunk_timeout_secs",
    ),
    ("LLM_STREAM_CHUNK_TIMEOUT", "llm.chunk_timeout_secs"),
    ("FS_ALLOWED_PATHS", "security.fs_allowed_paths"),
    (
        "TERMINAL_ALLOWED_COMMANDS",
        "security.terminal_allowed_commands",
    ),
    ("NAVI_APPROVAL", "security.approval"),
    ("DB_PATH", "storage.db_path"),
    ("LOG_LEVEL", "logging.level"),
    ("TOOLS_DIR", "tools.dir"),
    ("CONTEXT_COMPRESSION_ENABLED", "context.compression_enabled"),
    (
        "CONTEXT_COMPRESSION_THRESHOLD",
        "context.compression_threshold",
    ),
    ("CONTEXT_COMPRESSION_TARGET", "context.compression_target"),
    ("CONTEXT_KEEP_RECENT", "context.keep_recent"),
    ("CONTEXT_SUMMARY_TEMPERATURE", "context.summary_temperature"),
    ("SESSION_FILES_MAX_SIZE_MB", "session_files.max_size_mb"),
    ("SESSION_FILES_TTL_HOURS", "session_files.ttl_hours"),
    (
        "TERMINAL_ALLOW_FILE_REDIRECTS",
        "security.terminal_allow_file_redirects",
    ),
    ("NAVI_MEMORY", "memory.enabled"),
    ("NAVI_MEMORY_AUTO_ACCEPT", "memory.auto_accept"),
    ("NAVI_MEMORY_IDLE_MINUTES", "memory.idle_minutes"),
];

/// The config key an environment variable sets, if it is one of ours.
pub(crate) fn key_for(var: &str) -> Option<&'static str> {
    FEEDS.iter().find(|(v, _)| *v == var).map(|(_, k)| *k)
}

/// Rewrites a validation error about the merged config so it names the
/// environment variable that set the offending key (when one is set).
pub(crate) fn name_variable(
    e: ConfigError,
    getenv: &dyn Fn(&str) -> Option<String>,
) -> ConfigError {
    match e {
        ConfigError::Invalid {
            origin,
            key,
            value,
            why,
        } => {
            let set = FEEDS
                .iter()
                .find(|(v, k)| *k == key && getenv(v).is_some_and(|x| !x.trim().is_empty()));
            let origin = match set {
                Some((var, _)) => format!("environment variable {var}"),
                None => origin,
            };
            ConfigError::Invalid {
                origin,
                key,
                value,
                why,
            }
        }
        other => other,
    }
}

fn bad(key: &str, value: &str, why: &str) -> ConfigError {
    ConfigError::Invalid {
        origin: format!("environment variable {key}"),
        key: key_for(key).unwrap_or(key).to_string(),
        value: value.to_string(),
        why: why.to_string(),
    }
}

fn parse_bool(key: &str, v: &str) -> Result<bool, ConfigError> {
    match v.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Ok(true),
        "0" | "false" | "no" | "off" => Ok(false),
        _ => Err(bad(key, v, "expected true or false")),
    }
}

fn parse_num<T: std::str::FromStr>(key: &str, v: &str, what: &str) -> Result<T, ConfigError> {
    v.trim().parse().map_err(|_| bad(key, v, what))
}

/// Applies env overrides; returns the model named by `OLLAMA_DEFAULT_MODEL`, if any.
pub(crate) fn apply(
    c: &mut Config,
    getenv: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<String>, ConfigError> {
    let get = |k: &str| getenv(k).filter(|v| !v.trim().is_empty());
    if let Some(v) = get("NAVI_BACKEND") {
        c.llm.backend = BackendKind::parse(&v).ok_or_else(|| {
            bad(
                "NAVI_BACKEND",
                &v,
                &format!("use {}", BackendKind::choices()),
            )
        })?;
        // A backend chosen here wins over a provider the file chose.
        c.llm.provider.clear();
    }
    if let Some(v) = get("NAVI_PROVIDER") {
        c.llm.provider = v.trim().to_string();
    }
    if let Some(v) = get("ANTHROPIC_BASE_URL") {
        c.providers
            .entry("anthropic".to_string())
            .or_default()
            .base_url = Some(v.trim().to_string());
    }
    if let Some(v) = get("OLLAMA_HOST") {
        // Read like the ollama CLI reads it (bare host, host:port, 0.0.0.0…).
        c.llm.ollama_host =
            super::host::ollama_host_url(&v).map_err(|why| bad("OLLAMA_HOST", &v, &why))?;
    }
    let mut model = None;
    if let Some(v) = get("OLLAMA_DEFAULT_MODEL") {
        c.llm.default_model = v.clone();
        model = Some(v);
    }
    if let Some(v) = get("OLLAMA_NUM_CTX") {
        c.llm.num_ctx = parse_num("OLLAMA_NUM_CTX", &v, "expected a whole number of tokens")?;
    }
    if let Some(v) = get("OLLAMA_THINK") {
        c.llm.think = ThinkSetting::parse(&v)
            .ok_or_else(|| bad("OLLAMA_THINK", &v, "use true, false, low, medium or high"))?;
    }
    if let Some(v) = get("OPENAI_BASE_URL") {
        c.llm.openai_base_url = v;
    }
    if let Some(v) = get("OPENAI_API_KEY") {
        c.llm.openai_api_key = v;
    }
    if let Some(v) = get("LLM_STREAM_FIRST_CHUNK_TIMEOUT") {
        c.llm.first_chunk_timeout_secs =
            parse_num("LLM_STREAM_FIRST_CHUNK_TIMEOUT", &v, "expected seconds")?;
    }
    if let Some(v) = get("LLM_STREAM_CHUNK_TIMEOUT") {
        c.llm.chunk_timeout_secs = parse_num("LLM_STREAM_CHUNK_TIMEOUT", &v, "expected seconds")?;
    }
    if let Some(v) = get("FS_ALLOWED_PATHS") {
        c.security.fs_allowed_paths = split_list(&v);
    }
    if let Some(v) = get("TERMINAL_ALLOWED_COMMANDS") {
        c.security.terminal_allowed_commands = split_list(&v);
    }
    if let Some(v) = get("TERMINAL_ALLOW_FILE_REDIRECTS") {
        c.security.terminal_allow_file_redirects = parse_bool("TERMINAL_ALLOW_FILE_REDIRECTS", &v)?;
    }
    if let Some(v) = get("SSH_HOSTS_FILE") {
        c.security.ssh_hosts_file = v;
    }
    if let Some(v) = get("NAVI_APPROVAL") {
        c.security.approval = match v.trim() {
            "ask" => ApprovalMode::Ask,
            "auto" => ApprovalMode::Auto,
            "deny" => ApprovalMode::Deny,
            _ => return Err(bad("NAVI_APPROVAL", &v, "use ask, auto or deny")),
        };
    }
    if let Some(v) = get("DB_PATH") {
        c.storage.db_path = v;
    }
    if let Some(v) = get("LOG_LEVEL") {
        let v = v.trim().to_ascii_lowercase();
        if let Err(why) = crate::logging::check_level(&v) {
            return Err(bad("LOG_LEVEL", &v, &why));
        }
        c.logging.level = v;
    }
    if let Some(v) = get("TOOLS_DIR") {
        c.tools.dir = v;
    }
    if let Some(v) = get("CONTEXT_COMPRESSION_ENABLED") {
        c.context.compression_enabled = parse_bool("CONTEXT_COMPRESSION_ENABLED", &v)?;
    }
    if let Some(v) = get("CONTEXT_COMPRESSION_THRESHOLD") {
        c.context.compression_threshold = parse_num(
            "CONTEXT_COMPRESSION_THRESHOLD",
            &v,
            "expected a fraction like 0.8",
        )?;
    }
    if let Some(v) = get("CONTEXT_COMPRESSION_TARGET") {
        c.context.compression_target = parse_num(
            "CONTEXT_COMPRESSION_TARGET",
            &v,
            "expected a fraction like 0.6",
        )?;
    }
    if let Some(v) = get("CONTEXT_KEEP_RECENT") {
        c.context.keep_recent = parse_num(
            "CONTEXT_KEEP_RECENT",
            &v,
            "expected a whole number of turns",
        )?;
    }
    if let Some(v) = get("CONTEXT_SUMMARY_TEMPERATURE") {
        c.context.summary_temperature = parse_num(
            "CONTEXT_SUMMARY_TEMPERATURE",
            &v,
            "expected a number like 0.3",
        )?;
    }
    if let Some(v) = get("NAVI_MEMORY") {
        c.memory.enabled = parse_bool("NAVI_MEMORY", &v)?;
    }
    if let Some(v) = get("NAVI_MEMORY_AUTO_ACCEPT") {
        c.memory.auto_accept = parse_bool("NAVI_MEMORY_AUTO_ACCEPT", &v)?;
    }
    if let Some(v) = get("NAVI_MEMORY_IDLE_MINUTES") {
        c.memory.idle_minutes = parse_num(
            "NAVI_MEMORY_IDLE_MINUTES",
            &v,
            "expected a whole number of minutes",
        )?;
    }
    if let Some(v) = get("NAVI_PERSONA") {
        c.persona.text = v;
    }
    if let Some(v) = get("NAVI_PERSONA_FILE") {
        c.persona.file = v;
    }
    if let Some(v) = get("SESSION_FILES_DIR") {
        c.session_files.dir = v;
    }
    if let Some(v) = get("SESSION_FILES_MAX_SIZE_MB") {
        c.session_files.max_size_mb =
            parse_num("SESSION_FILES_MAX_SIZE_MB", &v, "expected megabytes")?;
    }
    if let Some(v) = get("SESSION_FILES_TTL_HOURS") {
        c.session_files.ttl_hours = parse_num("SESSION_FILES_TTL_HOURS", &v, "expected hours")?;
    }
    Ok(model)
}
