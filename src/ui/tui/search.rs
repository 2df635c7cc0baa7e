//! Transcript search (Ctrl-F) and jumps between the user's messages
//! (Ctrl-Up / Ctrl-Down).
//!
//! Search looks through the transcript as rendered at the current width
//! (what is on screen, wrapped, not the raw Markdown), case-insensitively.
//! Typing picks the most recent match; Enter / Ctrl-N go to the next match
//! further down, Shift-Enter / Ctrl-P to the previous one further up (both
//! wrap around); the current match is highlighted and scrolled into view;
//! Esc (or Ctrl-C) closes the bar and leaves the view where it is. `/` is
//! not a search key: it starts slash commands in the composer.
//!
//! Invariant: the hits are recomputed from the cells on every change of the
//! query and on every step, so output that arrived meanwhile is searched too
//! and a hit never points past the transcript.
use super::cells::{CellKind, RenderCtx};
use super::state::{Action, TuiState};
use super::theme::Theme;
use super::wrap::truncate;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::{Position, Rect};
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthChar;

/// One match: cell index, line in the cell, display column and width.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hit {
    pub(crate) cell: usize,
    pub(crate) line: usize,
    pub(crate) col: u16,
    pub(crate) width: u16,
}

#[derive(Default, Debug)]
pub struct Search {
    pub(crate) query: String,
    pub hits: Vec<Hit>,
    pub(crate) current: Option<usize>,
}

impl Search {
    /// `2/5`, `no match`, or empty while the query is empty.
    pub fn position(&self) -> String {
        if self.query.is_empty() {
            return String::new();
        }
        match self.current {
            Some(i) => format!("{}/{}", i + 1, self.hits.len()),
            None => "no match".into(),
        }
    }
}

fn fold(c: char) -> char {
    c.to_lowercase().next().unwrap_or(c)
}

/// Every occurrence of `needle` (already folded) in `hay`, as (column, width).
fn find_all(hay: &str, needle: &[char]) -> Vec<(u16, u16)> {
    let chars: Vec<char> = hay.chars().collect();
    let mut out = Vec::new();
    if needle.is_empty() || chars.len() < needle.len() {
        return out;
    }
    let mut col = 0usize;
    let mut i = 0;
    while i + needle.len() <= chars.len() {
        if chars[i..i + needle.len()]
            .iter()
            .zip(needle)
            .all(|(a, b)| fold(*a) == *b)
        {
            let w: usize = chars[i..i + needle.len()]
                .iter()
                .map(|c| c.width().unwrap_or(0))
                .sum();
            out.push((col as u16, w.max(1) as u16));
            col += w;
            i += needle.len();
            continue;
        }
        col += chars[i].width().unwrap_or(0);
        i += 1;
    }
    out
}

impl TuiState {
    /// Ctrl-F: opens the search bar (or keeps the open one).
    pub(crate) fn open_search(&mut self) {
        self.popup = None;
        if self.search.is_none() {
            self.search = Some(Search::default());
        }
    }

    /// Recomputes the hits for the query; keeps the current hit's place.
    fn search_refresh(&mut self) {
        let Some(s) = self.search.take() else {
            return;
        };
        let needle: Vec<char> = s.query.chars().map(fold).collect();
        let mut hits = Vec::new();
        if !needle.is_empty() {
            let c = RenderCtx {
                theme: &self.theme,
                width: super::transcript::content_width(self.viewport.0),
                spinner: self.spinner,
                show_thinking: self.show_thinking,
                thinking_expanded: self.thinking_expanded,
                generation: self.generation,
            };
            for (ci, cell) in self.transcript.cells.iter_mut().enumerate() {
                for (li, line) in cell.lines(&c).iter().enumerate() {
                    let text: String = line.spans.iter().map(|sp| sp.content.as_ref()).collect();
                    for (col, width) in find_all(&text, &needle) {
                        hits.push(Hit {
                            cell: ci,
                            line: li,
                            col,
                            width,
                        });
                    }
                }
            }
        }
        let old = s.current.and_then(|i| s.hits.get(i).copied());
        let current = match old {
            Some(h) => hits
                .iter()
                .position(|x| (x.cell, x.line, x.col) >= (h.cell, h.line, h.col))
                .or_else(|| hits.len().checked_sub(1)),
            None => hits.len().checked_sub(1),
        };
        self.search = Some(Search {
            query: s.query,
            hits,
            current,
        });
    }

    /// Marks and scrolls to the current hit.
    fn search_show(&mut self) {
        let hit = self
            .search
            .as_ref()
            .and_then(|s| s.current.and_then(|i| s.hits.get(i).copied()));
        self.transcript.mark = hit;
        if let Some(h) = hit {
            self.with_transcript(|t, rows, c| t.reveal_line(h.cell, h.line, rows, c));
        }
    }

    fn search_step(&mut self, back: bool) {
        self.search_refresh();
        if let Some(s) = &mut self.search {
            let n = s.hits.len();
            if n > 0 {
                s.current = Some(match (s.current, back) {
                    (None, _) => n - 1,
                    (Some(0), true) => n - 1,
                    (Some(i), true) => i - 1,
                    (Some(i), false) => (i + 1) % n,
                });
            }
        }
        self.search_show();
    }

