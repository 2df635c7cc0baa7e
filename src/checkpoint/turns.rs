//! The checkpoint state of one open session (owned by it): the snapshot running in the
//! background, the turn in progress, the times its tools ran.
//!
//! A turn whose writing tools all name their paths (`filesystem` writes:
//! see [`super::named`]) is recorded from those paths alone, in an index of
//! its own: it never waits for a snapshot of the whole workspace. The first
//! writing call that may change anything (a command, a user or MCP tool, a
//! subagent) makes the turn a whole one: it waits for a whole snapshot, and
//! the paths recorded so far keep what they held before the turn.
//!
//! Invariants: at most one git works on a session's index at a time (a
//! snapshot is started only when none runs; the end of a whole turn waits
//! for a running one; the turn's own index is used by one call at a time);
//! a whole turn's "before" tree is a snapshot started after the turn began
//! (or the session's first one, when it was still running then) and
//! finished before its first writing tool that may change anything ran,
//! with the paths earlier tools of the turn named as they were before them;
//! no turn waits for a first snapshot that hashes more than
//! `prepare::WAIT_LIMIT` files.
use super::gate::{DEFER, Gate};
use super::may_write;
use super::prepare::{self, Outcome, Phase, Place};
use crate::llm::ToolCall;
use crate::protocol::AgentEvent;
use crate::session::SessionStore;
use std::sync::{Arc, Mutex};
use std::time::SystemTime;
use tokio::sync::watch;

struct Job {
    rx: watch::Receiver<Phase>,
    /// The turn it was started for (`None`: at the session's start).
    for_turn: Option<u64>,
    /// Holds the snapshot back a moment (`gate.rs`).
    gate: Arc<Gate>,
    /// Started by a turn (not at the session's start, whose snapshot later
    /// turns of a big workspace wait for).
    by_turn: bool,
}

impl Job {
    fn done(&self) -> bool {
        matches!(*self.rx.borrow(), Phase::Done(_))
    }
}

struct Turn {
    seq: u64,
    /// The turn's number among the user's messages.
    number: usize,
    message: String,
    before: Option<String>,
    /// Recorded from these paths alone (while `whole` is false).
    named: Option<Vec<Vec<u8>>>,
    /// Recorded whole: `before` is a tree of the whole workspace.
    whole: bool,
    /// No checkpoint this turn (already said why).
    failed: bool,
    /// When tools ran: (start, end).
    windows: Vec<(SystemTime, SystemTime)>,
}

#[derive(Default)]
struct State {
    place: Option<Place>,
    job: Option<Job>,
    turn: Option<Turn>,
    /// Checkpoints are off for this workspace: why.
    off: Option<String>,
    seq: u64,
}

/// One session's checkpoint state.
#[derive(Default)]
pub struct Checkpoints {
    state: Mutex<State>,
    /// Held while the turn's own index is worked on.
    paths: tokio::sync::Mutex<()>,
}

/// While a tool batch runs; dropped when it ends, which records the time.
pub(crate) struct ToolWindow<'a> {
    owner: &'a Checkpoints,
    start: SystemTime,
    /// A warning to show before the tools run.
    pub(crate) warning: Option<String>,
}

impl Drop for ToolWindow<'_> {
    fn drop(&mut self) {
        if let Ok(mut st) = self.owner.state.lock()
            && let Some(t) = st.turn.as_mut()
        {
            t.windows.push((self.start, SystemTime::now()));
        }
    }
}

