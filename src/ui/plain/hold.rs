//! Typing while a turn runs: the terminal does not echo it, so it never gets
//! mixed into the streamed answer. The kernel keeps the typed bytes; when
//! the turn ends the line editor takes the terminal again and reads them, so
//! the held text appears in the next prompt (a line finished with Enter is
//! submitted then).
//!
//! Invariant: echo is restored when the guard is dropped, on every path out
//! of a turn (end, stop, error, quit).
use rustix::termios::{LocalModes, OptionalActions, Termios, tcgetattr, tcsetattr};

/// Turns terminal echo off on stdin until dropped.
pub struct EchoOff {
    saved: Option<Termios>,
}

impl EchoOff {
    /// A no-op when stdin is not a terminal or cannot be changed.
    pub fn start() -> EchoOff {
        let stdin = std::io::stdin();
        let Ok(saved) = tcgetattr(&stdin) else {
            return EchoOff { saved: None };
        };
        let mut quiet = saved.clone();
        quiet
            .local_modes
            .remove(LocalModes::ECHO | LocalModes::ECHONL);
        match tcsetattr(&stdin, OptionalActions::Now, &quiet) {
            Ok(()) => EchoOff { saved: Some(saved) },
            Err(_) => EchoOff { saved: None },
        }
    }
}

impl Drop for EchoOff {
    fn drop(&mut self) {
        if let Some(t) = &self.saved {
            let _ = tcsetattr(std::io::stdin(), OptionalActions::Now, t);
        }
    }
}