    pub(crate) fn close_search(&mut self) {
        self.search = None;
        self.transcript.mark = None;
    }

    /// A key while the search bar is open. Scroll keys still scroll.
    pub(super) fn search_key(&mut self, key: &KeyEvent) -> Vec<Action> {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let shift = key.modifiers.contains(KeyModifiers::SHIFT);
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        match key.code {
            KeyCode::Esc => self.close_search(),
            KeyCode::Char('c') if ctrl => self.close_search(),
            KeyCode::Enter if shift || alt => self.search_step(true),
            KeyCode::Enter => self.search_step(false),
            KeyCode::Char('n') if ctrl => self.search_step(false),
            KeyCode::Char('p') if ctrl => self.search_step(true),
            KeyCode::Down if !shift => self.search_step(false),
            KeyCode::Up if !shift => self.search_step(true),
            KeyCode::Char('f') if ctrl => self.search_step(false),
            KeyCode::Backspace => {
                if let Some(s) = &mut self.search {
                    s.query.pop();
                    s.current = None;
                }
                self.search_refresh();
                self.search_show();
            }
            KeyCode::Char('u') if ctrl => {
                if let Some(s) = &mut self.search {
                    s.query.clear();
                }
                self.search_refresh();
                self.search_show();
            }
            KeyCode::Char(c) if !ctrl && !alt => {
                if let Some(s) = &mut self.search {
                    s.query.push(c);
                    s.current = None;
                }
                self.search_refresh();
                self.search_show();
            }
            _ => {
                self.scroll_key(key);
            }
        }
        Vec::new()
    }

    /// Pasted text goes into the query (first line only).
    pub(super) fn search_paste(&mut self, text: &str) {
        if let Some(s) = &mut self.search {
            s.query.push_str(text.lines().next().unwrap_or(""));
            s.current = None;
        }
        self.search_refresh();
        self.search_show();
    }

    /// Ctrl-Up / Ctrl-Down: the previous / next message of the user's,
    /// brought to the top of the view; past the last one, follow the end.
    pub(super) fn jump_user(&mut self, back: bool) {
        let mut pos = (0, 0);
        self.with_transcript(|t, h, c| pos = t.top_pos(h, c));
        let (top, line) = pos;
        let is_user = |k: &CellKind| matches!(k, CellKind::User(_));
        let cells = &self.transcript.cells;
        let target = if back {
            // A user cell partly scrolled past counts as "above".
            let end = if line > 0 { top + 1 } else { top };
            cells[..end.min(cells.len())]
                .iter()
                .rposition(|x| is_user(&x.kind))
        } else {
            cells
                .iter()
                .enumerate()
                .skip(top + 1)
                .find(|(_, x)| is_user(&x.kind))
                .map(|(i, _)| i)
        };
        match target {
            Some(i) => self.with_transcript(|t, h, c| t.reveal(i, h, c)),
            None if !back => self.transcript.follow(),
            None => self.flash = Some("no earlier message of yours".into()),
        }
    }
}

/// The search bar over the composer's rule: `find: query  2/5 · keys`;
/// returns where the cursor goes (after the query).
pub(crate) fn render_bar(
    s: &Search,
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
    let label = " find: ";
    let pos = s.position();
    let tail = if pos.is_empty() {
        "   Enter next · Shift-Enter prev · Esc ".to_string()
    } else {
        format!("   {pos} · Enter next · Shift-Enter prev · Esc ")
    };
    // The end of a long query stays visible.
    let room = w.saturating_sub(label.len() + 1);
    let q = s.query.replace('\t', " ");
    let qw = super::wrap::width(&q);
    let shown = if qw > room {
        let n = q.chars().count();
        q.chars().skip(n.saturating_sub(room)).collect::<String>()
    } else {
        q
    };
    let used = label.len() + super::wrap::width(&shown);
    let mut tail = truncate(&tail, w.saturating_sub(used));
    let pad = w.saturating_sub(used + super::wrap::width(&tail));
    tail.push_str(&" ".repeat(pad));
    let style = if s.current.is_none() && !s.query.is_empty() {
        th.warning
    } else {
        th.status_bar
    };
    buf.set_line(
        area.x,
        area.y,
        &Line::from(vec![
            Span::styled(label, th.status_key),
            Span::styled(shown, th.status_bar),
            Span::styled(tail, style),
        ]),
        area.width,
    );
    Some(Position::new(
        area.x + used.min(w.saturating_sub(1)) as u16,
        area.y,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_case_insensitively_with_columns() {
        let n: Vec<char> = "ab".chars().collect();
        assert_eq!(find_all("xAB ab", &n), vec![(1, 2), (4, 2)]);
        let n: Vec<char> = "é".chars().collect();
        assert_eq!(find_all("日É", &n), vec![(2, 1)]);
        assert!(find_all("a", &n).is_empty());
    }
}
