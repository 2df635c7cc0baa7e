//! Slash commands in plain mode: parsed and run by the shared
//! `ui::commands`; this file only turns each `Outcome` into lines.
//!
//! Invariant: no command logic lives here; anything a command changes
//! (session, profile, model…) is an op of `commands::execute` on the open
//! session.
use super::Plain;
use super::editor::Reply;
use crate::protocol::AgentEvent;
use crate::ui::commands::{self, Outcome, SlashCommand};
use crate::ui::lines::{LineRenderer, ThinkingView, code_style_for};
use tokio_util::sync::CancellationToken;

impl Plain {
    /// Runs a slash command line. True when navi should quit.
    pub(super) async fn slash(&mut self, line: &str) -> bool {
        self.drain_stale();
        let parsed = commands::parse(line);
        if let Ok(SlashCommand::SessionDelete(key)) = &parsed
            && !self.confirm_delete(key.as_deref()).await
        {
            return false;
        }
        let result = parsed.and_then(|cmd| self.execute(cmd));
        match result {
            Err(e) => {
                // A refusal is a diagnostic: stderr when stdout is redirected.
                let t = self.pal().red(&e);
                self.note(&t);
                false
            }
            Ok(Outcome::Pick(list)) => {
                if let Some(o) = self.pick(list.len()).await {
                    return self.apply(o);
                }
                false
            }
            Ok(Outcome::Compacting(_)) => {
                self.compacting().await;
                false
            }
            Ok(o) => self.apply(o),
        }
    }

    /// Runs a command on the open session; a session command that opened
    /// another session takes its events.
    fn execute(&mut self, cmd: SlashCommand) -> Result<Outcome, String> {
        let out = commands::execute(cmd, &self.app, &mut self.session, &mut self.st)?;
        if matches!(out, Outcome::Switched { .. })
            && let Some(rx) = self.session.take_events()
        {
            self.events = Some(rx);
        }
        Ok(out)
    }

    /// `/session delete` asks first, as the TUI does: only `y` deletes.
    /// Nobody to ask (piped input): nothing is deleted.
    async fn confirm_delete(&mut self, key: Option<&str>) -> bool {
        let what = match key {
            Some(k) => format!("session {k}"),
            None => format!("this session ({})", self.session_label()),
        };
        if !self.input.interactive() {
            let t = format!(
                "not deleted: nobody can confirm deleting {what} (input is not a terminal); use `navi sessions delete ID`"
            );
            let t = self.pal().red(&t);
            self.note(&t);
            return false;
        }
        let q = format!("delete {what} and all its messages? [y/N] ");
        let (answer, _) = self
            .input
            .ask(&q, &mut self.sig, &CancellationToken::new())
            .await;
        match answer {
            Reply::Line(a) if matches!(a.trim(), "y" | "Y" | "yes") => true,
            Reply::Signal(code) => {
                self.exit_after = Some(code);
                false
            }
            _ => {
                self.say("kept");
                false
            }
        }
    }

    /// The session picker as a numbered list and a question.
    async fn pick(&mut self, count: usize) -> Option<Outcome> {
        if count == 0 {
            self.say("no sessions yet");
            return None;
        }
        if let Ok(Outcome::Show(lines)) = self.execute(SlashCommand::SessionList) {
            lines.iter().for_each(|l| self.say(l));
        }
        if !self.input.interactive() {
            self.say("usage: /session resume <id|n>");
            return None;
        }
        let q = "resume which session? (number or id, Enter cancels) ";
        let (answer, _) = self
            .input
            .ask(q, &mut self.sig, &CancellationToken::new())
            .await;
        if let Reply::Signal(code) = answer {
            self.exit_after = Some(code);
            return None;
        }
        let key = match answer {
            Reply::Line(a) if !a.trim().is_empty() => a.trim().to_string(),
            _ => return None,
        };
        match self.execute(SlashCommand::SessionResume(Some(key))) {
            Ok(o) => Some(o),
            Err(e) => {
                let t = self.pal().red(&e);
                self.note(&t);
                None
            }
        }
    }

