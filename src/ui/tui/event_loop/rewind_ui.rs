//! The event loop's part in checkpoints: the diff of a files-changed card
//! (loaded through `/diff N`) and edit and resend (`/rewind N`, then the
//! edited text as a new message).
use super::EventLoop;
use crate::ui::commands;
use crate::ui::tui::state::Action;

impl EventLoop<'_> {
    /// The diff of the `files_changed` card just shown (via `/diff N`).
    pub(super) fn fill_diff(&mut self) {
        let Some(turn) = self.state.diff_wanted.take() else {
            return;
        };
        let Ok(lines) = self.session.diff(Some(turn)) else {
            return;
        };
        for c in self.state.transcript.cells.iter_mut().rev() {
            if let crate::ui::tui::cells::CellKind::Changes { turn: t, diff, .. } = &mut c.kind
                && *t == turn
            {
                *diff = lines;
                c.touch();
                break;
            }
        }
    }

    /// Edit and resend: `/rewind N`, then the edited text as a new message;
    /// when the rewind is refused the text goes back into the composer.
    pub(super) fn resend(&mut self, n: usize, text: String) {
        let cmd = commands::SlashCommand::Rewind(vec![n.to_string()]);
        if self.run_command(cmd) {
            self.state.begin_turn(&text);
            self.perform(Action::Send(text));
        } else {
            self.state.composer.set_text(&text);
        }
    }
}
