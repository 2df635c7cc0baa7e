//! Providers: the named servers a model can come from, as data.
//!
//! A provider is a base URL, the wire protocol it speaks, the environment
//! variable that holds its key, extra headers and where it lists its
//! models. Navi knows a few ([`PRESETS`]); `[providers.<name>]` changes one
//! of those (any field) or adds a new one (`base_url` and `protocol`
//! required). A model is named `provider/model` anywhere a model is named.
//!
//! Invariants:
//! - Two providers are derived from `[llm]`, as before providers existed:
//!   `ollama` (at `[llm].ollama_host`) and `local` (the OpenAI-compatible
//!   server at `[llm].openai_base_url`, with `[llm].openai_api_key`). Their
//!   `[providers]` table may still change them.
//! - Keys are never part of a [`Provider`]'s printable form: a key is a
//!   [`Secret`], whose `Debug` says `<redacted>` and which is not
//!   serialised.
use super::{BackendKind, Config};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// `[providers.<name>]`: a new provider, or what changes of a built-in one.
#[derive(Clone, Debug, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ProviderConfig {
    /// The API's base URL (e.g. `https://openrouter.ai/api/v1`).
    pub base_url: Option<String>,
    /// The wire protocol: ollama, openai (chat completions), anthropic
    /// (messages) or responses (OpenAI Responses).
    pub protocol: Option<BackendKind>,
    /// The environment variable that holds the API key.
    pub api_key_env: Option<String>,
    /// Extra HTTP headers sent with every request.
    pub headers: BTreeMap<String, String>,
    /// Where the model list is, when not at the protocol's usual path.
    pub models_url: Option<String>,
}

/// A provider Navi knows without configuration.
#[derive(Debug)]
pub struct Preset {
    pub name: &'static str,
    /// Other names accepted for it.
    pub aliases: &'static [&'static str],
    pub protocol: BackendKind,
    pub base_url: &'static str,
    /// An environment variable that replaces `base_url` when set.
    pub url_env: Option<&'static str>,
    pub key_env: Option<&'static str>,
    /// Requests fail without a key.
    pub key_required: bool,
    /// Runs on this machine: not asked for its models unless configured.
    pub local: bool,
    /// One line for `navi keys list` and the docs.
    pub about: &'static str,
}

const fn hosted(
    name: &'static str,
    protocol: BackendKind,
    base_url: &'static str,
    key_env: &'static str,
    about: &'static str,
) -> Preset {
    Preset {
        name,
        aliases: &[],
        protocol,
        base_url,
        url_env: None,
        key_env: Some(key_env),
        key_required: true,
        local: false,
        about,
    }
}

const fn local(
    name: &'static str,
    aliases: &'static [&'static str],
    protocol: BackendKind,
    base_url: &'static str,
    key_env: Option<&'static str>,
    about: &'static str,
) -> Preset {
    Preset {
        name,
        aliases,
        protocol,
        base_url,
        url_env: None,
        key_env,
        key_required: false,
        local: true,
        about,
    }
}

/// The built-in providers. `ollama` and `local` take their address from
/// `[llm]` (see the module invariants); the URL here is only the default.
pub const PRESETS: &[Preset] = &[
    local(
        "ollama",
        &[],
        BackendKind::Ollama,
        "http://localhost:11434",
        None,
        "Ollama's native API ([llm].ollama_host, OLLAMA_HOST)",
    ),
    local(
        "local",
        &["llama-server", "llamacpp"],
        BackendKind::Openai,
        "http://localhost:8080/v1",
        Some("OPENAI_API_KEY"),
        "an OpenAI-compatible server such as llama-server ([llm].openai_base_url, OPENAI_BASE_URL)",
    ),
    Preset {
        url_env: Some("ANTHROPIC_BASE_URL"),
        ..hosted(
            "anthropic",
            BackendKind::Anthropic,
            "https://api.anthropic.com/v1",
            "ANTHROPIC_API_KEY",
            "Claude models, Anthropic Messages API",
        )
    },
    hosted(
        "openai",
        BackendKind::Responses,
        "https://api.openai.com/v1",
        "OPENAI_API_KEY",
        "OpenAI models, Responses API",
    ),
    hosted(
        "openrouter",
        BackendKind::Openai,
        "https://openrouter.ai/api/v1",
        "OPENROUTER_API_KEY",
        "models of many vendors behind one OpenAI-compatible API",
    ),
    hosted(
        "groq",
        BackendKind::Openai,
        "https://api.groq.com/openai/v1",
        "GROQ_API_KEY",
        "Groq, OpenAI-compatible API",
    ),
    hosted(
        "deepseek",
        BackendKind::Openai,
        "https://api.deepseek.com/v1",
        "DEEPSEEK_API_KEY",
        "DeepSeek, OpenAI-compatible API",
    ),
    hosted(
        "mistral",
        BackendKind::Openai,
        "https://api.mistral.ai/v1",
        "MISTRAL_API_KEY",
        "Mistral, OpenAI-compatible API",
    ),
    hosted(
        "gemini",
        BackendKind::Openai,
        "https://generativelanguage.googleapis.com/v1beta/openai",
        "GEMINI_API_KEY",
        "Google Gemini through its OpenAI-compatible endpoint",
    ),
    local(
        "lmstudio",
        &["lm-studio"],
        BackendKind::Openai,
        "http://localhost:1234/v1",
        None,
        "LM Studio's local server",
    ),
    local(
        "vllm",
        &[],
        BackendKind::Openai,
        "http://localhost:8000/v1",
        Some("VLLM_API_KEY"),
        "a vLLM server",
    ),
];

