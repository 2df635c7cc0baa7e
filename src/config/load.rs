//! Finding, parsing and validating the configuration.
use super::{BackendKind, Config, env};
use std::path::{Path, PathBuf};

/// A configuration problem. Every variant names where it came from and what to do.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read config file {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("invalid config file {path}: {message}")]
    Parse { path: PathBuf, message: String },
    #[error("invalid value for {key} in {origin}: {value:?}: {why}")]
    Invalid {
        origin: String,
        key: String,
        value: String,
        why: String,
    },
    #[error(transparent)]
    Keys(#[from] super::keys::KeyFileError),
}

/// What the command line says about configuration.
#[derive(Clone, Debug, Default)]
pub struct LoadOptions {
    pub config_file: Option<PathBuf>,
    pub backend: Option<BackendKind>,
    /// `--provider NAME`.
    pub provider: Option<String>,
    pub model: Option<String>,
    pub log_level: Option<String>,
}

/// Where things live, resolved once.
#[derive(Clone, Debug)]
pub struct Paths {
    /// The config file that was read, if any.
    pub config_file: Option<PathBuf>,
    /// The user's config dir (profiles/, themes/, manuals/ overrides live here).
    pub config_dir: PathBuf,
    pub data_dir: PathBuf,
    pub db_path: PathBuf,
    pub log_dir: PathBuf,
}

/// A model given with `--model` (or `OLLAMA_DEFAULT_MODEL`) for this invocation.
#[derive(Clone, Debug, Default)]
pub struct Overrides {
    pub model: Option<String>,
}

fn project_dirs() -> Option<directories::ProjectDirs> {
    directories::ProjectDirs::from("", "", "navi")
}

fn default_config_dir() -> PathBuf {
    project_dirs()
        .map(|d| d.config_dir().to_path_buf())
        .unwrap_or_else(|| PathBuf::from(".navi"))
}

fn default_data_dir() -> PathBuf {
    project_dirs()
        .map(|d| d.data_dir().to_path_buf())
        .unwrap_or_else(|| PathBuf::from(".navi-data"))
}

/// Loads the configuration: `--config FILE`, `$NAVI_CONFIG`, the platform config
/// file, or defaults; then env overrides, then flags.
pub fn load(
    opts: &LoadOptions,
    getenv: &dyn Fn(&str) -> Option<String>,
) -> Result<(Config, Paths, Overrides), ConfigError> {
    let nonempty = |k: &str| getenv(k).filter(|v| !v.trim().is_empty());
    let explicit = opts
        .config_file
        .clone()
        .or_else(|| nonempty("NAVI_CONFIG").map(PathBuf::from));
    let config_dir = nonempty("NAVI_CONFIG_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(default_config_dir);
    let (mut config, config_file) = match explicit {
        // An explicitly named file must exist.
        Some(path) => (parse_file(&path)?, Some(path)),
        None => {
            let path = config_dir.join("config.toml");
            if path.is_file() {
                (parse_file(&path)?, Some(path))
            } else {
                (Config::default(), None)
            }
        }
    };
    let origin = config_file
        .as_ref()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| "defaults".into());
    validate(&config, &origin)?;
    let chosen_in_file = config_file.as_deref().is_some_and(file_chooses_backend);
    let model = env::apply(&mut config, getenv)?;
    if !chosen_in_file && opts.backend.is_none() && opts.provider.is_none() {
        detect_backend(&mut config, getenv);
    }
    // A value that only fails once combined: name the variable the user set.
    validate(&config, "the environment").map_err(|e| env::name_variable(e, getenv))?;
    if let Some(b) = opts.backend {
        config.llm.backend = b;
        config.llm.provider.clear();
    }
    if let Some(p) = &opts.provider {
        config.llm.provider = p.clone();
        validate(&config, "the --provider flag")?;
    }
    if let Some(l) = &opts.log_level {
        config.logging.level = l.clone();
        validate(&config, "the --log-level flag")?;
    }
    let overrides = Overrides {
        model: opts.model.clone().or(model),
    };
    // env > file > platform default, like every other key.
    let data_dir = nonempty("NAVI_DATA_DIR")
        .map(PathBuf::from)
        .or_else(|| {
            (!config.storage.data_dir.is_empty()).then(|| PathBuf::from(&config.storage.data_dir))
        })
        .unwrap_or_else(default_data_dir);
    let db_path = if config.storage.db_path.is_empty() {
        data_dir.join("navi.db")
    } else {
        PathBuf::from(&config.storage.db_path)
    };
    let paths = Paths {
        config_file,
        log_dir: data_dir.join("logs"),
        config_dir,
        data_dir,
        db_path,
    };
    let stored = super::keys::KeyFile::in_data_dir(&paths.data_dir).read()?;
    config.credentials = super::providers::credentials(&config, &stored, getenv);
    Ok((config, paths, overrides))
}

/// Whether the file itself says which backend or provider to use.
fn file_chooses_backend(path: &Path) -> bool {
    let Ok(text) = std::fs::read_to_string(path) else {
        return false;
    };
    let Ok(table) = toml::from_str::<toml::Table>(&text) else {
        return false;
    };
    table
        .get("llm")
        .and_then(|l| l.as_table())
        .is_some_and(|l| {
            l.contains_key("backend")
                || l.get("provider")
                    .and_then(|p| p.as_str())
                    .is_some_and(|p| !p.trim().is_empty())
        })
}

