//! The session picker for `/session resume` without an argument.
//!
//! Invariants: `selected` is a valid index whenever `sessions` is non-empty;
//! choosing a session returns its id, the caller resumes it through the
//! shared command module (same path as `/session resume <id>`).
use super::theme::Theme;
use super::wrap::truncate;
use crate::protocol::SessionMeta;
use crossterm::event::{KeyCode, KeyEvent};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Widget};

#[derive(Clone, Debug)]
pub struct Picker {
    pub(crate) sessions: Vec<SessionMeta>,
    pub(crate) selected: usize,
    pub(crate) current: String,
}

pub(crate) enum PickerAction {
    None,
    Close,
    Open(String),
}

impl Picker {
    pub(crate) fn new(sessions: Vec<SessionMeta>, current: &str) -> Self {
        let selected = sessions.iter().position(|s| s.id == current).unwrap_or(0);
        Picker {
            sessions,
            selected,
            current: current.to_string(),
        }
    }

    pub(crate) fn handle_key(&mut self, key: &KeyEvent) -> PickerAction {
        let n = self.sessions.len();
        match key.code {
            KeyCode::Esc | KeyCode::Char('q') => PickerAction::Close,
            KeyCode::Up | KeyCode::Char('k') => {
                self.selected = self.selected.saturating_sub(1);
                PickerAction::None
            }
            KeyCode::Down | KeyCode::Char('j') => {
                if self.selected + 1 < n {
                    self.selected += 1;
                }
                PickerAction::None
            }
            KeyCode::PageUp => {
                self.selected = self.selected.saturating_sub(10);
                PickerAction::None
            }
            KeyCode::PageDown => {
                self.selected = (self.selected + 10).min(n.saturating_sub(1));
                PickerAction::None
            }
            KeyCode::Home => {
                self.selected = 0;
                PickerAction::None
            }
            KeyCode::End => {
                self.selected = n.saturating_sub(1);
                PickerAction::None
            }
            KeyCode::Enter => match self.sessions.get(self.selected) {
                Some(s) => PickerAction::Open(s.id.clone()),
                None => PickerAction::Close,
            },
            _ => PickerAction::None,
        }
    }

    pub(crate) fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        let th = &theme.s;
        let Some(inner) = overlay_frame(
            area,
            buf,
            theme,
            (100, self.sessions.len()),
            " Resume a session ",
            " ↑↓ choose · Enter opens · Esc closes ",
        ) else {
            return;
        };
        if self.sessions.is_empty() {
            buf.set_line(
                inner.x,
                inner.y,
                &Line::from(Span::styled("no sessions yet", th.dim)),
                inner.width,
            );
            return;
        }
        let rows = usize::from(inner.height);
        let first = (self.selected + 1).saturating_sub(rows);
        let iw = usize::from(inner.width);
        for (row, (i, s)) in self
            .sessions
            .iter()
            .enumerate()
            .skip(first)
            .take(rows)
            .enumerate()
        {
            let mark = crate::ui::format::session_mark(s, &self.current);
            let title = crate::ui::format::session_title_marked(s);
            let project = crate::ui::format::session_project_name(s)
                .map(|p| format!("{p} · "))
                .unwrap_or_default();
            let meta = format!(
                "  {project}{} · {} msgs · {}",
                s.profile_id,
                s.message_count,
                crate::ui::format::ago(s.last_active)
            );
            let head = format!("{mark}{:>3}  {}  ", i + 1, &s.id[..8.min(s.id.len())]);
            let tw = iw.saturating_sub(head.chars().count() + meta.chars().count());
            // Padded by display width (the pin mark is two columns wide).
            let shown = truncate(&title, tw);
            let pad = " ".repeat(tw.saturating_sub(crate::ui::tui::wrap::width(&shown)));
            let text = format!("{head}{shown}{pad}{meta}");
            let st = if i == self.selected {
                th.popup_selected
            } else {
                th.overlay
            };
            buf.set_line(
                inner.x,
                inner.y + row as u16,
                &Line::from(Span::styled(format!("{:<iw$}", truncate(&text, iw)), st)),
                inner.width,
            );
        }
    }
}

/// Draws a centred list overlay (at most `max_w` wide, one row per item plus
/// borders) with a title and a key hint, and returns the area inside it;
/// `None` when the screen is too small to show one.
pub(super) fn overlay_frame(
    area: Rect,
    buf: &mut Buffer,
    theme: &Theme,
    (max_w, rows): (u16, usize),
    title: &str,
    hint: &str,
) -> Option<Rect> {
    let th = &theme.s;
    let w = area.width.saturating_sub(4).min(max_w);
    let rows = u16::try_from(rows).unwrap_or(u16::MAX).saturating_add(2);
    let h = area.height.saturating_sub(2).min(rows).max(3);
    if w < 20 || h < 3 {
        return None;
    }
    let rect = Rect::new(area.x + (area.width - w) / 2, area.y + 1, w, h);
    Clear.render(rect, buf);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(th.border)
        .style(th.overlay)
        .title(Span::styled(title.to_string(), th.overlay_title))
        .title_bottom(Span::styled(hint.to_string(), th.popup_hint));
    let inner = block.inner(rect);
    block.render(rect, buf);
    Some(inner)
}
