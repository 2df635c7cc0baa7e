//! Steering a running turn, and the queue of messages typed during a turn.
//!
//! Invariants:
//! - Enter during a turn queues the message; Ctrl-S sends it as a *steer*,
//!   which the agent takes in at the turn's next safe point (after the
//!   current tool batch). A steer is shown above the composer until the
//!   agent took it in, then in the transcript where it went in.
//! - A steer the turn ended without taking in is sent as the next turn; one
//!   the user stopped is put back in the composer. Nothing typed is lost.
//! - Queued messages follow a turn that ended by itself; after a stop they
//!   stay queued (shown) until the user sends them (Enter on an empty
//!   composer) or edits them (↑ on an empty composer takes the last one back
//!   into the composer; clearing it there removes it).
use super::cells::CellKind;
use super::state::{Action, TuiState};

impl TuiState {
    /// Ctrl-S: the composer's text as a steer (a plain send when idle).
    pub(super) fn steer(&mut self) -> Vec<Action> {
        if self.composer.is_empty() {
            return Vec::new();
        }
        if !self.running || self.loading {
            return self.submit();
        }
        let text = self.composer.take();
        self.popup = None;
        if text.trim().is_empty() {
            return Vec::new();
        }
        self.steers.push(text.clone());
        vec![Action::Steer(text)]
    }

    /// The agent took `message` in (the `user_steer` event).
    pub(super) fn steer_applied(&mut self, message: &str) {
        if let Some(i) = self.steers.iter().position(|s| s == message) {
            self.steers.remove(i);
        }
        self.notice("steer: taken in after the tool batch");
        self.push(CellKind::User(message.to_string()));
        self.transcript.follow();
    }

    /// After a turn: what to do with steers it never took in (`left`, as
    /// taken back from the agent). Returns the message to send as the next
    /// turn, if any.
    pub(crate) fn steers_left(&mut self, left: Vec<String>, stopped: bool) -> Option<String> {
        self.steers.clear();
        if left.is_empty() {
            return None;
        }
        let joined = left.join("\n\n");
        if stopped {
            let draft = self.composer.take();
            let text = if draft.trim().is_empty() {
                joined
            } else {
                format!("{joined}\n\n{draft}")
            };
            self.composer.set_text(&text);
            self.notice("the turn stopped before your steer went in; it is back in the composer");
            return None;
        }
        self.begin_turn(&joined);
        Some(joined)
    }

    /// After a stop, queued messages wait for the user.
    pub(crate) fn queue_held(&mut self) {
        if self.queue.is_empty() {
            return;
        }
        let n = self.queue.len();
        let what = if n == 1 {
            "1 queued message is".to_string()
        } else {
            format!("{n} queued messages are")
        };
        self.notice(format!(
            "{what} kept, not sent: Enter on an empty composer sends the next, ↑ edits the last"
        ));
    }

    /// ↑ on an empty composer with messages queued: the last one back into
    /// the composer. Returns whether it did.
    pub(super) fn edit_queued(&mut self) -> bool {
        if !self.composer.is_empty() {
            return false;
        }
        match self.queue.pop_back() {
            Some(m) => {
                self.composer.set_text(&m);
                self.flash = Some(
                    "editing a queued message: Enter queues it again, Ctrl-C clears it".into(),
                );
                true
            }
            None => false,
        }
    }
}
