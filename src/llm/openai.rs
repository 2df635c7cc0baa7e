//! OpenAI-compatible API (llama.cpp `llama-server`, vLLM, LM Studio, Ollama's
//! `/v1`): `POST {base}/chat/completions` streamed as SSE, `GET {base}/models`.
//!
//! Invariants:
//! - One `reqwest::Client` per backend, built in `new` (no network I/O there).
//! - `stream: true` with `stream_options.include_usage`; `temperature` at the
//!   top level; `num_ctx` and `keep_alive` are Ollama-only and never sent.
//! - `think` is not sent: there is no portable field for it (`reasoning_effort`
//!   is rejected by some servers for non-reasoning models). Servers decide
//!   from the model/template; reasoning that arrives is still shown.
//! - History: `thinking` is not sent back; assistant tool calls carry their
//!   arguments as a JSON string (the raw text when they were not valid JSON);
//!   tool results are paired by `tool_call_id`; images are `image_url` data
//!   URLs in a content-part array. Messages go through `roles::normalize`
//!   first, so strict chat templates accept the order.
//! - `Authorization: Bearer KEY` only when a key is configured.
//! - A server that answers 400 naming `stream_options` gets the request once
//!   more without it, and never again afterwards (usage then comes only from
//!   servers that send it unasked).
//! - `max_tokens` is sent when the request caps generation.
//! - llama-server (detected by its `/props`, read once when the window is
//!   first asked for) also gets `cache_prompt: true`; the server chooses
//!   the slot (see `llama.rs`).
//! - Image input: what the server says (`/props` `modalities.vision`, the
//!   model list's `input_modalities`/`capabilities`, LM Studio's
//!   `/api/v0/models` type) becomes the "completion"/"vision" capabilities
//!   (see `modalities.rs`); LM Studio is asked only when images are about to
//!   be sent and nothing else said, and never again once it answered that it
//!   has no such list.
//! - A request that fails before any response byte is sent once more on a
//!   fresh connection (`http::send_retrying_once`).
//! - Dropping the returned stream drops the HTTP body; the server stops.

