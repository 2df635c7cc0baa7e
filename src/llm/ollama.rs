//! Ollama's native API: `POST /api/chat` (NDJSON stream), `GET /api/tags`,
//! `POST /api/show`.
//!
//! Invariants:
//! - One `reqwest::Client` per backend, built in `new` (no network I/O there).
//! - Fields the request does not set are not sent (`think`, `tools`,
//!   `options.*`, `keep_alive`).
//! - When Ollama answers 400 "… does not support thinking|tools", the request
//!   is retried once without that field and the model is remembered, so later
//!   requests for it leave the field out from the start.
//! - Dropping the returned stream drops the HTTP body; the server stops.
//! - Message history: `thinking` is not sent back; assistant tool calls carry
//!   their arguments as an object (a call whose arguments were not valid JSON
//!   is sent back with `{}`, since Ollama only accepts objects); tool results
//!   are paired by `tool_name` (and `tool_call_id`, which newer servers read).

use super::descriptor::BackendDescriptor;
use super::endpoint::Endpoint;
use super::http::{self, HttpFailure, Target};
use super::ndjson::decode_ndjson;
use super::{
    ChatMessage, ChatRequest, ChunkStream, LlmBackend, LlmError, ModelInfo, Role, ToolSchema,
};
use crate::config::BackendKind;
use futures_util::TryStreamExt;
use serde_json::{Map, Value, json};
use std::collections::HashSet;
use std::sync::Arc;
use std::sync::Mutex;

pub struct OllamaBackend {
    target: Target,
    client: reqwest::Client,
    /// No connection reuse: for the one retry after a stale connection.
    fresh: reqwest::Client,
    /// Models that answered "does not support thinking".
    no_think: Mutex<HashSet<String>>,
    /// Models that answered "does not support tools".
    no_tools: Mutex<HashSet<String>>,
}

/// Ollama: addressed by `OLLAMA_HOST` / `[llm].ollama_host`; it uses only
/// as much context as each request's `num_ctx` asks for.
pub(crate) static DESCRIPTOR: BackendDescriptor = BackendDescriptor {
    kind: BackendKind::Ollama,
    display_name: "Ollama",
    url_env: "OLLAMA_HOST",
    url_key: "ollama_host",
    unreachable_check: "is \"ollama serve\" running?",
    url_target: "the Ollama server",
    usual_base_suffix: None,
    missing_model_hint: |model| format!("pull it with \"ollama pull {model}\""),
    window_set_per_request: true,
    build: |e| Ok(Arc::new(OllamaBackend::from_endpoint(e)?)),
};

/// A capability Ollama can refuse with HTTP 400.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Unsupported {
    Thinking,
    Tools,
}

impl Unsupported {
    fn detect(f: &HttpFailure) -> Option<Self> {
        if f.status != 400 {
            return None;
        }
        let m = f.message.to_ascii_lowercase();
        if m.contains("does not support thinking") {
            Some(Unsupported::Thinking)
        } else if m.contains("does not support tools") {
            Some(Unsupported::Tools)
        } else {
            None
        }
    }
}

impl OllamaBackend {
    pub fn new(base: &str) -> Result<Self, LlmError> {
        Self::from_endpoint(&Endpoint::plain("ollama", base, ""))
    }

    /// The backend for `e` (a key, when given, goes as a bearer token:
    /// Ollama behind a proxy, or its cloud).
    pub(crate) fn from_endpoint(e: &Endpoint) -> Result<Self, LlmError> {
        let mut headers = e.header_map();
        if let Some(v) = e
            .key()
            .and_then(|k| reqwest::header::HeaderValue::from_str(&format!("Bearer {k}")).ok())
        {
            headers.insert(reqwest::header::AUTHORIZATION, v);
        }
        let (base, client, fresh) = http::clients(&e.base_url, headers)?;
        Ok(OllamaBackend {
            client,
            fresh,
            target: Target::of(&DESCRIPTOR, base, e),
            no_think: Mutex::new(HashSet::new()),
            no_tools: Mutex::new(HashSet::new()),
        })
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.target.base)
    }

    fn remembered(&self, set: &Mutex<HashSet<String>>, model: &str) -> bool {
        set.lock().map(|s| s.contains(model)).unwrap_or(false)
    }

    fn remember(&self, what: Unsupported, model: &str) {
        let set = match what {
            Unsupported::Thinking => &self.no_think,
            Unsupported::Tools => &self.no_tools,
        };
        if let Ok(mut s) = set.lock() {
            s.insert(model.to_string());
        }
    }

    async fn post(&self, path: &str, body: &Value) -> Result<reqwest::Response, LlmError> {
        let url = self.url(path);
        http::send_retrying_once(&self.target, &self.client, &self.fresh, |c| {
            c.post(&url).json(body)
        })
        .await
    }
}

