//! Runs on a session: a turn or a compaction on its own task, its events
//! forwarded to the session's stream, then one `TurnEnded` saying how it
//! ended (with the steers it never took in).
//!
//! Invariants: the session is claimed ([`Session::begin`]) before the task
//! starts and released just before `TurnEnded` is sent, so a front end that
//! saw `TurnEnded` can start the next run; a stop is the run's token,
//! never an abort.
use super::handle::SessionHandle;
use crate::agent::{Agent, AgentError, Session, TurnOutcome};
use crate::llm::ChatMessage;
use crate::protocol::{AgentEvent, CompactMode, EventSink, OpError, SessionEvent, TurnEnd};
use std::future::Future;
use std::sync::Arc;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// What a run's task gives back.
enum Ran {
    Turn(Result<TurnOutcome, AgentError>),
    Compaction(Result<(usize, usize), AgentError>),
}

impl SessionHandle {
    /// Starts a turn with `msg`; [`OpError::Busy`] while something runs.
    pub(super) fn start_turn(&self, msg: ChatMessage, typed: String) -> Result<(), OpError> {
        let agent = self.agent.clone();
        self.start(1024, move |session, sink, cancel| async move {
            Ran::Turn(agent.run_turn(&session, msg, &typed, &sink, &cancel).await)
        })
    }

    /// Starts `/compact` in `mode`. When there was nothing to compact, a
    /// `context_compressed` event with equal counts says so; a plan that
    /// would save nothing is a notice, not a failure.
    pub(super) fn start_compaction(&self, mode: CompactMode) -> Result<(), OpError> {
        let agent = self.agent.clone();
        self.start(64, move |session, sink, cancel| async move {
            Ran::Compaction(compact(&agent, &session, mode, &sink, &cancel).await)
        })
    }

    fn start<F, Fut>(&self, capacity: usize, work: F) -> Result<(), OpError>
    where
        F: FnOnce(Arc<Session>, EventSink, CancellationToken) -> Fut,
        Fut: Future<Output = Ran> + Send + 'static,
    {
        let cancel = CancellationToken::new();
        self.session
            .begin(cancel.clone())
            .map_err(|_| OpError::Busy)?;
        let (sink, events) = EventSink::channel(capacity);
        let task = tokio::spawn(work(self.session.clone(), sink, cancel));
        let done = tokio::spawn(forward(self.session.clone(), events, task, self.tx.clone()));
        self.session.set_done(done);
        Ok(())
    }
}

async fn compact(
    agent: &Agent,
    session: &Session,
    mode: CompactMode,
    sink: &EventSink,
    cancel: &CancellationToken,
) -> Result<(usize, usize), AgentError> {
    let r = match agent.compact_mode(session, mode, sink, cancel).await {
        // Not a failure and not a compaction: say why, change nothing.
        Err(e @ AgentError::NothingSaved { .. }) => {
            sink.emit(AgentEvent::Notice {
                message: e.to_string(),
            })
            .await;
            return Ok((0, 0));
        }
        r => r,
    };
    if let Ok((before, after)) = &r
        && before == after
    {
        let acc = agent.context_account(session.id()).unwrap_or_default();
        sink.emit(AgentEvent::ContextCompressed {
            messages_before: *before,
            messages_after: *after,
            tokens_before: acc.used,
            tokens_after: acc.used,
            max_context_tokens: acc.window,
        })
        .await;
    }
    r
}

/// Forwards what the run sends to the session's stream, then how it ended.
async fn forward(
    session: Arc<Session>,
    mut events: mpsc::Receiver<AgentEvent>,
    task: tokio::task::JoinHandle<Ran>,
    tx: mpsc::Sender<SessionEvent>,
) {
    let mut refused = false;
    while let Some(event) = events.recv().await {
        refused |= matches!(event, AgentEvent::InputReturned);
        let _ = tx.send(SessionEvent::Agent { event }).await;
    }
    let end = match task.await {
        Ok(Ran::Turn(Ok(o))) if o.stopped => TurnEnd::Stopped,
        Ok(Ran::Turn(Ok(o))) => TurnEnd::Done {
            completed: o.completed,
        },
        Ok(Ran::Turn(Err(e))) => end_of(e, refused),
        Ok(Ran::Compaction(Ok(_))) => TurnEnd::Done { completed: true },
        Ok(Ran::Compaction(Err(e))) => match end_of(e, false) {
            TurnEnd::Failed { message, unreached } => {
                // Said once, the same for every front end.
                let event = AgentEvent::Error {
                    message: format!("compaction failed: {message}"),
                };
                let _ = tx.send(SessionEvent::Agent { event }).await;
                TurnEnd::Failed { message, unreached }
            }
            other => other,
        },
        Err(e) => TurnEnd::Failed {
            message: format!("the run's task failed: {e}"),
            unreached: false,
        },
    };
    // Steers the run never took in go back with its end.
    let steers = session.take_steers();
    session.end();
    let _ = tx.send(SessionEvent::TurnEnded { end, steers }).await;
}

fn end_of(e: AgentError, refused: bool) -> TurnEnd {
    if refused || e.returns_input() {
        TurnEnd::Refused {
            message: e.to_string(),
        }
    } else if e.is_cancelled() {
        TurnEnd::Stopped
    } else {
        TurnEnd::Failed {
            unreached: e.reached_no_model(),
            message: e.to_string(),
        }
    }
}
