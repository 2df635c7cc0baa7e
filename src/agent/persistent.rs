//! A turn of a stored session: the user's message checked (an image the
//! model cannot take is refused before anything is stored), the session
//! stored if it was pending, the turn run, and a failure recorded where the
//! user sees it.
use super::conversation::Conversation;
use super::turn::Run;
use super::{Agent, AgentError, Session, TurnOutcome};
use crate::llm::ChatMessage;
use crate::protocol::{AgentEvent, EventSink};
use crate::session::MessageKind;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

pub(super) async fn run_persistent(
    agent: &Agent,
    session: &Arc<Session>,
    user_message: ChatMessage,
    typed: &str,
    sink: &EventSink,
    cancel: &CancellationToken,
) -> Result<TurnOutcome, AgentError> {
    let session_id = session.id();
    // An image the model cannot take is refused before anything is stored
    // or sent (a pending session stays pending): see `vision.rs`.
    let profile_id = session
        .meta()
        .ok_or_else(|| AgentError::NoSession(session_id.to_string()))?
        .profile_id;
    if let Err(e) = super::vision::check(agent, session, &profile_id, &user_message).await {
        sink.emit(AgentEvent::StreamStart {
            session_id: session_id.to_string(),
        })
        .await;
        emit_error(sink, &e).await;
        return Err(e);
    }
    // One writer per session: a turn runs only in the navi holding the
    // session's lock. A pending session (nothing sent yet) gets its row
    // and lock now.
    session.materialize()?;
    // Meta and context only: the display buffer is the front end's business.
    let loaded = session
        .with_lock(|l| agent.store.load_for_turn(l))
        .transpose()?
        .flatten()
        .ok_or_else(|| AgentError::NoSession(session_id.to_string()))?;
    let first_message = !loaded.has_user_message;
    sink.emit(AgentEvent::StreamStart {
        session_id: session_id.to_string(),
    })
    .await;
    // Checkpoints (src/checkpoint): this turn's number and user message.
    let earlier_turns = agent.store.turn_count(session_id)?;
    let mut conv = Conversation::persistent(agent.store.clone(), session_id, loaded.context);
    conv.push(user_message, MessageKind::Message, None)?;
    crate::checkpoint::TurnStart {
        config: &agent.env.config,
        paths: &agent.env.paths,
        checkpoints: session.checkpoints(),
        session: session_id,
        work_dir: session.work_dir(),
    }
    .begin(earlier_turns, conv.context.last());
    let result = async {
        let profile = agent
            .turn_tweaks(session)
            .apply(agent.profile(&loaded.meta.profile_id)?.clone());
        let mut run = Run::start(
            agent,
            profile,
            conv,
            sink,
            cancel,
            None,
            session.clone(),
            loaded.meta.context_token_count,
        )
        .await?;
        run.typed = Some(typed.to_string());
        run.resume_slot().await;
        let out = run.execute(first_message).await;
        if out.as_ref().is_ok_and(|o| !o.stopped) {
            run.after_answer_cache().await;
        }
        // After the answer: check what is kept about the server when due.
        let (backend, model) = (run.backend.clone(), run.model.clone());
        crate::llm::server_cache::spawn_check(async move { backend.revalidate(&model).await });
        out
    }
    .await;
    let result = match result {
        Err(e) => Err(super::vision::after_error(agent, session, &loaded.meta.profile_id, e).await),
        ok => ok,
    };
    if let Err(e) = &result {
        emit_error(sink, e).await;
        // The failed turn is closed in the context, so the next message
        // is not glued to the unanswered one (`integrity.rs`).
        let context = session
            .with_lock(|l| agent.store.load_for_turn(l))
            .and_then(|r| r.ok().flatten())
            .map(|l| l.context)
            .unwrap_or_default();
        let mut notice = Conversation::persistent(agent.store.clone(), session_id, context);
        if let Err(err) = notice.close_turn(&super::integrity::failed(&e.to_string())) {
            tracing::warn!("cannot close the failed turn of session {session_id}: {err}");
        }
        let _ = notice.push_display_only(ChatMessage::system(e.to_string()), MessageKind::Error);
        // Checkpoints: what the failed turn changed before it failed.
        crate::checkpoint::end_turn(session.checkpoints(), &agent.store, session_id, sink).await;
    }
    result
}

/// A failed turn's error; a refused message first goes back to the user
/// (`InputReturned`: the front end restores the text and attachments).
async fn emit_error(sink: &EventSink, e: &AgentError) {
    if e.returns_input() {
        sink.emit(AgentEvent::InputReturned).await;
    }
    sink.emit(AgentEvent::Error {
        message: e.to_string(),
    })
    .await;
}