use super::descriptor::BackendDescriptor;
use super::endpoint::Endpoint;
use super::http::{self, HttpFailure, Target};
use super::llama::{self, ServerProps};
use super::modalities::{apply_images, entry_images, merge_llama_models};
use super::sse::decode_sse;
use super::{
    ChatMessage, ChatRequest, ChunkStream, ImageInput, LlmBackend, LlmError, ModelInfo, Role,
    ToolSchema,
};
use crate::config::BackendKind;
use futures_util::TryStreamExt;
use serde_json::{Map, Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// OpenAI-compatible servers (llama-server, vLLM, LM Studio, …): addressed
/// by `OPENAI_BASE_URL` / `[llm].openai_base_url`; their context is fixed
/// by the server, not by the request.
pub(crate) static DESCRIPTOR: BackendDescriptor = BackendDescriptor {
    kind: BackendKind::Openai,
    display_name: "OpenAI-compatible API",
    url_env: "OPENAI_BASE_URL",
    url_key: "openai_base_url",
    unreachable_check: "is the server running?",
    url_target: "the API's base URL",
    usual_base_suffix: Some(("/v1", " OpenAI-compatible servers usually end in /v1")),
    missing_model_hint: |_| "check the model id with `navi models`".into(),
    window_set_per_request: false,
    build: |e| Ok(Arc::new(OpenAiBackend::from_endpoint(e)?)),
};

pub struct OpenAiBackend {
    target: Target,
    client: reqwest::Client,
    /// No connection reuse: for the one retry after a stale connection.
    fresh: reqwest::Client,
    api_key: String,
    /// Where the model list is, when not `{base}/models`.
    models_url: Option<String>,
    /// The server rejected `stream_options` once; do not send it again.
    no_stream_options: AtomicBool,
    /// llama-server's `/props`, read once (`None` inside: not llama-server).
    props: tokio::sync::OnceCell<Option<ServerProps>>,
    /// The server has no LM Studio `/api/v0/models`; do not ask again.
    no_lmstudio_list: AtomicBool,
    /// `/tokenize` failed once: do not ask again.
    no_tokenize: AtomicBool,
    /// Models seen to re-read the previous answer (`openai_warm.rs`), for
    /// a process that keeps no server cache.
    rereads: std::sync::Mutex<std::collections::BTreeSet<String>>,
    /// Saving a slot was refused (`openai_slots.rs`).
    no_slot_save: AtomicBool,
}

impl OpenAiBackend {
    pub fn new(base: &str, api_key: &str) -> Result<Self, LlmError> {
        Self::from_endpoint(&Endpoint::plain("local", base, api_key))
    }

    pub(crate) fn from_endpoint(e: &Endpoint) -> Result<Self, LlmError> {
        let (base, client, fresh) = http::clients(&e.base_url, e.header_map())?;
        Ok(OpenAiBackend {
            client,
            fresh,
            target: Target::of(&DESCRIPTOR, base, e),
            api_key: e.key().unwrap_or_default().to_string(),
            models_url: e.models_url.clone(),
            no_stream_options: AtomicBool::new(false),
            props: tokio::sync::OnceCell::new(),
            no_lmstudio_list: AtomicBool::new(false),
            no_tokenize: AtomicBool::new(false),
            rereads: Default::default(),
            no_slot_save: AtomicBool::new(false),
        })
    }

    fn request(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        self.request_on(&self.client, method, path)
    }

    fn request_on(
        &self,
        client: &reqwest::Client,
        method: reqwest::Method,
        path: &str,
    ) -> reqwest::RequestBuilder {
        let rb = client.request(method, format!("{}{path}", self.target.base));
        if self.api_key.is_empty() {
            rb
        } else {
            rb.bearer_auth(&self.api_key)
        }
    }

    /// A metadata request to the server's root (llama-server's `/props`,
    /// `/slots`, LM Studio's `/api/v0/models`), with the key and the
    /// metadata timeout.
    pub(super) fn root_request(
        &self,
        method: reqwest::Method,
        path: &str,
    ) -> reqwest::RequestBuilder {
        let url = format!("{}{path}", llama::root_of(&self.target.base));
        let rb = self
            .client
            .request(method, url)
            .timeout(http::METADATA_TIMEOUT);
        if self.api_key.is_empty() {
            rb
        } else {
            rb.bearer_auth(&self.api_key)
        }
    }

    /// The model list, asked now (see `openai_known.rs` for the kept one).
    async fn fetch_models_json(&self) -> Result<Vec<Value>, LlmError> {
        let req = match &self.models_url {
            Some(url) if !self.api_key.is_empty() => {
                self.client.get(url).bearer_auth(&self.api_key)
            }
            Some(url) => self.client.get(url),
            None => self.request(reqwest::Method::GET, "/models"),
        };
        let v = http::metadata_json(&self.target, req, "/models", None).await?;
        let mut data = v
            .get("data")
            .and_then(Value::as_array)
            .cloned()
            .ok_or_else(|| self.target.protocol("/models has no \"data\" list"))?;
        merge_llama_models(&v, &mut data);
        Ok(data)
    }

    /// LM Studio's own model list (`GET /api/v0/models`), whose entries say
    /// `"type": "vlm"` or `"llm"`; `None` on other servers (remembered).
    async fn lmstudio_entry(&self, model: &str) -> Option<Value> {
        if self.no_lmstudio_list.load(Ordering::Relaxed) {
            return None;
        }
        let rb = self.root_request(reqwest::Method::GET, "/api/v0/models");
        let list = match rb.send().await {
            Ok(r) if r.status().is_success() => r.json::<Value>().await.ok(),
            _ => None,
        };
        let Some(data) = list
            .as_ref()
            .and_then(|v| v.get("data"))
            .and_then(Value::as_array)
        else {
            self.no_lmstudio_list.store(true, Ordering::Relaxed);
            return None;
        };
        find_entry(data, model).cloned()
    }
}

/// The `/models` entry for `model`: its exact id, else the same model by
/// name (a tag or path prefix aside).
fn find_entry<'a>(data: &'a [Value], model: &str) -> Option<&'a Value> {
    let id = |e: &Value| e.get("id").and_then(Value::as_str).map(String::from);
    data.iter()
        .find(|e| id(e).as_deref() == Some(model))
        .or_else(|| {
            data.iter()
                .find(|e| id(e).is_some_and(|i| super::select::same_model(model, &i)))
        })
}

