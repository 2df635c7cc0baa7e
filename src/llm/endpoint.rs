//! Where a backend sends its requests and as whom: one provider, resolved
//! (base URL, key, extra headers, model list URL, and the words error
//! messages use to say how to change them).
//!
//! Invariants:
//! - The key is a [`Secret`]: it goes into one request header and nowhere
//!   else (no message, no log line, no session row).
//! - A provider that needs a key and has none gives [`LlmError::NoKey`]
//!   before anything is sent.
use super::LlmError;
use crate::config::{Config, Provider, Secret};

#[derive(Clone, Debug)]
pub struct Endpoint {
    /// The provider's name (`anthropic`, `local`, …).
    pub provider: String,
    pub base_url: String,
    pub api_key: Option<Secret>,
    pub headers: Vec<(String, String)>,
    pub models_url: Option<String>,
    /// How to point it elsewhere: "set OLLAMA_HOST or [llm].ollama_host".
    pub url_hint: String,
    /// How to give it a key (for a refused or missing key).
    pub key_hint: String,
    /// Requests fail without a key.
    pub key_required: bool,
    /// The environment variable for its key, if any (for messages).
    pub key_env: Option<String>,
}

impl Endpoint {
    /// A server at `base` with an optional key and nothing else set (tests,
    /// benchmarks, the legacy constructors).
    pub fn plain(provider: &str, base: &str, key: &str) -> Self {
        Endpoint {
            provider: provider.to_string(),
            base_url: base.to_string(),
            api_key: Some(Secret::new(key)).filter(|k| !k.is_empty()),
            headers: Vec::new(),
            models_url: None,
            url_hint: String::new(),
            key_hint: String::new(),
            key_required: false,
            key_env: None,
        }
    }

    /// The endpoint of provider `p` with the key the configuration found.
    pub fn of(p: &Provider, config: &Config) -> Self {
        let key = config.credentials.get(&p.name).map(|(k, _)| k.clone());
        // Ollama itself takes no key: its own words about a refusal stay.
        let keyless = p.protocol == crate::config::BackendKind::Ollama && p.key_env.is_none();
        Endpoint {
            provider: p.name.clone(),
            base_url: p.base_url.clone(),
            api_key: key,
            headers: p.headers.clone(),
            models_url: p.models_url.clone(),
            url_hint: p.url_hint.clone(),
            key_hint: if keyless { String::new() } else { p.key_hint() },
            key_required: p.key_required,
            key_env: p.key_env.clone(),
        }
    }

    /// The key as sent, `None` when there is none.
    pub(crate) fn key(&self) -> Option<&str> {
        self.api_key
            .as_ref()
            .map(Secret::expose)
            .filter(|k| !k.is_empty())
    }

    /// `Err(NoKey)` when the provider needs a key and has none.
    pub(crate) fn check_key(&self) -> Result<(), LlmError> {
        if self.key_required && self.key().is_none() {
            return Err(LlmError::NoKey {
                provider: self.provider.clone(),
                hint: self.key_hint.clone(),
            });
        }
        Ok(())
    }

    /// The extra headers, as `reqwest` takes them (invalid ones, which the
    /// configuration check refuses, are left out).
    pub(crate) fn header_map(&self) -> reqwest::header::HeaderMap {
        let mut map = reqwest::header::HeaderMap::new();
        for (k, v) in &self.headers {
            if let (Ok(k), Ok(v)) = (
                reqwest::header::HeaderName::from_bytes(k.as_bytes()),
                reqwest::header::HeaderValue::from_str(v),
            ) {
                map.insert(k, v);
            }
        }
        map
    }
}