    /// Shows an outcome. True on `Quit`.
    fn apply(&mut self, o: Outcome) -> bool {
        let p = self.pal();
        match o {
            Outcome::Show(lines) => lines.iter().for_each(|l| self.say(l)),
            Outcome::Switched {
                session,
                history,
                note,
                ..
            } => {
                self.st.session = session;
                self.st.last_answer = crate::protocol::last_answer(&history).to_string();
                self.show_history(&history, 10);
                let t = format!("{note} · {}", self.session_label());
                self.say(&p.cyan(&t));
                let todos = self.session.todos();
                if !todos.is_empty() {
                    let list = crate::app::words::todo_lines(&todos);
                    self.say(&p.dim(&format!("todo:\n{list}")));
                }
            }
            Outcome::Pick(_) | Outcome::Compacting(_) => {}
            Outcome::Stop => self.say(&p.dim(&crate::protocol::OpError::NotRunning.to_string())),
            Outcome::Quit => return true,
            Outcome::Copy(text) => {
                if self.term.stdout_tty && !self.term.dumb {
                    let seq = commands::osc52(&text);
                    self.say(&seq);
                    let t = format!(
                        "copied {} characters (OSC 52: the terminal must allow clipboard writes)",
                        text.chars().count()
                    );
                    self.say(&p.dim(&t));
                } else {
                    self.say(&p.yellow(
                        "cannot copy: this terminal can't take OSC 52 clipboard writes; /export saves the transcript to a file",
                    ));
                }
            }
            Outcome::Theme(t) => match code_style_for(&t, &self.app.paths().config_dir) {
                Ok(code) => {
                    self.r.opts.code = code;
                    self.say(&format!(
                        "theme: {t} (plain mode uses it for code highlighting)"
                    ));
                    self.st.theme = t;
                }
                Err(e) => self.note(&p.red(&e)),
            },
            Outcome::Thinking(on) => {
                self.st.show_thinking = on;
                self.r.opts.thinking = if on {
                    ThinkingView::Full
                } else {
                    ThinkingView::Summary
                };
                self.say(if on {
                    "thinking: shown"
                } else {
                    "thinking: one summary line per block"
                });
            }
        }
        false
    }

    /// The last `limit` entries of a replayed history, rendered exactly as a
    /// live turn is (a fresh renderer, answers printed whole).
    pub(super) fn show_history(&mut self, history: &[AgentEvent], limit: usize) {
        // A resumed session's history is its tail after a notice of how many
        // messages came before (session::replay::tail_events).
        let (before, history) = match history.split_first() {
            Some((first, rest)) => match crate::protocol::earlier_count(first) {
                Some((n, _)) => (n as usize, rest),
                None => (0, history),
            },
            None => (0, history),
        };
        // Thinking and a call's start belong to the entry after them.
        let counted = |e: &AgentEvent| {
            !matches!(
                e,
                AgentEvent::TurnThinking { .. } | AgentEvent::ToolStarted { .. }
            )
        };
        let total = history.iter().filter(|e| counted(e)).count();
        let skip = total.saturating_sub(limit);
        let mut start = history
            .iter()
            .enumerate()
            .filter(|(_, e)| counted(e))
            .nth(skip)
            .map_or(history.len(), |(i, _)| i);
        while start > 0 && !counted(&history[start - 1]) {
            start -= 1;
        }
        if skip + before > 0 {
            let t = format!(
                "… {} earlier messages (/export saves them all)",
                skip + before
            );
            let t = self.pal().dim(&t);
            self.say(&t);
        }
        let mut opts = self.r.opts.clone();
        opts.live_answer = false;
        let mut r = LineRenderer::new(opts);
        let mut pieces = self.r.close();
        for e in &history[start..] {
            pieces.extend(r.event(e));
        }
        pieces.extend(r.close());
        self.emit(pieces);
    }
}