/// The JSON body of a chat request.
/// `text_tools`: the server's chat template cannot render tool calls or
/// results, so earlier tool turns go as plain text (`roles::tools_as_text`).
pub(crate) fn chat_body(req: &ChatRequest, stream_options: bool, text_tools: bool) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), json!(req.model));
    let messages = if text_tools {
        super::roles::normalize(&super::roles::tools_as_text(&req.messages))
    } else {
        super::roles::normalize(&req.messages)
    };
    body.insert(
        "messages".into(),
        Value::Array(messages.iter().map(message).collect()),
    );
    body.insert("stream".into(), json!(true));
    if stream_options {
        body.insert("stream_options".into(), json!({"include_usage": true}));
    }
    if !req.tools.is_empty() {
        let tools = req.tools.iter().map(ToolSchema::to_wire).collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    if let Some(t) = req.temperature {
        body.insert("temperature".into(), json!(t));
    }
    if let Some(n) = req.max_tokens {
        body.insert("max_tokens".into(), json!(n));
    }
    Value::Object(body)
}

fn message(m: &ChatMessage) -> Value {
    let mut o = Map::new();
    o.insert("role".into(), json!(m.role.as_str()));
    if !m.has_images() {
        o.insert("content".into(), json!(m.text()));
    } else {
        let mut parts = vec![json!({"type": "text", "text": m.text()})];
        parts.extend(m.images().map(|i| {
            json!({"type": "image_url", "image_url": {
                "url": format!("data:{};base64,{}", i.mime, i.base64)
            }})
        }));
        o.insert("content".into(), Value::Array(parts));
    }
    if m.role == Role::Assistant && m.has_tool_calls() {
        let calls = m
            .tool_calls()
            .map(|c| {
                let arguments = match &c.arguments {
                    Value::String(raw) => raw.clone(),
                    other => other.to_string(),
                };
                json!({"id": c.id, "type": "function",
                       "function": {"name": c.name, "arguments": arguments}})
            })
            .collect();
        o.insert("tool_calls".into(), Value::Array(calls));
    }
    if m.role == Role::Tool
        && let Some(id) = m.tool_call_id()
    {
        o.insert("tool_call_id".into(), json!(id));
    }
    Value::Object(o)
}

/// The context length a `/models` entry reports, under any of the names
/// servers use (llama.cpp `meta.n_ctx_train`, vLLM `max_model_len`, LM Studio
/// / OpenRouter `context_length`, Groq `context_window`).
fn entry_context_length(entry: &Value) -> Option<u64> {
    let meta = entry.get("meta");
    [
        entry.get("context_length"),
        entry.get("max_model_len"),
        entry.get("context_window"),
        entry.get("max_context_length"),
        meta.and_then(|m| m.get("n_ctx")),
        meta.and_then(|m| m.get("n_ctx_train")),
    ]
    .into_iter()
    .flatten()
    .find_map(Value::as_u64)
    .filter(|n| *n > 0)
}

