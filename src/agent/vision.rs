//! Images on a user message need a model that takes them. Before such a
//! message is stored, the server is asked what the chosen model can do
//! (Ollama `/api/show` capabilities; OpenAI-compatible servers where their
//! model list says); a model that is known not to take images is refused
//! with a clear error and nothing is sent or saved.
//!
//! Invariant: only a server that *lists* capabilities without "vision" is a
//! refusal; when the server says nothing (or cannot be asked in time) the
//! message goes as before and the server decides.
use super::{Agent, AgentError};
use crate::llm::ChatMessage;
use std::time::Duration;

/// `Err(NoVision)` when `msg` carries images and the profile's model is
/// known not to take them.
pub(super) async fn check(
    agent: &Agent,
    profile_id: &str,
    msg: &ChatMessage,
) -> Result<(), AgentError> {
    if msg.images.is_empty() {
        return Ok(());
    }
    let profile = agent
        .turn_tweaks()
        .apply(agent.profile(profile_id)?.clone());
    let backend = agent.backend_for(&profile)?;
    let Ok(sel) = agent.select_model(&*backend, &profile).await else {
        return Ok(());
    };
    let info = tokio::time::timeout(Duration::from_secs(5), backend.model_info(&sel.model)).await;
    match info {
        Ok(Ok(i))
            if !i.capabilities.is_empty() && !i.capabilities.iter().any(|c| c == "vision") =>
        {
            Err(AgentError::NoVision {
                model: sel.model,
                capabilities: i.capabilities.join(", "),
            })
        }
        _ => Ok(()),
    }
}
