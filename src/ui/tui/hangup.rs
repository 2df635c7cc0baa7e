//! A terminal that went away (SSH dropped, tmux killed, window closed).
//!
//! The kernel normally says so with SIGHUP, and the loop quits cooperatively
//! (`terminated` in `tui/mod.rs`). Two things can still go wrong, and both
//! were seen: the SIGHUP never reaches navi (it went to a parent shell), or
//! crossterm's reader spins on the dead descriptor, which reads as "ready"
//! forever, and the UI task never runs again. So the input reports its own
//! end when the terminal has hung up, and a watchdog on another thread ends
//! the process if the UI has not quit within a grace period. Every write is
//! on disk before it is shown, so ending then loses nothing the user saw.
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

static WATCHED: AtomicBool = AtomicBool::new(false);

/// Whether the terminal on standard input has hung up (`POLLHUP`, `POLLERR`
/// or a closed descriptor). False when standard input is not a terminal.
pub(crate) fn tty_hung_up() -> bool {
    if !std::io::stdin().is_terminal() {
        // A hung-up pty is no longer a tty to isatty (EIO); only say so if
        // it was one when the UI started.
        return WATCHED.load(Ordering::Relaxed) && !fd_alive();
    }
    !fd_alive()
}

#[allow(unsafe_code)]
fn fd_alive() -> bool {
    let mut pfd = libc::pollfd {
        fd: 0,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd for the duration of the call; no waiting.
    let n = unsafe { libc::poll(&mut pfd, 1, 0) };
    n >= 0 && pfd.revents & (libc::POLLHUP | libc::POLLERR | libc::POLLNVAL) == 0
}

/// Starts the watchdog (once): when the terminal has been gone for `grace`,
/// the process exits with 129, as for SIGHUP.
pub(crate) fn watch(grace: Duration) {
    if !std::io::stdin().is_terminal() || WATCHED.swap(true, Ordering::SeqCst) {
        return;
    }
    let spawned = std::thread::Builder::new()
        .name("navi-tty-watch".into())
        .spawn(move || {
            let mut gone_for = Duration::ZERO;
            let tick = Duration::from_millis(500);
            loop {
                std::thread::sleep(tick);
                if tty_hung_up() {
                    gone_for += tick;
                    if gone_for >= grace {
                        tracing::warn!("the terminal hung up and the UI did not quit; exiting");
                        std::process::exit(129);
                    }
                } else {
                    gone_for = Duration::ZERO;
                }
            }
        });
    if let Err(e) = spawned {
        tracing::warn!("no terminal watchdog: {e}");
    }
}
