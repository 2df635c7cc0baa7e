//! Submissions: the one way a front end acts on a session (a new turn, a
//! steer, a stop, an approval answer), as [`crate::protocol::Submission`]s.
//!
//! Invariant: a stop is cooperative. It cancels the running turn's token;
//! the turn winds down and saves what it has. Nothing is aborted.
use super::{App, RunHandle};
use crate::protocol::Submission;
use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
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

impl App {
    /// Sends `sub` to `session_id`. A user message starts a turn and returns
    /// its handle; a steer, a stop or an approval answer acts on the turn
    /// that runs and returns `None`.
    pub fn submit(&self, session_id: &str, sub: Submission) -> Option<RunHandle> {
        match sub {
            Submission::UserMessage(text) => Some(self.start_turn(session_id, &text)),
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
}
