//! A background snapshot waits a moment before it starts, so a turn that
//! ends without a writing tool (most answers; a one-shot `navi run` that
//! only talks) never starts git at all.
//!
//! Invariants: the snapshot starts at the latest when [`DEFER`] has passed
//! or a writing tool needs it ([`Gate::open`]), whichever comes first; once
//! started it is never cancelled; a cancelled one never starts.
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// How long a snapshot waits before it starts by itself.
pub(crate) const DEFER: Duration = Duration::from_millis(200);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Waiting,
    Go,
    Cancelled,
}

pub(crate) struct Gate {
    state: Mutex<State>,
    cv: Condvar,
}

impl Gate {
    pub(crate) fn new() -> Arc<Gate> {
        Arc::new(Gate {
            state: Mutex::new(State::Waiting),
            cv: Condvar::new(),
        })
    }

    fn set(&self, to: State) -> bool {
        let Ok(mut s) = self.state.lock() else {
            return false;
        };
        if *s != State::Waiting {
            return false;
        }
        *s = to;
        self.cv.notify_all();
        true
    }

    /// Start now (a writing tool waits for the snapshot).
    pub(crate) fn open(&self) {
        self.set(State::Go);
    }

    /// Never start; false when it already started.
    pub(crate) fn cancel(&self) -> bool {
        self.set(State::Cancelled)
    }

    /// In the snapshot's thread: waits up to `delay` for `open` or
    /// `cancel`; true = go on.
    pub(crate) fn wait(&self, delay: Duration) -> bool {
        let Ok(s) = self.state.lock() else {
            return true;
        };
        let Ok((mut s, _)) = self
            .cv
            .wait_timeout_while(s, delay, |s| *s == State::Waiting)
        else {
            return true;
        };
        if *s == State::Waiting {
            *s = State::Go;
        }
        *s == State::Go
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gate_goes_after_the_delay_when_opened_and_not_when_cancelled() {
        assert!(Gate::new().wait(Duration::from_millis(1)));
        let g = Gate::new();
        g.open();
        assert!(g.wait(Duration::from_secs(60)), "opened: no wait");
        let g = Gate::new();
        assert!(g.cancel());
        assert!(!g.wait(Duration::from_secs(60)));
        // Started: cannot be cancelled any more.
        let g = Gate::new();
        assert!(g.wait(Duration::from_millis(1)));
        assert!(!g.cancel());
        // Opened from another thread while waiting.
        let g = Gate::new();
        let h = {
            let g = g.clone();
            std::thread::spawn(move || g.wait(Duration::from_secs(60)))
        };
        std::thread::sleep(Duration::from_millis(20));
        g.open();
        assert!(h.join().unwrap());
    }
}