/// The preset called `name` (or one of its aliases), case-insensitively.
pub fn preset(name: &str) -> Option<&'static Preset> {
    let n = name.trim().to_ascii_lowercase();
    PRESETS
        .iter()
        .find(|p| p.name == n || p.aliases.contains(&n.as_str()))
}

/// A key: never printed, never serialised.
#[derive(Clone, PartialEq, Eq, Default)]
pub struct Secret(String);

impl Secret {
    pub fn new(s: impl Into<String>) -> Self {
        Secret(s.into().trim().to_string())
    }
    /// The key itself, for the one place that sends it (an HTTP header).
    pub fn expose(&self) -> &str {
        &self.0
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("<redacted>")
    }
}

/// Where a provider's key came from (for `navi keys list`; never the key).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KeySource {
    /// The environment variable of that name.
    Env(String),
    /// Navi's key file (`navi keys set`).
    Stored,
    /// `[llm].openai_api_key` in the config file.
    Config,
}

/// Keys found at load time, by provider name.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Credentials {
    pub(crate) keys: BTreeMap<String, (Secret, KeySource)>,
}

impl Credentials {
    pub fn get(&self, provider: &str) -> Option<&(Secret, KeySource)> {
        self.keys.get(provider)
    }
}

/// A provider with presets, its table, `[llm]` and the environment merged.
#[derive(Clone, Debug, PartialEq)]
pub struct Provider {
    pub name: String,
    pub protocol: BackendKind,
    pub base_url: String,
    /// The environment variable for its key, if it has one.
    pub key_env: Option<String>,
    pub key_required: bool,
    pub headers: Vec<(String, String)>,
    pub models_url: Option<String>,
    pub local: bool,
    /// It has a `[providers]` table.
    pub configured: bool,
    /// What to change to point it elsewhere (for messages).
    pub url_hint: String,
}

impl Provider {
    /// How to give it a key, for messages: names the variable and
    /// `navi keys set`.
    pub fn key_hint(&self) -> String {
        match &self.key_env {
            Some(v) => format!(
                "set {v} or run `navi keys set {}` (the key is stored in Navi's data dir, readable only by you)",
                self.name
            ),
            None => format!(
                "run `navi keys set {}`, or set api_key_env in [providers.{}]",
                self.name, self.name
            ),
        }
    }
}

impl Config {
    /// Every provider: the presets (changed by their tables) and the ones
    /// only `[providers]` names, in that order.
    pub fn providers(&self) -> Vec<Provider> {
        let mut out: Vec<Provider> = PRESETS.iter().map(|p| self.preset_provider(p)).collect();
        for (name, t) in &self.providers {
            if preset(name).is_some() {
                continue;
            }
            out.push(Provider {
                name: name.clone(),
                protocol: t.protocol.unwrap_or(BackendKind::Openai),
                base_url: t.base_url.clone().unwrap_or_default(),
                key_env: t.api_key_env.clone(),
                key_required: false,
                headers: t.headers.clone().into_iter().collect(),
                models_url: t.models_url.clone(),
                local: false,
                configured: true,
                url_hint: format!("set base_url in [providers.{name}]"),
            });
        }
        out
    }

    /// The provider called `name` (or a preset's alias).
    pub fn provider(&self, name: &str) -> Option<Provider> {
        let canonical = preset(name).map_or(name.trim(), |p| p.name);
        self.providers().into_iter().find(|p| p.name == canonical)
    }

    fn preset_provider(&self, p: &Preset) -> Provider {
        let table = self
            .providers
            .iter()
            .find(|(n, _)| preset(n).is_some_and(|q| q.name == p.name))
            .map(|(_, t)| t);
        let (base, url_hint) = match p.name {
            "ollama" => (
                self.llm.ollama_host.clone(),
                "set OLLAMA_HOST or [llm].ollama_host; or use another provider: OPENAI_BASE_URL, ANTHROPIC_API_KEY, --provider NAME or -m provider/model (`navi keys list` shows them)".to_string(),
            ),
            "local" => (
                self.llm.openai_base_url.clone(),
                "set OPENAI_BASE_URL or [llm].openai_base_url".to_string(),
            ),
            _ => {
                let hint = match p.url_env {
                    Some(v) => format!("set {v} or [providers.{}].base_url", p.name),
                    None => format!("set [providers.{}].base_url", p.name),
                };
                (p.base_url.to_string(), hint)
            }
        };
        let t = table.cloned().unwrap_or_default();
        Provider {
            name: p.name.to_string(),
            protocol: t.protocol.unwrap_or(p.protocol),
            base_url: t.base_url.unwrap_or(base),
            key_env: t.api_key_env.or_else(|| p.key_env.map(String::from)),
            key_required: p.key_required,
            headers: t.headers.into_iter().collect(),
            models_url: t.models_url,
            local: p.local,
            configured: table.is_some(),
            url_hint,
        }
    }

