//! An in-process backend that replays scripted answers, for tests and
//! benchmarks of everything above the wire. No HTTP, no timing.
use super::{
    ChatChunk, ChatRequest, ChunkStream, LlmBackend, LlmError, ModelInfo, ToolCall, Usage,
};
use crate::config::BackendKind;
use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::Duration;

/// One scripted answer.
#[derive(Clone, Debug)]
pub enum Scripted {
    Chunks(Vec<ChatChunk>),
    /// Fails before any chunk.
    Fail(LlmError),
    /// Sends these chunks, then waits forever (until dropped/cancelled).
    ChunksThenHang(Vec<ChatChunk>),
}

pub struct ScriptedBackend {
    replies: Mutex<VecDeque<Scripted>>,
    requests: Mutex<Vec<ChatRequest>>,
    models: Vec<ModelInfo>,
    /// Answer used when the queue is empty (`None`: a fixed text).
    pub fallback: Option<Vec<ChatChunk>>,
    /// Delay before each chunk.
    pub(crate) delay: Option<Duration>,
    /// Keep recorded requests (off in benchmarks).
    pub record: bool,
}

impl Default for ScriptedBackend {
    fn default() -> Self {
        Self::new()
    }
}

/// Chunks of a plain text answer (split in a few pieces).
pub fn text_chunks(text: &str) -> Vec<ChatChunk> {
    let mut out: Vec<ChatChunk> = text
        .split_inclusive(' ')
        .map(|w| ChatChunk::Text(w.to_string()))
        .collect();
    out.push(ChatChunk::Usage(Usage {
        prompt_tokens: 0,
        completion_tokens: 0,
        ..Usage::default()
    }));
    out.push(ChatChunk::Done {
        finish_reason: Some("stop".into()),
    });
    out
}

impl ScriptedBackend {
    pub fn new() -> Self {
        ScriptedBackend {
            replies: Mutex::new(VecDeque::new()),
            requests: Mutex::new(Vec::new()),
            models: vec![ModelInfo {
                name: "test-model".into(),
                context_length: Some(32768),
                capabilities: vec![],
            }],
            fallback: None,
            delay: None,
            record: true,
        }
    }

    /// Sets the context length every model reports.
    pub fn with_context(mut self, tokens: u64) -> Self {
        for m in &mut self.models {
            m.context_length = Some(tokens);
        }
        self
    }

    pub fn push(&self, s: Scripted) {
        if let Ok(mut q) = self.replies.lock() {
            q.push_back(s);
        }
    }

    pub fn push_text(&self, text: &str) {
        self.push(Scripted::Chunks(text_chunks(text)));
    }

    pub fn push_thinking_text(&self, thinking: &str, text: &str) {
        let mut c = vec![ChatChunk::Thinking(thinking.to_string())];
        c.extend(text_chunks(text));
        self.push(Scripted::Chunks(c));
    }

    pub fn push_tool_calls(&self, calls: &[(&str, serde_json::Value)]) {
        let calls: Vec<ToolCall> = calls
            .iter()
            .enumerate()
            .map(|(i, (name, args))| ToolCall {
                id: format!("call_{i}"),
                name: name.to_string(),
                arguments: args.clone(),
            })
            .collect();
        self.push(Scripted::Chunks(vec![
            ChatChunk::ToolCalls(calls),
            ChatChunk::Done {
                finish_reason: Some("tool_calls".into()),
            },
        ]));
    }

    pub fn requests(&self) -> Vec<ChatRequest> {
        self.requests.lock().map(|r| r.clone()).unwrap_or_default()
    }

    pub fn pending(&self) -> usize {
        self.replies.lock().map(|q| q.len()).unwrap_or(0)
    }
}

#[async_trait::async_trait]
impl LlmBackend for ScriptedBackend {
    fn kind(&self) -> BackendKind {
        BackendKind::Ollama
    }

    fn base_url(&self) -> &str {
        "scripted://"
    }

    async fn stream_chat(&self, req: &ChatRequest) -> Result<ChunkStream, LlmError> {
        if self.record
            && let Ok(mut r) = self.requests.lock()
        {
            r.push(req.clone());
        }
        let next = self.replies.lock().ok().and_then(|mut q| q.pop_front());
        let (chunks, hang) = match next {
            Some(Scripted::Fail(e)) => return Err(e),
            Some(Scripted::Chunks(c)) => (c, false),
            Some(Scripted::ChunksThenHang(c)) => (c, true),
            None => (
                self.fallback
                    .clone()
                    .unwrap_or_else(|| text_chunks("(scripted: no reply)")),
                false,
            ),
        };
        let delay = self.delay;
        let s = futures_util::stream::unfold(
            (chunks.into_iter(), hang),
            move |(mut it, hang)| async move {
                if let Some(d) = delay {
                    tokio::time::sleep(d).await;
                }
                match it.next() {
                    Some(c) => Some((Ok(c), (it, hang))),
                    None if hang => {
                        std::future::pending::<()>().await;
                        None
                    }
                    None => None,
                }
            },
        );
        Ok(Box::pin(s))
    }

    async fn list_models(&self) -> Result<Vec<ModelInfo>, LlmError> {
        Ok(self.models.clone())
    }

    async fn model_info(&self, model: &str) -> Result<ModelInfo, LlmError> {
        Ok(self
            .models
            .iter()
            .find(|m| m.name == model)
            .cloned()
            .unwrap_or_else(|| ModelInfo {
                name: model.into(),
                ..Default::default()
            }))
    }
}
