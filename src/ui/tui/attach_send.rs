//! Attachments in the TUI: `/attach PATH…` queues files for the next message
//! (shown above the composer; `/attach clear` or `/attach remove N` takes
//! them back), and `@path` words in a message attach those files. Reading
//! and deciding how a file travels is the session's (`Op::Attach`, by the
//! rules of [`crate::attach`]), the same as plain mode and `navi run -f`.
//!
//! Invariants: a queued attachment goes with exactly one message; when an
//! `@path` cannot be attached the message is not sent, the error says why,
//! and the text goes back into the composer (nothing typed is lost). A
//! message the agent refuses (an image the model cannot take) comes back
//! the same way: its text into the composer, its `/attach` files queued
//! again (its `@path` words attach their files again when it is resent).
use super::EventLoop;
use crate::app::Reply;
use crate::attach::{self, Attachment};
use crate::protocol::{AgentEvent, Op, OpError};
use crate::ui::tui::cells::CellKind;
use crate::ui::tui::state::TuiState;
use std::path::Path;

const USAGE: &str = "usage: /attach PATH… (goes with your next message; or write @path in a message) · /attach clear · /attach remove N";

impl EventLoop<'_> {
    /// Reads `path` for the next message (the session's rules).
    fn attach(&self, path: &Path) -> Result<Attachment, OpError> {
        match self.session.submit(Op::Attach {
            path: path.to_path_buf(),
        })? {
            Reply::Attached(a) => Ok(a),
            _ => Err(OpError::Invalid(format!(
                "cannot attach {}",
                path.display()
            ))),
        }
    }

    /// `/attach` and its arguments.
    pub(super) fn attach_cmd(&mut self, args: &[String]) {
        let queued = &mut self.state.attachments;
        match args
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>()
            .as_slice()
        {
            [] => {
                if queued.is_empty() {
                    return self.state.hint(USAGE);
                }
                let mut lines = vec!["attached to your next message:".to_string()];
                lines.extend(
                    queued
                        .iter()
                        .enumerate()
                        .map(|(i, a)| format!("  {}. {}", i + 1, a.describe())),
                );
                self.state.info(lines);
                return;
            }
            ["clear"] if !std::path::Path::new("clear").exists() => {
                let n = queued.len();
                queued.clear();
                self.state.flash = Some(format!("{n} attachment(s) removed"));
                return;
            }
            ["remove", n] => {
                match n
                    .parse::<usize>()
                    .ok()
                    .filter(|i| *i >= 1 && *i <= queued.len())
                {
                    Some(i) => {
                        let a = queued.remove(i - 1);
                        self.state.flash = Some(format!("removed {}", a.name()));
                    }
                    None => {
                        let total = queued.len();
                        self.state.hint(format!(
                            "no attachment {n}; /attach lists them (1 to {total})"
                        ))
                    }
                }
                return;
            }
            _ => {}
        }
        for w in args {
            // `/attach @src/x.rs` (completed by the @file popup) means the file.
            let mut path = attach::expand(w);
            if let Some(rest) = w.strip_prefix('@')
                && !path.exists()
            {
                path = attach::expand(rest);
            }
            match self.attach(&path) {
                Ok(a) => {
                    self.state.flash = Some(format!(
                        "attached {}; it goes with your next message",
                        a.describe()
                    ));
                    self.state.attachments.push(a);
                }
                Err(e) => {
                    self.state
                        .push(CellKind::Error(format!("cannot attach: {e}")));
                }
            }
        }
    }

    /// Starts the turn for `text` with the queued attachments and its
    /// `@path` files. Nothing starts (and it is reported) when a file
    /// cannot be attached or the session refuses the message.
    pub(super) fn start(&mut self, text: &str) {
        let mut items: Vec<Attachment> = std::mem::take(&mut self.state.attachments);
        self.state.sent = Some((text.to_string(), items.clone()));
        for p in attach::at_paths(text) {
            match self.attach(&p) {
                Ok(a) => items.push(a),
                Err(e) => {
                    self.state.attachments = items;
                    self.state.turn_finished();
                    self.state.push(CellKind::Error(format!(
                        "{e}; the message was not sent (it is back in the composer)"
                    )));
                    if self.state.composer.is_empty() {
                        self.state.composer.set_text(text);
                    }
                    return;
                }
            }
        }
        if !items.is_empty() {
            let names: Vec<String> = items.iter().map(Attachment::describe).collect();
            self.state.notice(format!("attached: {}", names.join(", ")));
        }
        let msg = self.session.prepare_with(text, &items);
        match self.session.send(msg) {
            Ok(()) => self.run = true,
            Err(e) => {
                // Shown as a turn that failed at once.
                let sid = self.session.id();
                self.state
                    .apply(&AgentEvent::StreamStart { session_id: sid });
                self.state.apply(&AgentEvent::Error {
                    message: e.to_string(),
                });
                self.state.turn_finished();
            }
        }
    }
}

impl TuiState {
    /// The running turn's message was refused: its text goes back into the
    /// composer (before anything typed since) and its `/attach` files are
    /// queued again, first.
    pub(crate) fn input_returned(&mut self) {
        let Some((text, mut items)) = self.sent.take() else {
            return;
        };
        if self.composer.is_empty() {
            self.composer.set_text(&text);
        } else if !self.composer.text.starts_with(&text) {
            let typed = std::mem::take(&mut self.composer.text);
            self.composer.set_text(&format!("{text}\n{typed}"));
        }
        let n = items.len();
        items.append(&mut self.attachments);
        self.attachments = items;
        self.flash = Some(if n == 0 {
            "your message is back in the composer".to_string()
        } else {
            format!(
                "your message is back in the composer with its {n} attachment(s) (/attach remove N or /attach clear drops them)"
            )
        });
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::attach::ImageData;
    use crate::ui::tui::theme::Theme;

    fn image(name: &str) -> Attachment {
        Attachment::Image {
            name: name.into(),
            image: ImageData {
                mime: "image/png".into(),
                base64: "AAA=".into(),
            },
        }
    }

    #[test]
    fn a_returned_message_goes_before_what_was_typed_since() {
        let mut st = TuiState::new(Theme::fallback(true));
        st.sent = Some(("describe it".into(), vec![image("a.png")]));
        st.composer.set_text("also this");
        st.attachments.push(image("b.png"));
        st.input_returned();
        assert_eq!(st.composer.text, "describe it\nalso this");
        let names: Vec<&str> = st.attachments.iter().map(Attachment::name).collect();
        assert_eq!(names, vec!["a.png", "b.png"]);
        assert!(st.flash.as_deref().unwrap().contains("1 attachment(s)"));
        // Only once: a second event has nothing left to give back.
        st.input_returned();
        assert_eq!(st.attachments.len(), 2);
        assert_eq!(st.composer.text, "describe it\nalso this");
    }

    #[test]
    fn a_returned_message_fills_an_empty_composer() {
        let mut st = TuiState::new(Theme::fallback(true));
        st.sent = Some(("what is this?".into(), Vec::new()));
        st.input_returned();
        assert_eq!(st.composer.text, "what is this?");
        assert!(st.attachments.is_empty());
    }
}
