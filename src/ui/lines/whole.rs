//! The parts of [`LineRenderer`] that print whole things: an answer, the todo
//! changes, the status line after a turn.
use super::markdown::Markdown;
use super::{LineRenderer, Piece, Stream, tokens_short};
use crate::protocol::{TodoItem, TodoStatus};
use std::time::Duration;

impl LineRenderer {
    /// A whole answer at once, rendered as Markdown.
    pub(super) fn answer(&mut self, out: &mut Vec<Piece>, content: &str) {
        if content.trim().is_empty() {
            return;
        }
        self.break_line(out);
        let color = self.opts.color && self.opts.markdown;
        let mut text = Markdown::render(content, color, &self.opts.code);
        if !text.ends_with('\n') {
            text.push('\n');
        }
        out.push(Piece {
            stream: Stream::Answer,
            text,
        });
    }

    pub(super) fn todos(&mut self, out: &mut Vec<Piece>, items: &[TodoItem]) {
        let changed: Vec<&TodoItem> = items
            .iter()
            .filter(|i| self.todos.get(&i.id) != Some(&i.status))
            .collect();
        if changed.is_empty() {
            return;
        }
        for i in &changed {
            let t = format!("  {} {}. {}", i.status.checkbox(), i.id, i.text);
            let t = if i.status == TodoStatus::Done {
                self.pal.dim(&t)
            } else {
                t
            };
            self.line(out, Stream::Info, t);
        }
        self.todos = items.iter().map(|i| (i.id, i.status)).collect();
    }

    /// The status line after a turn: context use, tokens out, time, model.
    pub(crate) fn status_line(&self, elapsed: Duration) -> String {
        let u = &self.usage;
        let mut parts = Vec::new();
        if u.window > 0 {
            let pct = u.context.saturating_mul(100) / u.window.max(1);
            parts.push(format!(
                "context {} ({pct}%)",
                tokens_short(u.context, u.window)
            ));
        } else if u.context > 0 {
            parts.push(format!("context {} tokens", u.context));
        }
        if u.completion > 0 {
            parts.push(format!("{} tokens out", u.completion));
        }
        parts.push(format!("{:.1}s", elapsed.as_secs_f64()));
        if !self.model.is_empty() {
            parts.push(self.model.clone());
        }
        self.pal.dim(&format!("── {} ──", parts.join(" · ")))
    }
}
