//! Attachments in plain mode: `/attach PATH…` queues files for the next
//! message; `@path` in a message attaches that file. Both are the session's
//! `Op::Attach` (the rules of [`crate::attach`], the same as `navi run -f`
//! and the TUI).
//!
//! Invariant: a queued attachment is sent exactly once, with the next
//! message; a file that cannot be attached is reported and never sent.
use super::Plain;
use crate::app::{Prepared, Reply};
use crate::attach::Attachment;
use crate::protocol::{Op, OpError};
use std::path::Path;

pub(crate) use crate::attach::{at_paths, expand};

impl Plain {
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

    /// `/attach PATH…`, `/attach` (list), `/attach clear`.
    pub(super) fn attach_cmd(&mut self, args: &str) {
        if args.trim().is_empty() && !self.pending.is_empty() {
            let mut lines = vec!["attached to your next message:".to_string()];
            lines.extend(
                self.pending
                    .iter()
                    .enumerate()
                    .map(|(i, a)| format!("  {}. {}", i + 1, a.describe())),
            );
            self.say(&self.pal().dim(&lines.join("\n")));
            return;
        }
        if args.trim() == "clear" && !std::path::Path::new("clear").exists() {
            let n = self.pending.len();
            self.pending.clear();
            self.say(&self.pal().dim(&format!("{n} attachment(s) removed")));
            return;
        }
        if args.trim().is_empty() {
            let t = self.pal().dim(
                "usage: /attach PATH… (sent with your next message; or write @path in a message)",
            );
            self.say(&t);
            return;
        }
        for w in args.split_whitespace() {
            match self.attach(&expand(w)) {
                Ok(a) => {
                    let t = format!("attached {}; it goes with your next message", a.describe());
                    self.say(&self.pal().dim(&t));
                    self.pending.push(a);
                }
                Err(e) => {
                    let t = self.pal().red(&format!("error: {e}"));
                    self.note(&t);
                }
            }
        }
    }

    /// The user message for `text`: queued attachments and `@path` files.
    /// `None` when an `@path` could not be attached (reported; nothing sent).
    pub(super) fn compose_message(&mut self, text: &str) -> Option<Prepared> {
        let mut items: Vec<Attachment> = std::mem::take(&mut self.pending);
        self.sent = Some((text.to_string(), items.clone()));
        for p in at_paths(text) {
            match self.attach(&p) {
                Ok(a) => items.push(a),
                Err(e) => {
                    let t = self.pal().red(&format!("error: {e}; message not sent"));
                    self.note(&t);
                    self.pending = items;
                    return None;
                }
            }
        }
        Some(self.session.prepare_with(text.trim_end(), &items))
    }

    /// The message was refused (an image the model cannot take): its
    /// `/attach` files are queued again for the next line, and its text
    /// fills the next prompt (the editor) or is shown to copy (line input).
    pub(super) fn keep_refused(&mut self) {
        let Some((text, mut items)) = self.sent.take() else {
            return;
        };
        let n = items.len();
        items.append(&mut self.pending);
        self.pending = items;
        let prefilled = matches!(self.input, super::input::Input::Editor(_))
            && !text.contains('\n')
            && self.typed.preset(&text);
        let mut note = if prefilled {
            "your message is kept: it is in the prompt below, edit it and press Enter".to_string()
        } else {
            format!("your message is kept: {}", text.trim_end())
        };
        if n > 0 {
            note.push_str(&format!(
                "; its {n} attachment(s) stay queued for your next line (/attach lists them, /attach clear drops them)"
            ));
        }
        let t = self.pal().yellow(&note);
        self.note(&t);
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn at_words_that_name_files_are_found() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("a.txt");
        std::fs::write(&f, "x").unwrap();
        let text = format!("read @{}, and ask @alice", f.display());
        assert_eq!(at_paths(&text), vec![f]);
    }
}
