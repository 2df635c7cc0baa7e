//! Images on a user message need a model that takes them.
//!
//! Before a turn: when the message carries images, the server is asked what
//! the chosen model takes ([`LlmBackend::image_input`]: Ollama `/api/show`
//! capabilities; llama-server `/props` and `/v1/models`; LM Studio
//! `/api/v0/models`). A model known to take only text is refused with the
//! reason, before anything is stored or sent.
//!
//! After a refusal by the server (HTTP 4xx/5xx or a stream error that says
//! the image cannot be taken, [`LlmError::is_image_refusal`]): the images
//! leave the session's context copy (a short note takes their place; the
//! transcript keeps them), the model is remembered as text-only for this
//! process, and the error says so. The next message of the session works.
//!
//! Invariants: only a server that *says* the model takes no images is a
//! refusal before sending; when it says nothing (or cannot be asked in
//! time) the message goes and the server decides. A refused message is
//! given back to the front end ([`AgentError::returns_input`]).
use super::{Agent, AgentError};
use crate::llm::{ChatMessage, LlmBackend, LlmError, Role};
use std::time::Duration;

/// How long the server may take to say what the model takes.
const ASK_TIMEOUT: Duration = Duration::from_secs(5);

fn key(backend: &dyn LlmBackend, model: &str) -> String {
    format!("{}\n{model}", backend.base_url())
}

/// `Err(NoVision)` when `msg` carries images and the profile's model is
/// known not to take them (the server says so, or refused an image before).
pub(super) async fn check(
    agent: &Agent,
    session: &super::Session,
    profile_id: &str,
    msg: &ChatMessage,
) -> Result<(), AgentError> {
    if !msg.has_images() {
        return Ok(());
    }
    let profile = agent
        .turn_tweaks(session)
        .apply(agent.profile(profile_id)?.clone());
    let backend = agent.backend_for(&profile)?;
    let Ok(sel) = agent.select_model(Some(session), &*backend, &profile).await else {
        return Ok(());
    };
    let refused_before = agent
        .text_only
        .lock()
        .is_ok_and(|s| s.contains(&key(&*backend, &sel.model)));
    let evidence = if refused_before {
        "the server refused an image for it earlier in this run".to_string()
    } else {
        match tokio::time::timeout(ASK_TIMEOUT, backend.image_input(&sel.model)).await {
            Ok(Some(i)) if !i.accepted => i.evidence,
            _ => return Ok(()),
        }
    };
    Err(AgentError::NoVision {
        model: sel.model,
        server: backend.base_url().to_string(),
        evidence,
    })
}

/// A turn of `session_id` failed with `e`. When the server refused an image,
/// the session's context copy loses its images (the next message would be
/// refused the same way otherwise) and the error becomes
/// [`AgentError::ImageRefused`]; any other error is returned as it is.
pub(super) async fn after_error(
    agent: &Agent,
    session: &super::Session,
    profile_id: &str,
    e: AgentError,
) -> AgentError {
    let session_id = session.id();
    let AgentError::Llm(llm) = &e else {
        return e;
    };
    if !llm.is_image_refusal() {
        return e;
    }
    // Whether the user's own message carried the images (read before they go).
    let from_user = agent
        .store
        .load(session_id)
        .ok()
        .flatten()
        .and_then(|s| {
            s.display
                .iter()
                .rev()
                .find(|m| m.msg.role == Role::User)
                .map(|m| m.msg.has_images())
        })
        .unwrap_or(false);
    let dropped = match agent.store.drop_context_images(session_id) {
        Ok(n) => n,
        Err(err) => {
            tracing::warn!("cannot take the refused images out of session {session_id}: {err}");
            0
        }
    };
    if dropped == 0 {
        // No image was in the request: the server's words meant something else.
        return e;
    }
    let Ok(profile) = agent
        .profile(profile_id)
        .map(|p| agent.turn_tweaks(session).apply(p.clone()))
    else {
        return e;
    };
    let Ok(backend) = agent.backend_for(&profile) else {
        return e;
    };
    let model = match agent.select_model(Some(session), &*backend, &profile).await {
        Ok(sel) => sel.model,
        Err(_) => return e,
    };
    if let Ok(mut s) = agent.text_only.lock() {
        s.insert(key(&*backend, &model));
    }
    AgentError::ImageRefused {
        model,
        server: backend.base_url().to_string(),
        reason: reason(llm),
        from_user,
    }
}

/// The server's own words, without the "rejected the request" framing.
fn reason(e: &LlmError) -> String {
    match e {
        LlmError::Rejected {
            status, message, ..
        } => format!("HTTP {status}: {message}"),
        LlmError::Server { status, body, .. } => format!("HTTP {status}: {body}"),
        other => other.to_string(),
    }
}