/// The JSON body of a chat request. `think`/`tools` are left out when the
/// model is known not to support them.
pub(crate) fn chat_body(req: &ChatRequest, send_think: bool, send_tools: bool) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), json!(req.model));
    body.insert(
        "messages".into(),
        Value::Array(
            super::roles::normalize(&req.messages)
                .iter()
                .map(message)
                .collect(),
        ),
    );
    body.insert("stream".into(), json!(true));
    if send_tools && !req.tools.is_empty() {
        let tools = req.tools.iter().map(ToolSchema::to_wire).collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    if let Some(think) = req.think.as_ref().filter(|_| send_think) {
        body.insert("think".into(), json!(think));
    }
    let mut options = Map::new();
    if let Some(n) = req.num_ctx {
        options.insert("num_ctx".into(), json!(n));
    }
    if let Some(t) = req.temperature {
        options.insert("temperature".into(), json!(t));
    }
    if let Some(n) = req.max_tokens {
        options.insert("num_predict".into(), json!(n));
    }
    if !options.is_empty() {
        body.insert("options".into(), Value::Object(options));
    }
    if let Some(k) = &req.keep_alive {
        body.insert("keep_alive".into(), json!(k));
    }
    Value::Object(body)
}

fn message(m: &ChatMessage) -> Value {
    let mut o = Map::new();
    o.insert("role".into(), json!(m.role.as_str()));
    o.insert("content".into(), json!(m.text()));
    if m.has_images() {
        let images: Vec<&str> = m.images().map(|i| i.base64.as_str()).collect();
        o.insert("images".into(), json!(images));
    }
    if m.role == Role::Assistant && m.has_tool_calls() {
        let calls = m
            .tool_calls()
            .map(|c| {
                let arguments = match &c.arguments {
                    Value::Object(_) => c.arguments.clone(),
                    _ => Value::Object(Map::new()),
                };
                let mut call = json!({"function": {"name": c.name, "arguments": arguments}});
                if !c.id.is_empty() {
                    call["id"] = json!(c.id);
                }
                call
            })
            .collect();
        o.insert("tool_calls".into(), Value::Array(calls));
    }
    if m.role == Role::Tool {
        if let Some(name) = m.tool_name() {
            o.insert("tool_name".into(), json!(name));
        }
        if let Some(id) = m.tool_call_id() {
            o.insert("tool_call_id".into(), json!(id));
        }
    }
    Value::Object(o)
}

/// The models of an `/api/tags` list.
fn tag_infos(tags: &[Value]) -> Vec<ModelInfo> {
    tags.iter()
        .filter_map(|m| m.get("name").or_else(|| m.get("model"))?.as_str())
        .map(|name| ModelInfo {
            name: name.to_string(),
            ..Default::default()
        })
        .collect()
}

/// The first `*.context_length` number in `/api/show`'s `model_info`.
fn context_length(model_info: Option<&Value>) -> Option<u64> {
    model_info?
        .as_object()?
        .iter()
        .find(|(k, v)| k.ends_with(".context_length") && v.is_u64())
        .and_then(|(_, v)| v.as_u64())
}