fn start_job(st: &mut State, session: &str, for_turn: Option<u64>) {
    let Some(place) = st.place.clone() else {
        return;
    };
    let (tx, rx) = watch::channel(Phase::Counting);
    let sid = session.to_string();
    let gate = Gate::new();
    let held = gate.clone();
    let spawned = std::thread::Builder::new()
        .name("navi-checkpoint".into())
        .spawn(move || {
            if !held.wait(DEFER) {
                let skipped = "the turn ran no writing tool".to_string();
                tx.send_replace(Phase::Done(Outcome::Failed(skipped)));
                return;
            }
            let out = prepare::run(&place, &sid, &tx);
            tx.send_replace(Phase::Done(out));
        });
    if let Err(e) = spawned {
        let (tx, rx) = watch::channel(Phase::Done(Outcome::Failed(format!(
            "cannot start a thread: {e}"
        ))));
        drop(tx);
        st.job = Some(Job {
            rx,
            for_turn,
            gate,
            by_turn: for_turn.is_some(),
        });
        return;
    }
    st.job = Some(Job {
        rx,
        for_turn,
        gate,
        by_turn: for_turn.is_some(),
    });
}

/// What `before_tools` does next, decided under the lock.
enum Step {
    Return(Option<String>),
    Wait(watch::Receiver<Phase>),
    /// A whole snapshot came for a turn recorded from paths so far.
    Overlay(Overlay),
}

struct Overlay {
    current: String,
    before: String,
    named: Vec<Vec<u8>>,
    note: Option<String>,
}

impl Checkpoints {
    /// The session opened: its first snapshot starts in the background.
    pub(crate) fn warm(&self, session: &str, place: Place) {
        let Ok(mut guard) = self.state.lock() else {
            return;
        };
        let st = &mut *guard;
        if st.place.as_ref() != Some(&place) {
            *st = State::default();
            st.place = Some(place);
        }
        if st.off.is_none() && st.job.is_none() {
            start_job(st, session, None);
        }
    }

    /// A turn of `session` starts (its user message is number `number`):
    /// the snapshot of how the workspace is now starts in the background.
    pub(crate) fn begin(&self, session: &str, number: usize, message: String, place: Place) {
        let Ok(mut guard) = self.state.lock() else {
            return;
        };
        let st = &mut *guard;
        if st.place.as_ref() != Some(&place) {
            *st = State::default();
            st.place = Some(place);
        }
        st.seq += 1;
        st.turn = Some(Turn {
            seq: st.seq,
            number,
            message,
            before: None,
            named: None,
            whole: false,
            failed: false,
            windows: Vec::new(),
        });
        if st.off.is_some() {
            return;
        }
        let seq = st.seq;
        match st.job.as_mut() {
            // The session's first snapshot, still running, serves its first
            // turn: it finishes before any tool of the turn runs.
            Some(job) if !job.done() && job.for_turn.is_none() => job.for_turn = Some(seq),
            Some(job) if !job.done() => {}
            _ => start_job(st, session, Some(seq)),
        }
    }

