//! Plain mode's waiting line: while nothing is printed — the model has not
//! answered yet, or a tool call runs — a line says what navi waits for and
//! for how long, from the second second on.
//!
//! On a terminal the line is redrawn in place (`\r`, erase line) each
//! second and erased before anything else is printed; without one a line
//! is printed every [`PIPE_EVERY`] seconds. An MCP tool that reports its
//! own progress (`tool_progress`) is left to that.
use crate::protocol::AgentEvent;
use std::time::{Duration, Instant};

/// Nothing is shown for waits shorter than this.
pub(super) const SHOW_AFTER: Duration = Duration::from_secs(2);
/// Without a terminal: one line per this many seconds.
const PIPE_EVERY: u64 = 10;

#[derive(Debug, Default)]
pub(super) struct Waiting {
    /// What is awaited (`None`: output flows, nothing to say) and since when.
    what: Option<(String, Instant)>,
    /// The in-place line is on the screen (it must be erased first).
    drawn: std::cell::Cell<bool>,
    /// Without a terminal: the last whole-second count printed.
    last_printed: u64,
}

impl Waiting {
    /// The turn began: the model is awaited.
    pub(super) fn start(&mut self) {
        self.set(Some("waiting for the model".into()));
    }

    fn set(&mut self, what: Option<String>) {
        self.what = what.map(|w| (w, Instant::now()));
        self.last_printed = 0;
    }

    /// Follows the turn's events.
    pub(super) fn event(&mut self, ev: &AgentEvent) {
        match ev {
            AgentEvent::ToolStarted { tool, .. } => self.set(Some(tool.clone())),
            // A result is in, or the plan is made: the next model call is awaited.
            AgentEvent::ToolCall { .. } | AgentEvent::Planning { active: false } => {
                self.set(Some("waiting for the model".into()))
            }
            // `planning… ` is an open line that counts itself when done.
            AgentEvent::Planning { active: true } => self.set(None),
            AgentEvent::ApprovalRequest { .. }
            | AgentEvent::ToolProgress { .. }
            | AgentEvent::StreamDelta { .. }
            | AgentEvent::ThinkingDelta { .. }
            | AgentEvent::StreamEnd { .. }
            | AgentEvent::StreamStopped => self.set(None),
            _ => {}
        }
    }

    /// The approval question was answered: the tool runs now.
    pub(super) fn resume(&mut self, tool: &str) {
        self.set(Some(tool.to_string()));
    }

    /// What to print at a tick: on a terminal the whole in-place line
    /// (starting with `\r`), else a full line every [`PIPE_EVERY`] seconds.
    pub(super) fn tick(&mut self, tty: bool) -> Option<String> {
        let (what, since) = self.what.as_ref()?;
        let took = since.elapsed();
        if took < SHOW_AFTER {
            return None;
        }
        let secs = took.as_secs();
        if tty {
            self.drawn.set(true);
            return Some(format!("\r\x1b[2K  … {what} · {secs}s"));
        }
        if secs / PIPE_EVERY > self.last_printed / PIPE_EVERY {
            self.last_printed = secs;
            return Some(format!("  … {what} · {secs}s\n"));
        }
        None
    }

    /// The sequence that erases the in-place line, when one is drawn.
    pub(super) fn erase(&self) -> Option<&'static str> {
        self.drawn.replace(false).then_some("\r\x1b[2K")
    }

    /// The turn ended.
    pub(super) fn stop(&mut self) {
        self.set(None);
    }
}