#[async_trait::async_trait]
impl LlmBackend for OllamaBackend {
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
        let mut send_think = !self.remembered(&self.no_think, &req.model);
        let mut send_tools = !self.remembered(&self.no_tools, &req.model);
        loop {
            let mut body = chat_body(req, send_think, send_tools);
            if let Some(c) = &req.constraint {
                super::constrain::add_ollama(&mut body, c);
            }
            let resp = self.post("/api/chat", &body).await?;
            if resp.status().is_success() {
                let target = self.target.clone();
                let bytes = resp
                    .bytes_stream()
                    .map_err(move |e| http::body_error(&target, &e));
                return Ok(Box::pin(decode_ndjson(bytes)));
            }
            let failure = HttpFailure::read(resp).await;
            let retry = match Unsupported::detect(&failure) {
                Some(Unsupported::Thinking) if send_think && req.think.is_some() => {
                    send_think = false;
                    Some(Unsupported::Thinking)
                }
                Some(Unsupported::Tools) if send_tools && !req.tools.is_empty() => {
                    send_tools = false;
                    Some(Unsupported::Tools)
                }
                _ => None,
            };
            match retry {
                Some(what) => {
                    tracing::warn!(
                        model = %req.model,
                        "Ollama: {}; retrying without {what:?} and remembering it",
                        failure.message
                    );
                    self.remember(what, &req.model);
                }
                None => {
                    self.forget_kept();
                    return Err(failure.into_error(&self.target, Some(&req.model)));
                }
            }
        }
    }

    async fn list_models(&self) -> Result<Vec<ModelInfo>, LlmError> {
        Ok(tag_infos(&self.tags().await?))
    }

    async fn find_models(&self, _wanted: &[String]) -> Result<Vec<ModelInfo>, LlmError> {
        Ok(tag_infos(&self.known_tags().await?))
    }

    async fn revalidate(&self, _model: &str) {
        self.check_kept().await;
    }

    async fn model_info(&self, model: &str) -> Result<ModelInfo, LlmError> {
        self.info_of(model, false).await
    }

    async fn image_input(&self, model: &str) -> Option<super::ImageInput> {
        let info = self.info_of(model, true).await.ok()?;
        super::image_input_from_capabilities(&info.capabilities)
    }

    async fn model_traits(&self, model: &str) -> super::size::ModelTraits {
        let mut traits = super::size::ModelTraits {
            params: super::size::params_from_name(model),
            template_tools: None,
        };
        if traits.params.is_none()
            && let Ok(v) = self.show(model, false).await
        {
            traits.params = super::size::params_from_ollama_show(&v);
        }
        traits
    }
}

impl OllamaBackend {
    /// What `/api/show` says of `model` (kept, unless `fresh`).
    async fn info_of(&self, model: &str, fresh: bool) -> Result<ModelInfo, LlmError> {
        let v = self.show(model, fresh).await?;
        let capabilities = v
            .get("capabilities")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default();
        Ok(ModelInfo {
            name: model.to_string(),
            context_length: context_length(v.get("model_info")),
            capabilities,
        })
    }
}

#[path = "ollama_known.rs"]
mod known;

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::config::ThinkSetting;
    use crate::llm::{ImageData, ToolCall, ToolSchema};

    #[test]
    fn body_sends_only_what_is_set() {
        let req = ChatRequest::new("m", vec![ChatMessage::user("hi")]);
        let b = chat_body(&req, true, true);
        assert_eq!(
            b,
            json!({"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true})
        );
    }

    #[test]
    fn body_with_everything() {
        let call = ToolCall {
            id: "c1".into(),
            name: "read".into(),
            arguments: json!({"p": 1}),
        };
        let mut asst = ChatMessage::assistant("");
        asst.set_tool_calls(vec![call.clone()]);
        asst.set_thinking(Some("secret".into()));
        let mut user = ChatMessage::user("look");
        user.push_image(ImageData {
            mime: "image/png".into(),
            base64: "AAA=".into(),
        });
        let mut req =
            ChatRequest::new("m", vec![user, asst, ChatMessage::tool_result(&call, "ok")]);
        req.tools = vec![ToolSchema {
            name: "read".into(),
            description: "reads".into(),
            parameters: json!({"type":"object"}),
        }];
        req.think = Some(ThinkSetting::Level("high".into()));
        req.num_ctx = Some(4096);
        req.temperature = Some(0.5);
        req.keep_alive = Some("5m".into());
        let b = chat_body(&req, true, true);
        assert_eq!(b["think"], json!("high"));
        assert_eq!(b["options"], json!({"num_ctx":4096,"temperature":0.5}));
        assert_eq!(b["keep_alive"], json!("5m"));
        assert_eq!(b["tools"][0]["function"]["name"], json!("read"));
        assert_eq!(b["messages"][0]["images"], json!(["AAA="]));
        assert_eq!(
            b["messages"][1]["tool_calls"],
            json!([{"id":"c1","function":{"name":"read","arguments":{"p":1}}}])
        );
        assert!(b["messages"][1].get("thinking").is_none());
        assert_eq!(b["messages"][2]["tool_name"], json!("read"));
        let stripped = chat_body(&req, false, false);
        assert!(stripped.get("think").is_none() && stripped.get("tools").is_none());
    }

    #[test]
    fn context_length_key_is_found_for_any_arch() {
        let info = json!({"general.architecture":"gemma3","gemma3.context_length":131072});
        assert_eq!(context_length(Some(&info)), Some(131072));
        assert_eq!(context_length(Some(&json!({}))), None);
    }

    #[test]
    fn new_does_no_io_and_checks_the_url() {
        assert!(OllamaBackend::new("http://127.0.0.1:1").is_ok());
        assert!(matches!(
            OllamaBackend::new("ftp://x"),
            Err(LlmError::BadUrl { .. })
        ));
    }
}
