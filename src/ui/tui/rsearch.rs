//! Ctrl-R: reverse search through the input history, as in a shell.
//!
//! Typing narrows to the most recent entry containing the text
//! (case-insensitive), shown in the composer; Ctrl-R again goes to an older
//! one; Enter keeps the found entry in the composer to edit or send; Esc,
//! Ctrl-G or Ctrl-C go back to the draft as it was. Any other key keeps the
//! entry and acts as usual (a cursor key starts editing it).
use super::state::{Action, TuiState};
use super::theme::Theme;
use super::wrap::truncate;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::{Position, Rect};
use ratatui::text::{Line, Span};

#[derive(Debug, Default)]
pub struct RevSearch {
    pub(crate) query: String,
    /// The history index shown (`None`: no match yet / none).
    pub(crate) pos: Option<usize>,
    /// The composer text before Ctrl-R, restored on cancel.
    pub(crate) draft: String,
}

impl TuiState {
    /// Ctrl-R: opens the search, or steps to an older match.
    pub(super) fn reverse_search(&mut self) {
        match &self.rsearch {
            None => {
                self.popup = None;
                self.rsearch = Some(RevSearch {
                    draft: self.composer.text.clone(),
                    ..RevSearch::default()
                });
            }
            Some(r) => {
                let before = r.pos.unwrap_or(self.composer.history().len());
                self.rsearch_find(before, true);
            }
        }
    }

    /// Shows the newest entry before index `before` that contains the query;
    /// when none does, a step (`older`) keeps the shown one, typing shows
    /// "no match".
    fn rsearch_find(&mut self, before: usize, older: bool) {
        let Some(r) = &mut self.rsearch else {
            return;
        };
        let q = r.query.to_lowercase();
        let hist = self.composer.history();
        let found = hist[..before.min(hist.len())]
            .iter()
            .rposition(|h| h.to_lowercase().contains(&q));
        match found {
            Some(i) => {
                r.pos = Some(i);
                let t = hist[i].clone();
                self.composer.set_text(&t);
            }
            None if r.query.is_empty() => {}
            None if older => self.flash = Some("no older match".into()),
            None => r.pos = None,
        }
    }

    /// A key while the search is open; `None` when the key should go on to
    /// the composer (the found entry is kept).
    pub(super) fn rsearch_key(&mut self, key: &KeyEvent) -> Option<Vec<Action>> {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        match key.code {
            KeyCode::Char('r') if ctrl => self.reverse_search(),
            KeyCode::Esc | KeyCode::Char('g') | KeyCode::Char('c')
                if key.code == KeyCode::Esc || ctrl =>
            {
                if let Some(r) = self.rsearch.take() {
                    self.composer.set_text(&r.draft);
                }
            }
            KeyCode::Enter if key.modifiers.is_empty() => self.rsearch = None,
            KeyCode::Backspace => {
                if let Some(r) = &mut self.rsearch {
                    r.query.pop();
                    r.pos = None;
                }
                let n = self.composer.history().len();
                self.rsearch_find(n, false);
            }
            KeyCode::Char(c) if !ctrl && !alt => {
                let from = match &mut self.rsearch {
                    Some(r) => {
                        r.query.push(c);
                        // The shown entry may still match: search from it.
                        r.pos.map_or(usize::MAX, |p| p + 1)
                    }
                    None => return Some(Vec::new()),
                };
                let n = self.composer.history().len();
                self.rsearch_find(from.min(n), false);
            }
            _ => {
                self.rsearch = None;
                return None;
            }
        }
        Some(Vec::new())
    }
}

/// `reverse search: query` over the composer's rule; the cursor after it.
pub(crate) fn render_bar(
    r: &RevSearch,
    area: Rect,
    buf: &mut Buffer,
    theme: &Theme,
) -> Option<Position> {
    if area.width < 8 {
        return None;
    }
    let th = &theme.s;
    buf.set_style(area, th.status_bar);
    let w = usize::from(area.width);
    let label = " reverse search: ";
    let q = truncate(&r.query, w.saturating_sub(label.len() + 1));
    let used = label.len() + super::wrap::width(&q);
    let tail = if r.pos.is_none() && !r.query.is_empty() {
        "   no match · Esc back to the draft"
    } else {
        "   Ctrl-R older · Enter keep · Esc back to the draft"
    };
    let tail = truncate(tail, w.saturating_sub(used));
    buf.set_line(
        area.x,
        area.y,
        &Line::from(vec![
            Span::styled(label, th.status_key),
            Span::styled(q, th.status_bar),
            Span::styled(tail, th.status_bar),
        ]),
        area.width,
    );
    Some(Position::new(
        area.x + used.min(w.saturating_sub(1)) as u16,
        area.y,
    ))
}
