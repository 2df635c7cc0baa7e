//! Submissions: the one way a front end acts on a session (a new turn, a
//! steer, a stop, an approval answer), as [`crate::protocol::Submission`]s.
//!
//! Invariant: a stop is cooperative. It cancels the running turn's token;
//! the turn winds down and saves what it has. Nothing is aborted.
use super::{App, RunHandle};
use crate::agent::AgentError;
use crate::protocol::{AgentEvent, CompactMode, EventSink, Submission};
use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// The cancel tokens of the turns running now, by session.
#[derive(Default)]
pub struct Runs {
    next: AtomicU64,
    by_session: Mutex<HashMap<String, (u64, CancellationToken)>>,
}

/// Keeps a turn listed while it runs; dropping it (the turn ended) removes
/// the entry unless a newer turn of the session replaced it.
pub struct RunGuard {
    runs: std::sync::Arc<Runs>,
    session: String,
    seq: u64,
}

impl Runs {
    pub fn register(
        self: &std::sync::Arc<Self>,
        session: &str,
        cancel: CancellationToken,
    ) -> RunGuard {
        let seq = self.next.fetch_add(1, Ordering::Relaxed);
        if let Ok(mut m) = self.by_session.lock() {
            m.insert(session.to_string(), (seq, cancel));
        }
        RunGuard {
            runs: self.clone(),
            session: session.to_string(),
            seq,
        }
    }

    /// Cancels the turn running on `session`; false when none runs.
    pub fn stop(&self, session: &str) -> bool {
        let token = self
            .by_session
            .lock()
            .ok()
            .and_then(|m| m.get(session).map(|(_, c)| c.clone()));
        match token {
            Some(c) => {
                c.cancel();
                true
            }
            None => false,
        }
    }

    /// Whether a turn runs on `session`.
    pub fn is_running(&self, session: &str) -> bool {
        self.by_session
            .lock()
            .is_ok_and(|m| m.contains_key(session))
    }
}

impl Drop for RunGuard {
    fn drop(&mut self) {
        if let Ok(mut m) = self.runs.by_session.lock()
            && m.get(&self.session).is_some_and(|(s, _)| *s == self.seq)
        {
            m.remove(&self.session);
        }
    }
}

/// A running compaction: its events, its stop, and (messages before,
/// messages after) when it ends.
pub struct CompactionHandle {
    pub events: mpsc::Receiver<AgentEvent>,
    pub cancel: CancellationToken,
    pub task: JoinHandle<Result<(usize, usize), AgentError>>,
}

/// What a submission started.
pub enum Started {
    Turn(RunHandle),
    Compaction(CompactionHandle),
}

impl App {
    /// Sends `sub` to `session_id`. A user message starts a turn and
    /// `/compact` a compaction, and their handle is returned; a steer, a stop
    /// or an approval answer acts on what runs and returns `None`.
    pub fn submit(&self, session_id: &str, sub: Submission) -> Option<Started> {
        match sub {
            Submission::UserMessage(text) => {
                Some(Started::Turn(self.start_turn(session_id, &text)))
            }
            Submission::Compact(mode) => {
                Some(Started::Compaction(self.start_compaction(session_id, mode)))
            }
            Submission::Steer(text) => {
                self.agent.steers.push(session_id, &text);
                None
            }
            Submission::Stop => {
                self.runs.stop(session_id);
                None
            }
            Submission::Approval { id, decision } => {
                self.agent.gate.answer(&id, decision);
                None
            }
        }
    }

    /// Starts `/compact` on its own task; a [`Submission::Stop`] (or the
    /// handle's token) stops it with nothing changed. When there was nothing
    /// to compact, a `context_compressed` event with equal counts says so.
    pub fn start_compaction(&self, session_id: &str, mode: CompactMode) -> CompactionHandle {
        spawn_compaction(&self.agent, &self.runs, session_id, mode)
    }
}

/// Starts a compaction on its own task, listed in `runs` while it runs.
pub(crate) fn spawn_compaction(
    agent: &std::sync::Arc<crate::agent::Agent>,
    runs: &std::sync::Arc<Runs>,
    session_id: &str,
    mode: CompactMode,
) -> CompactionHandle {
    let (sink, events) = EventSink::channel(64);
    let cancel = CancellationToken::new();
    let agent = agent.clone();
    let (sid, c) = (session_id.to_string(), cancel.clone());
    let listed = runs.register(session_id, cancel.clone());
    let task = tokio::spawn(async move {
        let _listed = listed;
        let r = match agent.compact_mode(&sid, mode, &sink, &c).await {
            // Not a failure and not a compaction: say why, change nothing.
            Err(e @ crate::agent::AgentError::NothingSaved { .. }) => {
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
            let acc = agent.context_account(&sid).unwrap_or_default();
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
    });
    CompactionHandle {
        events,
        cancel,
        task,
    }
}