/// Capabilities where the entry tells: a `capabilities` array, OpenRouter's
/// `supported_parameters` (`tools`, `reasoning`), and what it says about
/// images ("completion", plus "vision" when it takes them).
fn entry_capabilities(entry: &Value) -> Vec<String> {
    let strings = |v: Option<&Value>| -> Vec<String> {
        v.and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(String::from)
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut caps = strings(entry.get("capabilities"));
    for p in strings(entry.get("supported_parameters")) {
        let cap = match p.as_str() {
            "tools" => "tools",
            "reasoning" | "include_reasoning" => "thinking",
            _ => continue,
        };
        if !caps.iter().any(|c| c == cap) {
            caps.push(cap.to_string());
        }
    }
    caps.retain(|c| c != "multimodal");
    if let Some((takes, _)) = entry_images(entry) {
        apply_images(&mut caps, takes);
    }
    caps
}

pub(crate) fn entry_info(entry: &Value) -> Option<ModelInfo> {
    Some(ModelInfo {
        name: entry.get("id")?.as_str()?.to_string(),
        context_length: entry_context_length(entry),
        capabilities: entry_capabilities(entry),
    })
}

#[async_trait::async_trait]
impl LlmBackend for OpenAiBackend {
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
        let mut stream_options = !self.no_stream_options.load(Ordering::Relaxed);
        let props = self.props.get().cloned().flatten();
        let resp = loop {
            let text_tools = props.as_ref().and_then(|p| p.tools) == Some(false);
            let mut body = chat_body(req, stream_options, text_tools);
            if props.is_some() {
                llama::add_fields(&mut body, req.slot);
            }
            if let Some(c) = &req.constraint {
                super::constrain::add_openai(&mut body, c, props.is_some());
            }
            let resp = http::send_retrying_once(&self.target, &self.client, &self.fresh, |c| {
                self.request_on(c, reqwest::Method::POST, "/chat/completions")
                    .header(reqwest::header::ACCEPT, "text/event-stream")
                    .json(&body)
            })
            .await?;
            if resp.status().is_success() {
                break resp;
            }
            let failure = HttpFailure::read(resp).await;
            if stream_options && failure.status == 400 && failure.message.contains("stream_options")
            {
                tracing::warn!("{}; retrying without stream_options", failure.message);
                self.no_stream_options.store(true, Ordering::Relaxed);
                stream_options = false;
                continue;
            }
            self.forget_kept();
            return Err(failure.into_error(&self.target, Some(&req.model)));
        };
        let is_json = resp
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|ct| ct.starts_with("application/json"));
        if is_json {
            return Err(self.target.protocol(
                "the server answered with a JSON document instead of an event stream \
                 (does it support \"stream\": true?)",
            ));
        }
        let target = self.target.clone();
        let bytes = resp
            .bytes_stream()
            .map_err(move |e| http::body_error(&target, &e));
        Ok(Box::pin(decode_sse(bytes)))
    }

    async fn find_models(&self, _wanted: &[String]) -> Result<Vec<ModelInfo>, LlmError> {
        let data = self.known_models_json().await?;
        Ok(data.iter().filter_map(entry_info).collect())
    }

    async fn list_models(&self) -> Result<Vec<ModelInfo>, LlmError> {
        Ok(self
            .models_json()
            .await?
            .iter()
            .filter_map(entry_info)
            .collect())
    }

    async fn model_info(&self, model: &str) -> Result<ModelInfo, LlmError> {
        let models = self.known_models_json().await?;
        let mut infos: Vec<ModelInfo> = models.iter().filter_map(entry_info).collect();
        let props = self.server_props().await;
        if let Some(n) = props.as_ref().and_then(|p| p.n_ctx) {
            // llama-server: the window it really serves wins over n_ctx_train.
            for i in infos.iter_mut() {
                i.context_length = Some(n);
            }
        }
        if let Some(v) = props.and_then(|p| p.vision) {
            // llama-server: whether the loaded model has its projector.
            for i in infos.iter_mut() {
                apply_images(&mut i.capabilities, v);
            }
        }
        infos
            .iter()
            .find(|m| m.name == model)
            .or_else(|| {
                infos
                    .iter()
                    .find(|m| super::select::same_model(model, &m.name))
            })
            .cloned()
            .ok_or_else(|| LlmError::ModelNotFound {
                backend: self.target.name(),
                model: model.to_string(),
                hint: "check the model id with `navi models`".into(),
            })
    }

    async fn image_input(&self, model: &str) -> Option<ImageInput> {
        // Images are about to be sent: asked now, not taken from what was
        // kept (a server restarted with its `--mmproj` takes them).
        if let Some(v) = self.fresh_props().await.and_then(|p| p.vision) {
            return Some(ImageInput {
                accepted: v,
                evidence: format!("its GET /props says modalities.vision: {v}"),
            });
        }
        let said = match self.models_json().await {
            Ok(data) => find_entry(&data, model).and_then(entry_images),
            Err(_) => None,
        };
        let said = match said {
            Some(s) => Some(s),
            None => self
                .lmstudio_entry(model)
                .await
                .as_ref()
                .and_then(entry_images),
        };
        said.map(|(accepted, evidence)| ImageInput { accepted, evidence })
    }

    async fn count_prompt(&self, req: &ChatRequest) -> Option<u64> {
        self.counted(req).await
    }

    async fn revalidate(&self, _model: &str) {
        self.check_kept().await;
    }

    async fn note_answer_reuse(&self, model: &str, reused: bool) {
        self.note_reuse(model, reused).await;
    }

    async fn rereads_answers(&self, model: &str) -> bool {
        self.rereads(model)
    }

    async fn warm(&self, req: &ChatRequest) {
        self.warm_cache(req).await;
    }

    async fn save_slot(&self, _model: &str, name: &str) {
        self.save_slot_as(name).await;
    }

    async fn restore_slot(&self, _model: &str, name: &str) -> Option<u32> {
        self.restore_slot_from(name).await
    }

    async fn model_traits(&self, model: &str) -> super::size::ModelTraits {
        let template_tools = self.server_props().await.and_then(|p| p.tools);
        let params = match super::size::params_from_name(model) {
            Some(n) => Some(n),
            None => match self.known_models_json().await {
                Ok(data) => {
                    find_entry(&data, model).and_then(|e| e.get("meta")?.get("n_params")?.as_u64())
                }
                Err(_) => None,
            },
        };
        super::size::ModelTraits {
            params,
            template_tools,
        }
    }
}

