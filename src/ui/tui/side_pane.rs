//! The side pane: the todo list (live from `todo_updated`, which planning
//! also sends for plan steps) and the latest subagent activity.
//!
//! Invariants: holds at most `MAX_ACTIVITY` activity lines (oldest dropped);
//! draws only inside its area; hidden by the layout on narrow terminals.
use super::theme::Theme;
use super::wrap::{truncate, wrap};
use crate::protocol::{TodoItem, TodoStatus};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Widget};
use std::collections::VecDeque;

const MAX_ACTIVITY: usize = 8;

/// Terminals narrower than this hide the side pane.
pub(crate) const MIN_TOTAL_WIDTH: u16 = 100;
pub(crate) const WIDTH: u16 = 34;

#[derive(Default, Debug)]
pub struct SidePane {
    pub todos: Vec<TodoItem>,
    pub(crate) recent: VecDeque<(String, String)>,
}

impl SidePane {
    pub(crate) fn activity(&mut self, agent: &str, what: &str) {
        if self.recent.len() >= MAX_ACTIVITY {
            self.recent.pop_front();
        }
        self.recent.push_back((agent.to_string(), what.to_string()));
    }

    pub(crate) fn clear(&mut self) {
        self.todos.clear();
        self.recent.clear();
    }

    pub fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        let th = &theme.s;
        let block = Block::default()
            .borders(Borders::LEFT)
            .border_style(th.border);
        let inner = block.inner(area);
        block.render(area, buf);
        if inner.width < 4 || inner.height == 0 {
            return;
        }
        let w = usize::from(inner.width - 1);
        let mut lines: Vec<Line<'static>> = Vec::new();
        let done = self
            .todos
            .iter()
            .filter(|t| t.status == TodoStatus::Done)
            .count();
        let count = if self.todos.is_empty() {
            String::new()
        } else {
            format!(" {done}/{}", self.todos.len())
        };
        lines.push(Line::from(vec![
            Span::styled("Todo", th.side_title),
            Span::styled(count, th.dim),
        ]));
        if self.todos.is_empty() {
            lines.push(Line::from(Span::styled("no todo list yet", th.dim)));
        }
        for t in &self.todos {
            let st = match t.status {
                TodoStatus::Done => th.todo_done,
                TodoStatus::InProgress => th.todo_in_progress,
                TodoStatus::Failed => th.todo_failed,
                TodoStatus::Skipped => th.todo_skipped,
                TodoStatus::Pending => th.todo_pending,
            };
            let mark = t.status.glyph();
            let line = Line::from(vec![
                Span::styled(format!("{mark} "), st),
                Span::styled(format!("{}. {}", t.id, t.text), st),
            ]);
            lines.extend(wrap(&line, w, &[Span::raw("  ")]));
        }
        lines.push(Line::default());
        lines.push(Line::from(Span::styled("Subagents", th.side_title)));
        if self.recent.is_empty() {
            lines.push(Line::from(Span::styled("none yet", th.dim)));
        }
        for (agent, what) in &self.recent {
            lines.push(Line::from(vec![
                Span::styled(format!("{agent} "), th.subagent),
                Span::styled(truncate(what, w.saturating_sub(agent.len() + 1)), th.dim),
            ]));
        }
        for (i, l) in lines.iter().take(usize::from(inner.height)).enumerate() {
            buf.set_line(inner.x + 1, inner.y + i as u16, l, inner.width - 1);
        }
    }
}
