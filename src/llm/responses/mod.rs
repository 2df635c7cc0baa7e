//! OpenAI Responses API (OpenAI itself, and servers that serve
//! `/v1/responses`, llama-server among them): `POST {base}/responses`
//! streamed as SSE with `store: false`; models as OpenAI-compatible
//! servers list them (`GET {base}/models`).
//!
//! Invariants:
//! - `Authorization: Bearer KEY` when there is a key; a provider that needs
//!   one and has none fails with `NoKey` before anything is sent.
//! - A model that refuses an optional field with HTTP 400 naming it
//!   (`reasoning`, `temperature`, `include`) gets the request once more
//!   without it, and never that field again in this process.
//! - A request that fails before any response byte is sent once more on a
//!   fresh connection; 429 and 5xx are the guard's to retry.
//! - A 404 that is not about the model, or a 200 that is not an event
//!   stream, is `WrongProtocol`.
//! - Model lists, details and token counts are an OpenAI-compatible
//!   server's (`openai.rs`), asked of the same endpoint.
//! - Dropping the returned stream drops the HTTP body; the server stops.
mod body;
mod decode;

pub(crate) use body::{Fields, responses_body};
pub use decode::{ResponsesDecoder, decode_responses};

use super::descriptor::BackendDescriptor;
use super::endpoint::Endpoint;
use super::http::{self, HttpFailure, Target};
use super::openai::OpenAiBackend;
use super::{ChatRequest, ChunkStream, ImageInput, LlmBackend, LlmError, ModelInfo};
use crate::config::BackendKind;
use futures_util::TryStreamExt;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

pub(crate) static DESCRIPTOR: BackendDescriptor = BackendDescriptor {
    kind: BackendKind::Responses,
    display_name: decode::BACKEND,
    url_env: "OPENAI_BASE_URL",
    url_key: "[llm].openai_base_url",
    unreachable_check: "is the server running?",
    url_target: "the API's base URL",
    usual_base_suffix: Some(("/v1", " OpenAI-compatible servers usually end in /v1")),
    missing_model_hint: |_| "`navi models` lists the models it serves".into(),
    window_set_per_request: false,
    build: |e| Ok(Arc::new(ResponsesBackend::from_endpoint(e)?)),
};

pub struct ResponsesBackend {
    target: Target,
    client: reqwest::Client,
    fresh: reqwest::Client,
    endpoint: Endpoint,
    /// Lists, details and counts, as an OpenAI-compatible server.
    meta: OpenAiBackend,
    /// Optional fields each model refused.
    fields: Mutex<HashMap<String, Fields>>,
}

impl ResponsesBackend {
    pub fn new(base: &str, key: &str) -> Result<Self, LlmError> {
        Self::from_endpoint(&Endpoint::plain("openai", base, key))
    }

    pub(crate) fn from_endpoint(e: &Endpoint) -> Result<Self, LlmError> {
        let (base, client, fresh) = http::clients(&e.base_url, e.header_map())?;
        Ok(ResponsesBackend {
            target: Target::of(&DESCRIPTOR, base, e),
            client,
            fresh,
            endpoint: e.clone(),
            meta: OpenAiBackend::from_endpoint(e)?,
            fields: Mutex::new(HashMap::new()),
        })
    }

    fn fields_for(&self, model: &str) -> Fields {
        self.fields
            .lock()
            .ok()
            .and_then(|m| m.get(model).copied())
            .unwrap_or_default()
    }

    /// The field a 400 names, turned off in `f`; false when it names none
    /// that is still on.
    fn drop_refused(f: &mut Fields, failure: &HttpFailure) -> bool {
        if failure.status != 400 {
            return false;
        }
        let m = failure.message.to_ascii_lowercase();
        if f.reasoning && m.contains("reasoning") && !m.contains("encrypted") {
            f.reasoning = false;
        } else if f.include && (m.contains("include") || m.contains("encrypted")) {
            f.include = false;
        } else if f.temperature && m.contains("temperature") {
            f.temperature = false;
        } else {
            return false;
        }
        true
    }

    fn refused(&self, f: HttpFailure, model: &str) -> LlmError {
        let e = f.clone().into_error(&self.target, Some(model));
        match e {
            LlmError::Rejected { status: 404, .. } => LlmError::WrongProtocol {
                url: self.target.base.clone(),
                expected: decode::BACKEND.into(),
                detail: format!("POST /responses answered HTTP 404: {}", f.message),
            },
            other => other,
        }
    }
}

#[async_trait::async_trait]
impl LlmBackend for ResponsesBackend {
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
        let url = format!("{}/responses", self.target.base);
        let mut fields = self.fields_for(&req.model);
        let resp = loop {
            let body = responses_body(req, fields);
            let resp = http::send_retrying_once(&self.target, &self.client, &self.fresh, |c| {
                let rb = c
                    .post(&url)
                    .header(reqwest::header::ACCEPT, "text/event-stream")
                    .json(&body);
                match self.endpoint.key() {
                    Some(k) => rb.bearer_auth(k),
                    None => rb,
                }
            })
            .await?;
            if resp.status().is_success() {
                break resp;
            }
            let failure = HttpFailure::read(resp).await;
            if !Self::drop_refused(&mut fields, &failure) {
                return Err(self.refused(failure, &req.model));
            }
            tracing::warn!(
                model = %req.model,
                "Responses API: {}; retrying without that field and remembering it",
                failure.message
            );
            if let Ok(mut m) = self.fields.lock() {
                m.insert(req.model.clone(), fields);
            }
        };
        let resp =
            http::event_stream(resp, &self.target.base, decode::BACKEND, "/responses").await?;
        let target = self.target.clone();
        let bytes = resp
            .bytes_stream()
            .map_err(move |e| http::body_error(&target, &e));
        Ok(Box::pin(decode_responses(bytes, self.target.base.clone())))
    }

    async fn list_models(&self) -> Result<Vec<ModelInfo>, LlmError> {
        self.endpoint.check_key()?;
        self.meta.list_models().await
    }

    async fn model_info(&self, model: &str) -> Result<ModelInfo, LlmError> {
        self.meta.model_info(model).await
    }

    async fn image_input(&self, model: &str) -> Option<ImageInput> {
        self.meta.image_input(model).await
    }

    async fn count_prompt(&self, req: &ChatRequest) -> Option<u64> {
        self.meta.count_prompt(req).await
    }
}
