//! Typing while a turn runs: the terminal does not echo it, so it never gets
//! mixed into the streamed answer. The kernel keeps the typed bytes; when
//! the turn ends the line editor takes the terminal again and reads them, so
//! the held text appears in the next prompt (a line finished with Enter is
//! submitted then).
//!
//! Lines finished with Enter meanwhile are read by [`Typed`]: `/stop` stops
//! the turn at once, the others wait for the next prompt.
//!
//! Invariant: echo is restored when the guard is dropped, on every path out
//! of a turn (end, stop, error, quit).
use rustix::termios::{LocalModes, OptionalActions, Termios, tcgetattr, tcsetattr};
use std::collections::VecDeque;
use std::time::Duration;

/// Turns terminal echo off on stdin until dropped.
pub(crate) struct EchoOff {
    saved: Option<Termios>,
}

impl EchoOff {
    /// A no-op when stdin is not a terminal or cannot be changed.
    pub(crate) fn start() -> EchoOff {
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

/// Lines typed (and finished with Enter) while a turn runs. The terminal is
/// in cooked mode then, so the kernel hands out only finished lines; a line
/// that is exactly `/stop` stops the turn at once, every other line is held
/// for the next prompt, in the order typed.
///
/// Invariant: stdin is read only while no line editor reads (during a turn,
/// between questions), and only as many bytes as are pending, so a read
/// never blocks.
#[derive(Default)]
pub(crate) struct Typed {
    held: VecDeque<String>,
    /// Bytes of a line not finished yet (a `^D` in cooked mode hands them
    /// out without a newline).
    partial: Vec<u8>,
}

/// A line that stops the running turn.
pub(crate) fn is_stop(line: &str) -> bool {
    line.trim() == "/stop"
}

impl Typed {
    /// Resolves when a `/stop` line was typed; holds every other line.
    /// Cancel-safe: dropping it between ticks loses nothing.
    pub(crate) async fn stop_typed(&mut self) {
        let mut tick = tokio::time::interval(Duration::from_millis(50));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            if self.read_pending() {
                return;
            }
        }
    }

    /// Reads what is pending on stdin; true when a `/stop` line was among it
    /// (lines after it are held too).
    fn read_pending(&mut self) -> bool {
        let mut stop = false;
        let mut buf = [0u8; 4096];
        for _ in 0..64 {
            let n = crate::ui::typeahead::pending_stdin().min(buf.len());
            if n == 0 {
                break;
            }
            match rustix::io::read(std::io::stdin(), &mut buf[..n]) {
                Ok(0) | Err(_) => break,
                Ok(got) => self.partial.extend_from_slice(&buf[..got]),
            }
            while let Some(i) = self.partial.iter().position(|b| *b == b'\n') {
                let raw: Vec<u8> = self.partial.drain(..=i).collect();
                let line = String::from_utf8_lossy(&raw)
                    .trim_end_matches(['\n', '\r'])
                    .to_string();
                if is_stop(&line) && !stop {
                    stop = true;
                } else {
                    self.held.push_back(line);
                }
            }
        }
        stop
    }

    /// The next held line, `\`-continuations joined with the lines after.
    pub(crate) fn pop_line(&mut self) -> Option<String> {
        let mut text = self.held.pop_front()?;
        while text.ends_with('\\') {
            let Some(next) = self.held.pop_front() else {
                break;
            };
            text.pop();
            text.push('\n');
            text.push_str(&next);
        }
        Some(text)
    }

    /// Drops everything held (an approval question is asked: only text
    /// typed after it counts). Returns how many lines and bytes went.
    pub(crate) fn discard(&mut self) -> usize {
        let n = self.held.len() + self.partial.len();
        self.held.clear();
        self.partial.clear();
        n
    }

    /// Puts `text` into the next prompt's buffer, when nothing was typed
    /// ahead meanwhile (that stays first). False when it was not put.
    pub(crate) fn preset(&mut self, text: &str) -> bool {
        if !self.held.is_empty() || !self.partial.is_empty() {
            return false;
        }
        self.partial = text.as_bytes().to_vec();
        true
    }

    /// Typed text without an Enter yet, for the next prompt's buffer.
    pub(crate) fn take_partial(&mut self) -> String {
        let raw = std::mem::take(&mut self.partial);
        String::from_utf8_lossy(&raw).into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_lines_and_held_continuations() {
        assert!(is_stop("/stop"));
        assert!(is_stop("  /stop \r"));
        assert!(!is_stop("/stop now"));
        assert!(!is_stop("//stop"));
        let mut t = Typed::default();
        t.held
            .extend(["one \\".to_string(), "two".into(), "three".into()]);
        assert_eq!(t.pop_line().as_deref(), Some("one \ntwo"));
        assert_eq!(t.pop_line().as_deref(), Some("three"));
        assert_eq!(t.pop_line(), None);
    }

    #[test]
    fn a_preset_never_pushes_typed_text_aside() {
        let mut t = Typed::default();
        assert!(t.preset("kept message"));
        assert_eq!(t.take_partial(), "kept message");
        t.partial = b"typed ahead".to_vec();
        assert!(!t.preset("kept message"));
        assert_eq!(t.take_partial(), "typed ahead");
        t.held.push_back("a line".into());
        assert!(!t.preset("kept message"));
    }
}
