//! LLM layer: wire protocols only. Knows HTTP, NDJSON and SSE; never sees
//! sessions, tools or the UI.
//!
//! Both backends produce the same normalised [`ChatChunk`]s. Tool calls are only
//! ever emitted complete (OpenAI argument fragments are assembled by `index`).

pub mod anthropic;
pub(crate) mod catalog;
pub mod constrain;
pub(crate) mod decode;
pub(crate) mod descriptor;
pub mod endpoint;
pub(crate) mod error;
pub mod guard;
pub(crate) mod http;
pub(crate) mod llama;
pub mod message;
pub(crate) mod modalities;
pub mod ndjson;
pub mod ollama;
pub mod openai;
pub mod responses;
pub(crate) mod roles;
pub mod router;
pub mod scripted;
pub(crate) mod select;
pub(crate) mod server_cache;
pub mod size;
pub mod sse;
pub(crate) mod tokenize;
pub(crate) use crate::util::url_auth;

pub use crate::protocol::ModelInfo;
pub(crate) use descriptor::{BackendDescriptor, descriptor};
pub use error::LlmError;
pub use message::{Block, ChatMessage, FlatMessage, ImageData, Role, Thinking, ToolCall};

use crate::config::{BackendKind, Config, ThinkSetting};
use futures_util::Stream;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::pin::Pin;
use std::sync::Arc;

/// A tool definition as sent to the model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolSchema {
    pub name: String,
    pub description: String,
    /// JSON schema of the arguments object.
    pub parameters: Value,
}

impl ToolSchema {
    /// The `{"type": "function", "function": {…}}` form both wire protocols use.
    pub(crate) fn to_wire(&self) -> serde_json::Value {
        serde_json::json!({"type": "function", "function": {
            "name": self.name, "description": self.description, "parameters": self.parameters
        }})
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct ChatRequest {
    pub model: String,
    pub messages: Vec<ChatMessage>,
    /// Empty = the `tools` field is omitted.
    pub tools: Vec<ToolSchema>,
    pub temperature: Option<f64>,
    /// `None` = do not send `think` at all.
    pub think: Option<ThinkSetting>,
    pub num_ctx: Option<u32>,
    pub keep_alive: Option<String>,
    /// Cap on generated tokens (`max_tokens` / Ollama `options.num_predict`).
    pub(crate) max_tokens: Option<u32>,
    /// The answer must be one JSON value of this shape (constrained
    /// decoding, `constrain.rs`); `tools` are then not sent.
    pub constraint: Option<constrain::Constraint>,
    /// llama-server's slot for this request (`id_slot`): the one a saved
    /// session cache was restored into (`openai_slots.rs`).
    pub(crate) slot: Option<u32>,
}

impl ChatRequest {
    pub fn new(model: impl Into<String>, messages: Vec<ChatMessage>) -> Self {
        ChatRequest {
            model: model.into(),
            messages,
            tools: Vec::new(),
            temperature: None,
            think: None,
            num_ctx: None,
            keep_alive: None,
            max_tokens: None,
            constraint: None,
            slot: None,
        }
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// The whole prompt, cached parts included.
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    /// Of the prompt: tokens read from the server's prompt cache, where the
    /// server says (Anthropic `cache_read_input_tokens`, OpenAI
    /// `cached_tokens`).
    #[serde(default)]
    pub cache_read_tokens: u64,
    /// Of the prompt: tokens written to the prompt cache (Anthropic
    /// `cache_creation_input_tokens`).
    #[serde(default)]
    pub cache_write_tokens: u64,
}

/// One normalised piece of a streamed answer.
#[derive(Clone, Debug, PartialEq)]
pub enum ChatChunk {
    Thinking(String),
    Text(String),
    /// Complete calls, arguments parsed.
    ToolCalls(Vec<ToolCall>),
    /// A finished reasoning block with what the server needs to get it
    /// back (signature, encrypted payload, item id). Its text is exactly
    /// the `Thinking` pieces streamed for it before (the answer is shown
    /// from those); this block is what the answer's message keeps.
    Reasoning(Thinking),
    Usage(Usage),
    /// The stream ended normally (`done: true`, `finish_reason`, or `[DONE]`).
    Done {
        finish_reason: Option<String>,
    },
}

pub type ChunkStream = Pin<Box<dyn Stream<Item = Result<ChatChunk, LlmError>> + Send>>;

/// What a server says about a model taking images.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImageInput {
    /// The model takes images.
    pub accepted: bool,
    /// Where the server said so, for messages (e.g. "GET /props says
    /// modalities.vision is false").
    pub evidence: String,
}

/// Images from a capability list (Ollama `/api/show` style): `Some(true)`
/// with "vision", `Some(false)` when the list describes what the model
/// takes ("completion", "embedding") without "vision", `None` when it does
/// not tell (e.g. only "tools"): then the server decides.
pub(crate) fn vision_from_capabilities(caps: &[String]) -> Option<bool> {
    if caps.iter().any(|c| c == "vision") {
        return Some(true);
    }
    caps.iter()
        .any(|c| c == "completion" || c == "embedding")
        .then_some(false)
}

/// [`ImageInput`] from a capability list, where it tells.
pub(crate) fn image_input_from_capabilities(caps: &[String]) -> Option<ImageInput> {
    vision_from_capabilities(caps).map(|accepted| ImageInput {
        accepted,
        evidence: format!("it lists the capabilities: {}", caps.join(", ")),
    })
}

/// A chat backend. Implementations are cheap to clone-share (`Arc`) and reuse
/// one HTTP client (connection pooling).
#[async_trait::async_trait]
pub trait LlmBackend: Send + Sync {
    fn kind(&self) -> BackendKind;
    /// What the rest of Navi knows about this kind of backend (name in
    /// messages, address keys, how requests are sized).
    fn descriptor(&self) -> &'static BackendDescriptor {
        descriptor(self.kind())
    }
    fn base_url(&self) -> &str;
    /// What the rest of Navi knows about the backend that serves `model`
    /// (a router over providers answers per model).
    fn descriptor_for(&self, _model: &str) -> &'static BackendDescriptor {
        self.descriptor()
    }
    /// Where `model` is, for messages ("available on ollama").
    fn provider_of(&self, _model: &str) -> String {
        self.kind().as_str().to_string()
    }
    /// Sends the request; resolves once the response headers arrived. The
    /// returned stream yields chunks until `Done` or an error. Dropping it drops
    /// the HTTP body, which makes the server stop generating.
    async fn stream_chat(&self, req: &ChatRequest) -> Result<ChunkStream, LlmError>;
    async fn list_models(&self) -> Result<Vec<ModelInfo>, LlmError>;
    /// Each provider's models (or why it could not list them); a single
    /// server is one provider named by its kind.
    async fn list_by_provider(&self) -> Vec<(String, Result<Vec<ModelInfo>, LlmError>)> {
        vec![(self.kind().as_str().to_string(), self.list_models().await)]
    }
    /// The models to choose among for the priority list `wanted`: by
    /// default every model; a router asks only the providers `wanted`
    /// names.
    async fn find_models(&self, _wanted: &[String]) -> Result<Vec<ModelInfo>, LlmError> {
        self.list_models().await
    }
    /// Details of one model (context length, capabilities) where the server tells.
    async fn model_info(&self, model: &str) -> Result<ModelInfo, LlmError>;
    /// Whether `model` takes images, as far as the server says; `None` when
    /// it does not say (or cannot be asked): the request goes and the server
    /// decides. By default from [`model_info`](Self::model_info)'s
    /// capabilities ("vision").
    async fn image_input(&self, model: &str) -> Option<ImageInput> {
        let info = self.model_info(model).await.ok()?;
        image_input_from_capabilities(&info.capabilities)
    }

