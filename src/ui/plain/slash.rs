//! Slash commands in plain mode: parsed and run by the shared
//! `ui::commands`; this file only turns each `Outcome` into lines.
//!
//! Invariant: no command logic lives here; anything a command changes
//! (session, profile, model…) is changed by `commands::execute`.
use super::Plain;
use super::editor::Reply;
use crate::llm::Role;
use crate::session::{MessageKind, StoredMessage};
use crate::ui::commands::{self, Outcome, SlashCommand};
use crate::ui::format::{args_preview, preview};
use crate::ui::lines::markdown::Markdown;
use crate::ui::lines::{ThinkingView, code_style_for};
use tokio_util::sync::CancellationToken;

/// The last assistant answer of a history (for /copy after a resume).
pub fn last_answer(history: &[StoredMessage]) -> String {
    history
        .iter()
        .rev()
        .find(|m| {
            m.msg.role == Role::Assistant
                && m.kind == MessageKind::Message
                && !m.msg.content.trim().is_empty()
        })
        .map(|m| m.msg.content.clone())
        .unwrap_or_default()
}

impl Plain {
    /// Runs a slash command line. True when navi should quit.
    pub(super) async fn slash(&mut self, line: &str) -> bool {
        let result =
            commands::parse(line).and_then(|cmd| commands::execute(cmd, &self.app, &mut self.st));
        match result {
            Err(e) => {
                let t = self.pal().red(&e);
                self.say(&t);
                false
            }
            Ok(Outcome::Pick(list)) => {
                if let Some(o) = self.pick(list.len()).await {
                    return self.apply(o);
                }
                false
            }
            Ok(Outcome::Compact(mode)) => {
                self.compact(mode).await;
                false
            }
            Ok(o) => self.apply(o),
        }
    }

    /// The session picker as a numbered list and a question.
    async fn pick(&mut self, count: usize) -> Option<Outcome> {
        if count == 0 {
            self.say("no sessions yet");
            return None;
        }
        if let Ok(Outcome::Show(lines)) =
            commands::execute(SlashCommand::SessionList, &self.app, &mut self.st)
        {
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
        match commands::execute(
            SlashCommand::SessionResume(Some(key)),
            &self.app,
            &mut self.st,
        ) {
            Ok(o) => Some(o),
            Err(e) => {
                let t = self.pal().red(&e);
                self.say(&t);
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
            } => {
                self.st.session = session;
                self.st.last_answer = last_answer(&history);
                self.show_history(&history, 10);
                let t = format!("{note} · {}", self.session_label());
                self.say(&p.cyan(&t));
                let todos = self.app.agent.env.todos.get(&self.st.session.id);
                if !todos.is_empty() {
                    let list = crate::tools::builtin::todo::render(&todos);
                    self.say(&p.dim(&format!("todo:\n{list}")));
                }
            }
            Outcome::Pick(_) | Outcome::Compact(_) => {}
            Outcome::Stop => self.say(&p.dim("nothing is running")),
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
            Outcome::Theme(t) => match code_style_for(&t, &self.app.paths.config_dir) {
                Ok(code) => {
                    self.r.opts.code = code;
                    self.say(&format!(
                        "theme: {t} (plain mode uses it for code highlighting)"
                    ));
                    self.st.theme = t;
                }
                Err(e) => self.say(&p.red(&e)),
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

    /// The last `limit` messages of a history, as the transcript showed them.
    pub(super) fn show_history(&mut self, history: &[StoredMessage], limit: usize) {
        let p = self.pal();
        let visible: Vec<&StoredMessage> = history
            .iter()
            .filter(|m| m.msg.role != Role::System || m.kind == MessageKind::Notice)
            .collect();
        let skip = visible.len().saturating_sub(limit);
        if skip > 0 {
            let t = format!("… {skip} earlier messages (/export saves them all)");
            self.say(&p.dim(&t));
        }
        let (color, code) = (self.r.opts.color, self.r.opts.code.clone());
        for m in visible.into_iter().skip(skip) {
            let content = m.msg.content.trim_end();
            match (m.msg.role, m.kind) {
                (_, MessageKind::Notice) => self.say(&p.dim(&format!("· {content}"))),
                (_, MessageKind::Plan) => {
                    self.say(&p.bold("plan:"));
                    content.lines().for_each(|l| self.say(&format!("  {l}")));
                }
                (_, MessageKind::Summary) => self.say(&p.dim("· (summary of older context)")),
                (Role::User, _) => {
                    let t = format!("{}{content}", p.bold("you> "));
                    self.say(&t);
                }
                (Role::Assistant, _) => {
                    if !content.is_empty() {
                        let text = Markdown::render(content, color, &code);
                        self.say(text.trim_end_matches('\n'));
                    }
                    for c in &m.msg.tool_calls {
                        let args = args_preview(&c.arguments, 100);
                        let t = format!("{} {}({args})", p.cyan("→"), c.name);
                        self.say(&t);
                    }
                }
                (Role::Tool, _) => {
                    let mark = if m.success == Some(false) {
                        p.red("✗")
                    } else {
                        p.green("✓")
                    };
                    let name = m.msg.tool_name.as_deref().unwrap_or("tool");
                    self.say(&format!("{mark} {name}: {}", preview(content, 120)));
                }
                (Role::System, _) => {}
            }
        }
    }
}