#[path = "openai_known.rs"]
mod known;
#[path = "openai_slots.rs"]
mod slots;
#[path = "openai_warm.rs"]
mod warm;

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::llm::{ImageData, ToolCall};

    #[test]
    fn body_shape() {
        let good = ToolCall {
            id: "c1".into(),
            name: "read".into(),
            arguments: json!({"p": 1}),
        };
        let bad = ToolCall {
            id: "c2".into(),
            name: "x".into(),
            arguments: Value::String("{oops".into()),
        };
        let mut asst = ChatMessage::assistant("");
        asst.set_tool_calls(vec![good.clone(), bad]);
        let mut user = ChatMessage::user("see");
        user.push_image(ImageData {
            mime: "image/png".into(),
            base64: "AAA=".into(),
        });
        let mut req =
            ChatRequest::new("m", vec![user, asst, ChatMessage::tool_result(&good, "ok")]);
        req.temperature = Some(0.25);
        req.num_ctx = Some(4096);
        req.keep_alive = Some("5m".into());
        let b = chat_body(&req, true, false);
        assert_eq!(b["stream_options"], json!({"include_usage": true}));
        assert_eq!(b["temperature"], json!(0.25));
        assert!(b.get("options").is_none() && b.get("keep_alive").is_none());
        assert!(b.get("tools").is_none() && b.get("think").is_none());
        assert!(
            chat_body(&req, false, false)
                .get("stream_options")
                .is_none()
        );
        assert_eq!(
            b["messages"][0]["content"][1]["image_url"]["url"],
            json!("data:image/png;base64,AAA=")
        );
        let calls = &b["messages"][1]["tool_calls"];
        assert_eq!(calls[0]["function"]["arguments"], json!("{\"p\":1}"));
        assert_eq!(calls[1]["function"]["arguments"], json!("{oops"));
        assert_eq!(calls[0]["type"], json!("function"));
        assert_eq!(
            b["messages"][2],
            json!({"role":"tool","content":"ok","tool_call_id":"c1"})
        );
    }

    #[test]
    fn model_entries_from_various_servers() {
        let llama = json!({"id":"a.gguf","meta":{"n_ctx_train":8192}});
        let vllm = json!({"id":"b","max_model_len":32768});
        let router =
            json!({"id":"c","context_length":1000,"supported_parameters":["tools","reasoning"]});
        assert_eq!(entry_info(&llama).unwrap().context_length, Some(8192));
        assert_eq!(entry_info(&vllm).unwrap().context_length, Some(32768));
        let c = entry_info(&router).unwrap();
        assert_eq!(c.capabilities, vec!["tools", "thinking"]);
        assert!(entry_info(&json!({"object":"model"})).is_none());
    }
}