    /// Before a tool batch: the turn's "before" tree once, when a call may
    /// write. The returned window records when the tools ran; its warning
    /// (a checkpoint that could not be taken) is shown before they run.
    pub(crate) async fn before_tools(&self, session: &str, calls: &[ToolCall]) -> ToolWindow<'_> {
        let writing: Vec<&ToolCall> = calls.iter().filter(|c| may_write(c)).collect();
        let warning = if writing.is_empty() {
            None
        } else {
            self.prepare(session, &writing).await
        };
        ToolWindow {
            owner: self,
            start: SystemTime::now(),
            warning,
        }
    }

    /// The turn's "before" for these writing calls: from the paths they
    /// name, or whole.
    async fn prepare(&self, session: &str, writing: &[&ToolCall]) -> Option<String> {
        let _one = self.paths.lock().await;
        let (place, named, whole) = {
            let st = self.state.lock().ok()?;
            let t = st.turn.as_ref().filter(|t| !t.failed)?;
            (st.place.clone()?, t.named.clone(), t.whole)
        };
        if whole {
            return None;
        }
        let Some(paths) = super::named::paths(writing, &place.workspace) else {
            return self.establish(session).await;
        };
        let earlier = named.clone().unwrap_or_default();
        let new = super::named::uncovered(&earlier, &paths);
        if named.is_some() && new.is_empty() {
            return None;
        }
        let (sid, fresh) = (session.to_string(), named.is_none());
        let keep = earlier.clone();
        let add = new.clone();
        let done = tokio::task::spawn_blocking(move || {
            place
                .shadow(&sid)
                .and_then(|sh| sh.record_paths(&add, &keep, fresh))
        })
        .await
        .unwrap_or_else(|e| Err(format!("checkpoint task failed: {e}")));
        match done {
            // Nothing ran yet: the whole workspace instead.
            Err(_) if fresh => self.establish(session).await,
            done => {
                let mut st = self.state.lock().ok()?;
                let t = st.turn.as_mut()?;
                match done {
                    Ok((tree, note)) => {
                        let mut all = earlier;
                        all.extend(new);
                        t.named = Some(all);
                        t.before = Some(tree);
                        note.map(incomplete)
                    }
                    Err(e) => {
                        t.failed = true;
                        Some(unavailable(&e))
                    }
                }
            }
        }
    }

    async fn establish(&self, session: &str) -> Option<String> {
        loop {
            let step = self.step(session);
            let mut rx = match step {
                Step::Return(w) => return w,
                Step::Overlay(o) => return self.overlay(session, o).await,
                Step::Wait(rx) => rx,
            };
            // A writing tool waits: the snapshot starts now.
            if let Ok(st) = self.state.lock()
                && let Some(job) = st.job.as_ref()
            {
                job.gate.open();
            }
            // The sender gone without a result: the thread died.
            if rx.changed().await.is_err() && !matches!(*rx.borrow(), Phase::Done(_)) {
                let mut st = self.state.lock().ok()?;
                let t = st.turn.as_mut()?;
                t.failed = true;
                return Some(unavailable("the checkpoint thread stopped"));
            }
        }
    }

    /// Turns a "before" of named paths into a whole one: the whole
    /// snapshot with those paths as they were before the turn's tools.
    async fn overlay(&self, session: &str, o: Overlay) -> Option<String> {
        let place = self.state.lock().ok()?.place.clone()?;
        let sid = session.to_string();
        let Overlay {
            current,
            before,
            named,
            note,
        } = o;
        let done = tokio::task::spawn_blocking(move || {
            place
                .shadow(&sid)
                .and_then(|sh| sh.overlay(&current, &before, &named))
        })
        .await
        .unwrap_or_else(|e| Err(format!("checkpoint task failed: {e}")));
        let mut st = self.state.lock().ok()?;
        let t = st.turn.as_mut()?;
        match done {
            Ok(tree) => {
                t.before = Some(tree);
                t.whole = true;
                note.map(incomplete)
            }
            Err(e) => {
                t.failed = true;
                Some(unavailable(&e))
            }
        }
    }

    fn step(&self, session: &str) -> Step {
        let Ok(mut guard) = self.state.lock() else {
            return Step::Return(None);
        };
        let st = &mut *guard;
        let Some(seq) = st
            .turn
            .as_ref()
            .filter(|t| !t.whole && !t.failed)
            .map(|t| t.seq)
        else {
            return Step::Return(None);
        };
        if let Some(off) = st.off.clone() {
            return fail(
                st,
                format!("{off}; this turn's changes cannot be listed or undone"),
            );
        }
        let Some(job) = st.job.as_ref() else {
            start_job(st, session, Some(seq));
            return self_wait(st);
        };
        let phase = job.rx.borrow().clone();
        let fresh = job.for_turn == Some(seq);
        match phase {
            Phase::Done(Outcome::Off(why)) => {
                st.off = Some(why.clone());
                fail(st, format!("{why}; this turn's changes cannot be listed or undone"))
            }
            Phase::Done(_) if !fresh => {
                start_job(st, session, Some(seq));
                self_wait(st)
            }
            Phase::Done(out) => match out {
                Outcome::Tree(tree, note) => {
                    let Some(t) = st.turn.as_mut() else {
                        return Step::Return(None);
                    };
                    if let (Some(named), Some(before)) = (t.named.clone(), t.before.clone()) {
                        return Step::Overlay(Overlay {
                            current: tree,
                            before,
                            named,
                            note,
                        });
                    }
                    t.before = Some(tree);
                    t.whole = true;
                    Step::Return(note.map(incomplete))
                }
                Outcome::Off(_) => Step::Return(None),
                Outcome::Busy => fail(
                    st,
                    "checkpoint skipped: another navi is still recording this workspace (its first checkpoint); this turn's changes cannot be listed or undone".into(),
                ),
                Outcome::Failed(e) => fail(st, unavailable(&e)),
            },
            Phase::Hashing { files, big: true } => fail(
                st,
                format!(
                    "checkpoint skipped: navi is recording this workspace for the first time ({} files, in the background); this turn's changes cannot be listed or undone",
                    prepare::thousands(files)
                ),
            ),
            _ => Step::Wait(job.rx.clone()),
        }
    }

    /// The turn ended: records what it changed. The event to show, or a
    /// warning when the second checkpoint failed.
    pub(crate) async fn end(&self, store: &SessionStore, session: &str) -> Option<AgentEvent> {
        let (turn, place, mut running) = {
            let mut guard = self.state.lock().ok()?;
            let st = &mut *guard;
            let turn = st.turn.take()?;
            // No writing tool ran: the snapshot held back for this turn
            // is not needed (one already running goes on).
            if turn.before.is_none()
                && let Some(job) = st.job.as_ref()
                && job.by_turn
                && job.for_turn == Some(turn.seq)
            {
                job.gate.cancel();
            }
            let running = st.job.as_ref().filter(|j| !j.done()).map(|j| j.rx.clone());
            (turn, st.place.clone()?, running)
        };
        let before = turn.before.clone()?;
        let _one = self.paths.lock().await;
        let named = turn.named.clone().filter(|_| !turn.whole);
        // Never two gits on one index (a turn recorded from its paths has
        // an index of its own).
        if let (Some(rx), None) = (running.as_mut(), &named) {
            while !matches!(*rx.borrow(), Phase::Done(_)) {
                if rx.changed().await.is_err() {
                    break;
                }
            }
        }
        let kept = super::load(store, session).len();
        let sid = session.to_string();
        let done = tokio::task::spawn_blocking(move || {
            super::record::after(&place, &sid, &turn.ended(), &before, named.as_deref(), kept)
        })
        .await
        .unwrap_or_else(|e| Err(format!("checkpoint task failed: {e}")));
        let (record, files) = match done {
            Ok(Some(r)) => r,
            Ok(None) => return None,
            Err(e) => {
                return Some(AgentEvent::Warning {
                    message: format!(
                        "checkpoint after the turn failed: {e}; /undo cannot restore this turn"
                    ),
                });
            }
        };
        let number = record.turn;
        let mut records = super::load(store, session);
        records.push(record);
        if let Err(e) = super::save(store, session, &records) {
            return Some(AgentEvent::Warning {
                message: format!("cannot save the checkpoint of this turn: {e}"),
            });
        }
        Some(AgentEvent::FilesChanged {
            turn: number,
            files,
        })
    }
}

/// What the turn's record needs from its state.
pub(crate) struct Ended<'a> {
    pub(crate) number: usize,
    pub(crate) message: &'a str,
    pub(crate) windows: &'a [(SystemTime, SystemTime)],
}

impl Turn {
    fn ended(&self) -> Ended<'_> {
        Ended {
            number: self.number,
            message: &self.message,
            windows: &self.windows,
        }
    }
}

fn incomplete(n: String) -> String {
    format!("checkpoint incomplete: some files could not be read ({n}); /undo cannot restore them")
}

fn unavailable(e: &str) -> String {
    format!("checkpoint unavailable: {e}; the files this turn changes cannot be listed or undone")
}

fn fail(st: &mut State, message: String) -> Step {
    if let Some(t) = st.turn.as_mut() {
        t.failed = true;
    }
    Step::Return(Some(message))
}

fn self_wait(st: &State) -> Step {
    match &st.job {
        Some(j) => Step::Wait(j.rx.clone()),
        None => Step::Return(None),
    }
}
