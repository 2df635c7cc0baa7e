//! `TuiState::load_history`: a stored session's replayed events → the same
//! cells a live turn produces, through [`TuiState::apply`].
//!
//! Invariant: there is one way events become cells; history adds nothing of
//! its own except starting from an empty transcript and ending idle.
use super::cells::{Cell, CellKind};
use super::state::{RunState, TuiState};
use crate::protocol::{AgentEvent, INTERRUPTED};

impl TuiState {
    /// Replaces the transcript with a stored session's replayed history.
    pub(crate) fn load_history(&mut self, history: &[AgentEvent]) {
        self.transcript.clear();
        self.tools.clear();
        self.open_assistant = None;
        self.open_thinking = None;
        self.last_answer.clear();
        self.users_before = history
            .first()
            .and_then(crate::protocol::earlier_count)
            .map_or(0, |(_, yours)| yours as usize);
        for ev in history {
            self.apply(ev);
        }
        self.close_open();
        // A replay closes every call; anything left is marked, not left spinning.
        let pending: Vec<Vec<usize>> = self.tools.drain().map(|(_, p)| p).collect();
        for p in pending {
            if let Some(Cell {
                kind: CellKind::Tool(card),
                ..
            }) = self.transcript.cell_mut(&p)
            {
                card.finish(INTERRUPTED, false);
            }
        }
        self.run = RunState::Idle;
    }
}
