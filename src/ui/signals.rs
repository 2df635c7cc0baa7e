//! The signals that stop navi: SIGINT (Ctrl-C), SIGTERM and SIGHUP (a closed
//! terminal, a dropped SSH connection).
//!
//! Invariant: all three are handled the same way — the running turn is asked
//! to stop (its tool process groups are killed, its results saved), then navi
//! exits with 130 / 143 / 129. Installing the handlers replaces the default
//! "die at once" action for the whole process.

/// Which stop signal arrived.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stop {
    Interrupt,
    Terminate,
    Hangup,
}

impl Stop {
    /// 128 + the signal number, as shells report it.
    pub(crate) fn exit_code(self) -> u8 {
        match self {
            Stop::Interrupt => 130,
            Stop::Terminate => 143,
            Stop::Hangup => 129,
        }
    }

    /// SIGTERM / SIGHUP: navi must exit once the turn has stopped.
    pub(crate) fn is_fatal(self) -> bool {
        self != Stop::Interrupt
    }
}

/// The stop signals as one stream; presses made while nobody waited are
/// remembered until [`drain`](Self::drain).
pub(crate) struct StopSignals {
    #[cfg(unix)]
    int: Option<tokio::signal::unix::Signal>,
    #[cfg(unix)]
    term: Option<tokio::signal::unix::Signal>,
    #[cfg(unix)]
    hup: Option<tokio::signal::unix::Signal>,
}

#[cfg(unix)]
async fn next(s: &mut Option<tokio::signal::unix::Signal>) {
    match s.as_mut() {
        Some(s) => {
            if s.recv().await.is_none() {
                std::future::pending::<()>().await;
            }
        }
        None => std::future::pending::<()>().await,
    }
}

impl StopSignals {
    /// Installs the handlers (from now on these signals are ours).
    pub(crate) fn install() -> Self {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            StopSignals {
                int: signal(SignalKind::interrupt()).ok(),
                term: signal(SignalKind::terminate()).ok(),
                hup: signal(SignalKind::hangup()).ok(),
            }
        }
        #[cfg(not(unix))]
        {
            StopSignals {}
        }
    }

    /// The next stop signal.
    pub(crate) async fn recv(&mut self) -> Stop {
        #[cfg(unix)]
        {
            tokio::select! {
                _ = next(&mut self.int) => Stop::Interrupt,
                _ = next(&mut self.term) => Stop::Terminate,
                _ = next(&mut self.hup) => Stop::Hangup,
            }
        }
        #[cfg(not(unix))]
        {
            if tokio::signal::ctrl_c().await.is_err() {
                std::future::pending::<()>().await;
            }
            Stop::Interrupt
        }
    }

    /// Forgets Ctrl-C presses nobody waited for (so they can't stop the next
    /// turn). A pending SIGTERM/SIGHUP is kept: it still ends navi.
    pub(crate) fn drain(&mut self) {
        #[cfg(unix)]
        if let Some(s) = self.int.as_mut() {
            use futures_util::FutureExt;
            while let Some(Some(())) = s.recv().now_or_never() {}
        }
    }
}
