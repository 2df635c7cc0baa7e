//! Placeholder: replaced by the real backend.
use super::{ChatRequest, ChunkStream, LlmBackend, LlmError, ModelInfo};
use crate::config::BackendKind;

pub struct OpenAiBackend {
    base: String,
}

impl OpenAiBackend {
    pub fn new(base: &str, _key: &str) -> Result<Self, LlmError> {
        Ok(OpenAiBackend {
            base: base.trim_end_matches('/').to_string(),
        })
    }
}

#[async_trait::async_trait]
impl LlmBackend for OpenAiBackend {
    fn kind(&self) -> BackendKind {
        BackendKind::Openai
    }
    fn base_url(&self) -> &str {
        &self.base
    }
    async fn stream_chat(&self, _req: &ChatRequest) -> Result<ChunkStream, LlmError> {
        Err(LlmError::Protocol {
            backend: "openai".into(),
            message: "not built yet".into(),
        })
    }
    async fn list_models(&self) -> Result<Vec<ModelInfo>, LlmError> {
        Ok(Vec::new())
    }
    async fn model_info(&self, model: &str) -> Result<ModelInfo, LlmError> {
        Ok(ModelInfo {
            name: model.into(),
            ..Default::default()
        })
    }
}