    /// The server's own count of the prompt `req` becomes (chat template and
    /// tool schemas applied), for servers that can count (llama-server's
    /// `/tokenize`); `None` for the others. Asked for lazily, when a figure
    /// is needed, never at start-up.
    async fn count_prompt(&self, _req: &ChatRequest) -> Option<u64> {
        None
    }

    /// After an answer: checks what is kept about the server of `model`
    /// when it is due (`server_cache.rs`); nothing for servers that keep
    /// nothing.
    async fn revalidate(&self, _model: &str) {}

    /// What the first call of a turn showed about the server's prompt
    /// cache: `reused` = it kept the previous answer. Servers that can
    /// lose it (llama-server with a sliding-window or recurrent model)
    /// remember the answer per model (`cache_warm.rs` in the agent).
    async fn note_answer_reuse(&self, _model: &str, _reused: bool) {}

    /// Whether the server was seen to re-read the previous answer on the
    /// next call for `model`, so re-sending the conversation after an
    /// answer ([`warm`](Self::warm)) saves the next turn that work.
    async fn rereads_answers(&self, _model: &str) -> bool {
        false
    }

    /// Sends `req` for its effect on the server's prompt cache only (one
    /// generated token at most); the answer is dropped.
    async fn warm(&self, _req: &ChatRequest) {}

    /// Saves the server's cache of the conversation just answered under
    /// `name` where the server can (llama-server `--slot-save-path`).
    async fn save_slot(&self, _model: &str, _name: &str) {}

    /// Restores the cache saved under `name` into a slot the server has
    /// not used since it started (it was restarted); the slot to send the
    /// next request to, `None` when nothing was restored.
    async fn restore_slot(&self, _model: &str, _name: &str) -> Option<u32> {
        None
    }

    /// The model's size and whether the chat template renders tools, for
    /// the small-model path (`size.rs`). By default only the name tells.
    async fn model_traits(&self, model: &str) -> size::ModelTraits {
        size::ModelTraits {
            params: size::params_from_name(model),
            template_tools: None,
        }
    }
}

/// Builds the backend the configuration asks for: a [`router::Router`]
/// over its providers, bare model names going to the default one. No
/// network I/O happens here.
pub(crate) fn build_backend(config: &Config) -> Result<Arc<dyn LlmBackend>, LlmError> {
    Ok(Arc::new(router::Router::new(config)))
}
