//! Anthropic Messages API (Claude, and every server that serves
//! `/v1/messages`, llama-server among them): `POST {base}/messages`
//! streamed as SSE, `GET {base}/models`.
//!
//! Invariants:
//! - The base URL ends in `/v1` (added when the configured one lacks it,
//!   as `ANTHROPIC_BASE_URL` is usually given without it).
//! - Every request carries `anthropic-version` and, when there is a key,
//!   `x-api-key`; a provider that needs a key and has none fails with
//!   `NoKey` before anything is sent.
//! - A request that fails before any response byte is sent once more on a
//!   fresh connection; 429 and 529/`overloaded_error` are the guard's to
//!   retry (with `retry-after`).
//! - `404 not_found_error` about the model is `ModelNotFound`; any other
//!   404, or a 200 that is not an event stream, is `WrongProtocol`.
//! - Dropping the returned stream drops the HTTP body; the server stops.
mod body;
mod decode;

pub(crate) use body::messages_body;
pub use decode::{AnthropicDecoder, decode_messages};

use super::descriptor::BackendDescriptor;
use super::endpoint::Endpoint;
use super::http::{self, HttpFailure, Target};
use super::{ChatRequest, ChunkStream, LlmBackend, LlmError, ModelInfo};
use crate::config::BackendKind;
use futures_util::TryStreamExt;
use serde_json::Value;
use std::sync::Arc;

/// The API version every request names.
pub(crate) const API_VERSION: &str = "2023-06-01";

pub(crate) static DESCRIPTOR: BackendDescriptor = BackendDescriptor {
    kind: BackendKind::Anthropic,
    display_name: decode::BACKEND,
    url_env: "ANTHROPIC_BASE_URL",
    url_key: "[providers.anthropic].base_url",
    unreachable_check: "is the server running?",
    url_target: "the Messages API's base URL",
    usual_base_suffix: Some(("/v1", " the Messages API is under /v1")),
    missing_model_hint: |_| "`navi models` lists the models it serves".into(),
    window_set_per_request: false,
    build: |e| Ok(Arc::new(AnthropicBackend::from_endpoint(e)?)),
};

pub struct AnthropicBackend {
    target: Target,
    client: reqwest::Client,
    fresh: reqwest::Client,
    endpoint: Endpoint,
    /// The last model list, for the details of one model (the API has no
    /// cheaper way to say them).
    listed: std::sync::Mutex<Option<(std::time::Instant, Vec<ModelInfo>)>>,
}

/// How long a model list answers `model_info`.
const LIST_REUSE: std::time::Duration = std::time::Duration::from_secs(60);

impl AnthropicBackend {
    /// A server at `base` with `key` (empty: none), nothing else set.
    pub fn new(base: &str, key: &str) -> Result<Self, LlmError> {
        Self::from_endpoint(&Endpoint::plain("anthropic", base, key))
    }

    pub(crate) fn from_endpoint(e: &Endpoint) -> Result<Self, LlmError> {
        let raw = e.base_url.trim().trim_end_matches('/');
        let raw = if raw.ends_with("/v1") {
            raw.to_string()
        } else {
            format!("{raw}/v1")
        };
        let (base, client, fresh) = http::clients(&raw, e.header_map())?;
        Ok(AnthropicBackend {
            target: Target::of(&DESCRIPTOR, base, e),
            client,
            fresh,
            endpoint: e.clone(),
            listed: std::sync::Mutex::new(None),
        })
    }

    /// `rb` with the version header and the key.
    fn request(&self, rb: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        let rb = rb.header("anthropic-version", API_VERSION);
        match self.endpoint.key() {
            Some(k) => rb.header("x-api-key", k),
            None => rb,
        }
    }

    /// The typed error for a refused request.
    fn refused(&self, f: HttpFailure, model: Option<&str>) -> LlmError {
        if f.status == 404 && !f.is_web_page() {
            let m = f.message.to_ascii_lowercase();
            if let Some(model) = model.filter(|_| m.starts_with("model") || m.contains("model:")) {
                return LlmError::ModelNotFound {
                    backend: self.target.name(),
                    model: model.to_string(),
                    hint: (DESCRIPTOR.missing_model_hint)(model),
                };
            }
            return LlmError::WrongProtocol {
                url: self.target.base.clone(),
                expected: decode::BACKEND.into(),
                detail: format!("POST /v1/messages answered HTTP 404: {}", f.message),
            };
        }
        f.into_error(&self.target, model)
    }