    /// The provider bare model names go to, and the protocol to speak to
    /// it: `[llm].provider` (`--provider`, `NAVI_PROVIDER`) when set, else
    /// the one `[llm].backend` stands for (ollama → `ollama`, openai and
    /// responses → `local`, anthropic → `anthropic`).
    pub fn default_provider(&self) -> (String, BackendKind) {
        if !self.llm.provider.trim().is_empty()
            && let Some(p) = self.provider(&self.llm.provider)
        {
            return (p.name, p.protocol);
        }
        let name = match self.llm.backend {
            BackendKind::Ollama => "ollama",
            BackendKind::Openai | BackendKind::Responses => "local",
            BackendKind::Anthropic => "anthropic",
        };
        (name.to_string(), self.llm.backend)
    }
}

/// Each provider's key: its environment variable, else the key file,
/// else (`local` only) `[llm].openai_api_key`.
pub(crate) fn credentials(
    c: &Config,
    stored: &BTreeMap<String, Secret>,
    getenv: &dyn Fn(&str) -> Option<String>,
) -> Credentials {
    let mut keys = BTreeMap::new();
    for p in c.providers() {
        let from_env = p
            .key_env
            .as_deref()
            .and_then(|v| getenv(v).map(|k| (Secret::new(k), KeySource::Env(v.to_string()))));
        let found = from_env
            .filter(|(k, _)| !k.is_empty())
            .or_else(|| stored.get(&p.name).map(|k| (k.clone(), KeySource::Stored)))
            .or_else(|| {
                let k = Secret::new(c.llm.openai_api_key.as_str());
                (p.name == "local" && !k.is_empty()).then_some((k, KeySource::Config))
            });
        if let Some(f) = found {
            keys.insert(p.name, f);
        }
    }
    Credentials { keys }
}

/// Checks `[providers]` and `[llm].provider`.
pub(crate) fn validate(c: &Config, origin: &str) -> Result<(), super::ConfigError> {
    let invalid = |key: String, value: &str, why: &str| super::ConfigError::Invalid {
        origin: origin.to_string(),
        key,
        value: value.to_string(),
        why: why.to_string(),
    };
    for (name, t) in &c.providers {
        let key = |k: &str| format!("providers.{name}.{k}");
        if name.is_empty() || name.contains('/') || name.chars().any(char::is_whitespace) {
            return Err(invalid(
                format!("providers.{name}"),
                name,
                "a provider name is one word without '/' (it goes before the '/' in provider/model)",
            ));
        }
        if preset(name).is_none() {
            if t.base_url.is_none() {
                return Err(invalid(
                    key("base_url"),
                    "",
                    "a new provider needs base_url (and protocol); see docs/providers.md",
                ));
            }
            if t.protocol.is_none() {
                return Err(invalid(
                    key("protocol"),
                    "",
                    &format!("a new provider needs protocol: {}", BackendKind::choices()),
                ));
            }
        }
        for (k, v) in [("base_url", &t.base_url), ("models_url", &t.models_url)] {
            if let Some(v) = v
                && !(v.starts_with("http://") || v.starts_with("https://"))
            {
                return Err(invalid(
                    key(k),
                    &crate::util::url_auth::redact_userinfo(v),
                    "must be an http:// or https:// URL",
                ));
            }
        }
        if let Some(env) = &t.api_key_env
            && !key_env_name_ok(env)
        {
            return Err(invalid(
                key("api_key_env"),
                env,
                "must be an environment variable name ending in _API_KEY, _KEY, _TOKEN or _SECRET (such variables are kept from tool processes)",
            ));
        }
        for h in t.headers.keys() {
            if reqwest::header::HeaderName::from_bytes(h.as_bytes()).is_err() {
                return Err(invalid(key("headers"), h, "not a valid HTTP header name"));
            }
        }
    }
    let p = c.llm.provider.trim();
    if !p.is_empty() && c.provider(p).is_none() {
        return Err(invalid(
            "llm.provider".into(),
            p,
            &format!("unknown provider; use one of {}", names(c).join(", ")),
        ));
    }
    Ok(())
}

/// Whether `name` may hold a provider's key: a variable name that the
/// environment scrubbing of tool processes (`tools/child_env.rs`) always
/// removes, so no key variable reaches a tool.
pub(crate) fn key_env_name_ok(name: &str) -> bool {
    let n = name.to_ascii_uppercase();
    !n.is_empty()
        && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && ["_API_KEY", "_KEY", "_TOKEN", "_SECRET"]
            .iter()
            .any(|s| n.ends_with(s) && n.len() > s.len())
}

/// The names of every provider, for messages.
pub fn names(c: &Config) -> Vec<String> {
    c.providers().into_iter().map(|p| p.name).collect()
}

#[cfg(test)]
#[path = "providers_tests.rs"]
mod tests;
