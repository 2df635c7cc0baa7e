//! Slash-command outcomes (from the shared `ui::commands::execute`) applied
//! to the TUI state, and the `UiState` the command module reads and writes.
//!
//! Invariant: the TUI has no command logic of its own — it parses and runs
//! commands only through `ui::commands`, and turns each `Outcome` into cells,
//! overlays or [`Action`]s here.
use super::cells::CellKind;
use super::picker::Picker;
use super::state::{Action, TuiState};
use super::theme::Theme;
use crate::protocol::AgentEvent;
use crate::protocol::SessionMeta;
use crate::ui::commands::{Outcome, UiState};

impl TuiState {
    /// Shows `meta` as the open session (status bar, commands).
    pub fn set_session_meta(&mut self, meta: &SessionMeta) {
        self.status.session_id = meta.id.clone();
        self.status.profile = meta.profile_id.clone();
        self.status.title = meta.title.clone();
        // The store's count is the latest after a turn or a compaction.
        self.status.ctx_used = meta.context_token_count;
        self.session = Some(meta.clone());
    }

    /// The open session's history arrived (start-up loads it after the
    /// first frame): it goes above whatever was shown meanwhile.
    pub(crate) fn history_loaded(&mut self, session_id: &str, history: &[AgentEvent]) {
        if !self.loading || self.status.session_id != session_id {
            return;
        }
        self.loading = false;
        let meanwhile = std::mem::take(&mut self.transcript.cells);
        self.load_history(history);
        if history.is_empty() {
            self.notice(format!(
                "new session with profile {} · type a message and press Enter · /help lists commands",
                self.status.profile
            ));
        }
        for c in meanwhile {
            self.transcript.push(c);
        }
        self.transcript.follow();
    }

    /// Opens another session: its history replaces the transcript.
    pub fn switch_session(&mut self, meta: &SessionMeta, history: &[AgentEvent]) {
        self.loading = false;
        self.session = None;
        self.status.ctx_used = 0;
        self.status.ctx_max = 0;
        self.set_session_meta(meta);
        self.load_history(history);
        self.side.clear();
        self.transcript.follow();
    }

    /// What the shared command module needs to see; `None` before start-up.
    pub(crate) fn ui_state(&self) -> Option<UiState> {
        Some(UiState {
            session: self.session.clone()?,
            show_thinking: self.show_thinking,
            theme: self.theme.name.clone(),
            last_answer: self.last_answer.clone(),
        })
    }

    /// Takes back what a command changed in the `UiState` (rename, pin, profile).
    pub(crate) fn absorb_ui_state(&mut self, ui: &UiState) {
        if self.session.as_ref() != Some(&ui.session) {
            self.set_session_meta(&ui.session);
        }
    }

    /// A one-line hint (unknown command, usage, command error).
    pub fn hint(&mut self, text: impl Into<String>) {
        self.push(CellKind::Info(vec![text.into()]));
    }

    pub fn apply_outcome(&mut self, out: Outcome) -> Vec<Action> {
        match out {
            Outcome::Show(lines) => self.info(lines),
            Outcome::Switched {
                session,
                history,
                note,
                window,
            } => {
                self.switch_session(&session, &history);
                self.status.ctx_max = window;
                self.notice(note);
            }
            Outcome::Pick(list) => {
                let cur = self.status.session_id.clone();
                self.picker = Some(Picker::new(list, &cur));
            }
            Outcome::Stop => match self.request_stop() {
                Some(a) => return vec![a],
                None if self.running => {}
                None => self.hint(crate::protocol::OpError::NotRunning.to_string()),
            },
            Outcome::Quit => return vec![Action::Quit],
            Outcome::Copy(text) => {
                let done = super::clipboard::copy(&text);
                if let Some(seq) = done.sequence {
                    self.outbox.push(seq);
                }
                self.notice(done.notice);
            }
            Outcome::Theme(name) => {
                match Theme::load(&name, self.config_dir.as_deref(), self.no_color) {
                    Ok(t) => {
                        self.set_theme(t);
                        self.notice(format!("theme: {name}"));
                    }
                    Err(e) => self.hint(e),
                }
            }
            Outcome::Thinking(on) => {
                self.show_thinking = on;
                self.invalidate();
                self.notice(if on {
                    "thinking is shown"
                } else {
                    "thinking is hidden"
                });
            }
            Outcome::Compacting(_) => return vec![Action::Compacting],
        }
        Vec::new()
    }
}