/// Nothing chose a backend (no flag, no `NAVI_BACKEND`/`NAVI_PROVIDER`, not
/// the file): a bare `OPENAI_BASE_URL` means that OpenAI-compatible server,
/// a bare `ANTHROPIC_API_KEY` (or `ANTHROPIC_BASE_URL`) means Anthropic.
fn detect_backend(config: &mut Config, getenv: &dyn Fn(&str) -> Option<String>) {
    let set = |k: &str| getenv(k).is_some_and(|v| !v.trim().is_empty());
    if set("NAVI_BACKEND") || set("NAVI_PROVIDER") {
        return;
    }
    if set("OPENAI_BASE_URL") {
        config.llm.backend = BackendKind::Openai;
    } else if set("ANTHROPIC_API_KEY") || set("ANTHROPIC_BASE_URL") {
        config.llm.backend = BackendKind::Anthropic;
    }
}

/// Parses one TOML file strictly (unknown keys and wrong types are errors).
pub(crate) fn parse_file(path: &Path) -> Result<Config, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    parse_str(&text, path)
}

pub fn parse_str(text: &str, path: &Path) -> Result<Config, ConfigError> {
    toml::from_str::<Config>(text).map_err(|e| ConfigError::Parse {
        path: path.to_path_buf(),
        message: describe_toml_error(&e, text),
    })
}

fn describe_toml_error(e: &toml::de::Error, text: &str) -> String {
    let msg = e.message().trim().to_string();
    match e.span() {
        Some(span) => {
            let line = text[..span.start.min(text.len())].matches('\n').count() + 1;
            let snippet = text.lines().nth(line - 1).unwrap_or("").trim();
            format!(
                "line {line}: {msg} (at `{snippet}`); fix or remove this key, see config.example.toml"
            )
        }
        None => format!("{msg}; see config.example.toml"),
    }
}

fn invalid(origin: &str, key: &str, value: impl ToString, why: &str) -> ConfigError {
    ConfigError::Invalid {
        origin: origin.to_string(),
        key: key.to_string(),
        value: value.to_string(),
        why: why.to_string(),
    }
}

fn check_fraction(origin: &str, key: &str, v: f64) -> Result<(), ConfigError> {
    if (0.0..=1.0).contains(&v) && v > 0.0 {
        Ok(())
    } else {
        Err(invalid(
            origin,
            key,
            v,
            "must be a fraction between 0 and 1, e.g. 0.8",
        ))
    }
}

fn check_url(origin: &str, key: &str, v: &str) -> Result<(), ConfigError> {
    if v.starts_with("http://") || v.starts_with("https://") {
        Ok(())
    } else {
        Err(invalid(
            origin,
            key,
            crate::util::url_auth::redact_userinfo(v),
            "must be an http:// or https:// URL",
        ))
    }
}

/// Checks values that parse but make no sense.
pub fn validate(c: &Config, origin: &str) -> Result<(), ConfigError> {
    check_url(origin, "llm.ollama_host", &c.llm.ollama_host)?;
    check_url(origin, "llm.openai_base_url", &c.llm.openai_base_url)?;
    if c.memory.max_messages == 0 {
        return Err(invalid(
            origin,
            "memory.max_messages",
            0,
            "must be at least 1 (turn memory off with memory.enabled = false)",
        ));
    }
    if !c.llm.think.is_valid() {
        return Err(invalid(
            origin,
            "llm.think",
            format!("{:?}", c.llm.think),
            "use true, false, \"low\", \"medium\" or \"high\"",
        ));
    }
    for (key, v) in [
        (
            "llm.first_chunk_timeout_secs",
            c.llm.first_chunk_timeout_secs,
        ),
        ("llm.chunk_timeout_secs", c.llm.chunk_timeout_secs),
    ] {
        if !(v.is_finite() && v > 0.0) {
            return Err(invalid(
                origin,
                key,
                v,
                "must be a positive number of seconds",
            ));
        }
    }
    if c.llm.num_ctx < 512 {
        return Err(invalid(
            origin,
            "llm.num_ctx",
            c.llm.num_ctx,
            "must be at least 512 tokens",
        ));
    }
    check_fraction(
        origin,
        "context.compression_threshold",
        c.context.compression_threshold,
    )?;
    check_fraction(
        origin,
        "context.compression_target",
        c.context.compression_target,
    )?;
    check_fraction(origin, "context.warn_threshold", c.context.warn_threshold)?;
    check_fraction(origin, "context.hard_limit", c.context.hard_limit)?;
    if c.context.compression_target >= c.context.compression_threshold {
        return Err(invalid(
            origin,
            "context.compression_target",
            c.context.compression_target,
            "must be below context.compression_threshold",
        ));
    }
    if !matches!(
        c.security.ssh_host_key_checking.as_str(),
        "yes" | "accept-new"
    ) {
        return Err(invalid(
            origin,
            "security.ssh_host_key_checking",
            &c.security.ssh_host_key_checking,
            "use \"yes\" or \"accept-new\"",
        ));
    }
    if !matches!(c.tools.web_search_engine.as_str(), "duckduckgo" | "searxng") {
        return Err(invalid(
            origin,
            "tools.web_search_engine",
            &c.tools.web_search_engine,
            "use \"duckduckgo\" or \"searxng\"",
        ));
    }
    if let Some(bad) = c
        .security
        .net_allowed_hosts
        .iter()
        .find(|e| !crate::util::net::valid_entry(e))
    {
        return Err(invalid(
            origin,
            "security.net_allowed_hosts",
            bad,
            "use a host name, an IP address or a CIDR range like \"10.0.0.0/8\"",
        ));
    }
    if let Err(why) = crate::logging::check_level(&c.logging.level) {
        return Err(invalid(origin, "logging.level", &c.logging.level, &why));
    }
    super::mcp::validate(&c.mcp_servers, origin)?;
    super::providers::validate(c, origin)?;
    super::sandbox::validate(&c.sandbox, origin)?;
    Ok(())
}