    async fn models_json(&self) -> Result<Vec<Value>, LlmError> {
        self.endpoint.check_key()?;
        let url = match &self.endpoint.models_url {
            Some(u) => u.clone(),
            None => format!("{}/models?limit=1000", self.target.base),
        };
        let req = self.request(self.client.get(url));
        let v = http::metadata_json(&self.target, req, "/v1/models", None).await?;
        v.get("data")
            .and_then(Value::as_array)
            .cloned()
            .ok_or_else(|| self.target.protocol("/v1/models has no \"data\" list"))
    }
}

/// What a model list entry says (Anthropic's, or an OpenAI-style one from
/// a server that serves both).
fn entry_info(entry: &Value) -> Option<ModelInfo> {
    let mut info = super::openai::entry_info(entry)?;
    if info.context_length.is_none() {
        info.context_length = entry.get("max_input_tokens").and_then(Value::as_u64);
    }
    if info.capabilities.is_empty() {
        // Claude models take tools and images and can think.
        if info.name.starts_with("claude") {
            info.capabilities = ["completion", "tools", "vision", "thinking"]
                .iter()
                .map(|c| c.to_string())
                .collect();
        }
    }
    Some(info)
}

#[async_trait::async_trait]
impl LlmBackend for AnthropicBackend {
    fn kind(&self) -> BackendKind {
        DESCRIPTOR.kind
    }

    fn descriptor(&self) -> &'static BackendDescriptor {
        &DESCRIPTOR
    }

    fn base_url(&self) -> &str {
        &self.target.base
    }

    async fn stream_chat(&self, req: &ChatRequest) -> Result<ChunkStream, LlmError> {
        self.endpoint.check_key()?;
        let body = messages_body(req);
        let url = format!("{}/messages", self.target.base);
        let resp = http::send_retrying_once(&self.target, &self.client, &self.fresh, |c| {
            self.request(c.post(&url))
                .header(reqwest::header::ACCEPT, "text/event-stream")
                .json(&body)
        })
        .await?;
        if !resp.status().is_success() {
            let f = HttpFailure::read(resp).await;
            return Err(self.refused(f, Some(&req.model)));
        }
        let resp =
            http::event_stream(resp, &self.target.base, decode::BACKEND, "/v1/messages").await?;
        let target = self.target.clone();
        let bytes = resp
            .bytes_stream()
            .map_err(move |e| http::body_error(&target, &e));
        Ok(Box::pin(decode_messages(bytes, self.target.base.clone())))
    }

    async fn list_models(&self) -> Result<Vec<ModelInfo>, LlmError> {
        let list: Vec<ModelInfo> = self
            .models_json()
            .await?
            .iter()
            .filter_map(entry_info)
            .collect();
        if let Ok(mut l) = self.listed.lock() {
            *l = Some((std::time::Instant::now(), list.clone()));
        }
        Ok(list)
    }

    async fn model_info(&self, model: &str) -> Result<ModelInfo, LlmError> {
        let recent = self.listed.lock().ok().and_then(|l| {
            l.as_ref()
                .filter(|(at, _)| at.elapsed() < LIST_REUSE)
                .map(|(_, list)| list.clone())
        });
        let list = match recent {
            Some(list) => list,
            None => self.list_models().await?,
        };
        list.into_iter()
            .find(|m| m.name == model || super::select::same_model(model, &m.name))
            .ok_or_else(|| LlmError::ModelNotFound {
                backend: self.target.name(),
                model: model.to_string(),
                hint: (DESCRIPTOR.missing_model_hint)(model),
            })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn the_base_url_ends_in_v1() {
        for (given, want) in [
            ("https://api.anthropic.com", "https://api.anthropic.com/v1"),
            (
                "https://api.anthropic.com/v1/",
                "https://api.anthropic.com/v1",
            ),
            ("http://127.0.0.1:8080", "http://127.0.0.1:8080/v1"),
        ] {
            assert_eq!(AnthropicBackend::new(given, "").unwrap().base_url(), want);
        }
    }

    #[test]
    fn a_provider_without_its_key_refuses_before_sending() {
        let mut e = Endpoint::plain("anthropic", "http://127.0.0.1:1", "");
        e.key_required = true;
        e.key_hint = "set ANTHROPIC_API_KEY or run `navi keys set anthropic`".into();
        let b = AnthropicBackend::from_endpoint(&e).unwrap();
        let req = ChatRequest::new("claude-x", vec![crate::llm::ChatMessage::user("hi")]);
        let err = futures_util::FutureExt::now_or_never(b.stream_chat(&req))
            .expect("no I/O before the key check")
            .err()
            .unwrap();
        let text = err.to_string();
        assert!(matches!(err, LlmError::NoKey { .. }), "{text}");
        assert!(text.contains("ANTHROPIC_API_KEY") && text.contains("navi keys set anthropic"));
    }
}
