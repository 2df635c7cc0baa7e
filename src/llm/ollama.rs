//! Placeholder: replaced by the real backend.
use super::{ChatRequest, ChunkStream, LlmBackend, LlmError, ModelInfo};
use crate::config::BackendKind;

pub struct OllamaBackend {
    base: String,
}

impl OllamaBackend {
    pub fn new(base: &str) -> Result<Self, LlmError> {
        Ok(OllamaBackend {
            base: base.trim_end_matches('/').to_string(),
        })
    }
}

#[async_trait::async_trait]
impl LlmBackend for OllamaBackend {
    fn kind(&self) -> BackendKind {
        BackendKind::Ollama
    }
    fn base_url(&self) -> &str {
        &self.base
    }
    async fn stream_chat(&self, _req: &ChatRequest) -> Result<ChunkStream, LlmError> {
        Err(LlmError::Protocol {
            backend: "ollama".into(),
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
