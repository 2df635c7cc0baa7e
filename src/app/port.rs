//! A session handle seen as a series of runs, for front ends that show one
//! turn at a time (the TUI, plain mode): each message or compaction gets its
//! own event receiver that closes when the run ends, a token that stops it
//! cooperatively, and how it ended.
//!
//! Invariant: one run at a time (the handle refuses a second); events that
//! arrive outside a run (a profile switch's event) are dropped, the command
//! that caused them already said what happened.
use super::handle::{Prepared, SessionHandle};
use crate::protocol::{AgentEvent, CompactMode, Op, OpError, SessionEvent, TurnEnd};
use std::sync::{Arc, Mutex};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// One run's view.
pub struct Run {
    pub events: mpsc::Receiver<AgentEvent>,
    /// Cancel to stop the run (the session's `Op::Stop`).
    pub cancel: CancellationToken,
    /// How the run ended; sent after the last event.
    pub end: oneshot::Receiver<TurnEnd>,
}

struct Slot {
    sink: mpsc::Sender<AgentEvent>,
    end: oneshot::Sender<TurnEnd>,
    /// Cancelled when the run ended (ends the run's stop watcher).
    done: CancellationToken,
    compaction: bool,
}

/// See the module docs.
pub struct SessionPort {
    handle: Arc<SessionHandle>,
    slot: Arc<Mutex<Option<Slot>>>,
    pump: JoinHandle<()>,
}

impl SessionPort {
    pub fn new(mut handle: SessionHandle) -> SessionPort {
        let slot: Arc<Mutex<Option<Slot>>> = Default::default();
        let events = handle.take_events();
        let s = slot.clone();
        let pump = tokio::spawn(async move {
            let Some(mut events) = events else { return };
            while let Some(ev) = events.recv().await {
                match ev {
                    SessionEvent::Agent { event } => {
                        let sink = s
                            .lock()
                            .ok()
                            .and_then(|g| g.as_ref().map(|x| x.sink.clone()));
                        if let Some(sink) = sink {
                            let _ = sink.send(event).await;
                        }
                    }
                    SessionEvent::TurnEnded { end } => {
                        let Some(slot) = s.lock().ok().and_then(|mut g| g.take()) else {
                            continue;
                        };
                        if slot.compaction
                            && let TurnEnd::Failed { message } = &end
                        {
                            let _ = slot
                                .sink
                                .send(AgentEvent::Error {
                                    message: format!("compaction failed: {message}"),
                                })
                                .await;
                        }
                        slot.done.cancel();
                        let _ = slot.end.send(end);
                    }
                }
            }
        });
        SessionPort {
            handle: Arc::new(handle),
            slot,
            pump,
        }
    }

    pub fn handle(&self) -> &SessionHandle {
        &self.handle
    }

    pub fn id(&self) -> String {
        self.handle.id()
    }

    /// Sends a prepared message; its run.
    pub fn send(&self, msg: Prepared) -> Result<Run, OpError> {
        let (run, slot) = self.open_slot(false);
        self.install(slot);
        match self.handle.send(msg) {
            Ok(()) => Ok(self.watch(run)),
            Err(e) => {
                self.clear();
                Err(e)
            }
        }
    }

    /// Starts `/compact`; its run.
    pub fn compact(&self, mode: CompactMode) -> Result<Run, OpError> {
        let (run, slot) = self.open_slot(true);
        self.install(slot);
        match self.handle.submit(Op::Compact { mode }) {
            Ok(_) => Ok(self.watch(run)),
            Err(e) => {
                self.clear();
                Err(e)
            }
        }
    }

    fn open_slot(&self, compaction: bool) -> ((Run, CancellationToken), Slot) {
        let (sink, events) = mpsc::channel(1024);
        let (end_tx, end) = oneshot::channel();
        let done = CancellationToken::new();
        let run = Run {
            events,
            cancel: CancellationToken::new(),
            end,
        };
        let slot = Slot {
            sink,
            end: end_tx,
            done: done.clone(),
            compaction,
        };
        ((run, done), slot)
    }

    fn install(&self, slot: Slot) {
        if let Ok(mut g) = self.slot.lock() {
            *g = Some(slot);
        }
    }

    fn clear(&self) {
        if let Ok(mut g) = self.slot.lock() {
            *g = None;
        }
    }

    /// Turns the run's token into the session's stop, until the run ends.
    fn watch(&self, (run, done): (Run, CancellationToken)) -> Run {
        let (cancel, h) = (run.cancel.clone(), self.handle.clone());
        tokio::spawn(async move {
            tokio::select! {
                _ = cancel.cancelled() => {
                    let _ = h.submit(Op::Stop);
                }
                _ = done.cancelled() => {}
            }
        });
        run
    }

    /// Ends the session (see [`SessionHandle::close`]).
    pub async fn close(&self) {
        self.handle.close().await;
        self.pump.abort();
    }

    /// Leaves the session, its lock untouched (see [`SessionHandle::detach`]).
    pub fn detach(&self) {
        self.handle.detach();
        self.pump.abort();
    }
}
