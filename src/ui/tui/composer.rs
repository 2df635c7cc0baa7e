//! The composer: a multi-line input with history and paste.
//!
//! Invariants: `cursor` is always a char boundary of `text`; Enter submits,
//! Shift/Alt+Enter and Ctrl+J insert a newline; Up/Down move between lines
//! and reach the history only from the first/last line; pasted text is
//! inserted as is (CRLF normalised), never submitted.
use super::wrap;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::{Position, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthChar;

/// Most text rows the composer grows to.
pub(crate) const MAX_ROWS: u16 = 8;

#[derive(Debug, PartialEq, Eq)]
pub(crate) enum ComposerAction {
    Submit,
    Changed,
    Moved,
    Ignored,
}

#[derive(Default, Debug)]
pub struct Composer {
    pub text: String,
    pub(crate) cursor: usize,
    history: Vec<String>,
    hist_pos: Option<usize>,
    draft: String,
    /// Sent entries not yet written to the history file.
    pub(crate) fresh: Vec<String>,
    /// Large pastes shown as placeholders (see `paste`).
    pastes: super::paste::Pastes,
}

impl Composer {
    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    pub(crate) fn set_text(&mut self, s: &str) {
        self.text = s.to_string();
        self.cursor = self.text.len();
    }

    pub fn clear(&mut self) {
        self.text.clear();
        self.cursor = 0;
        self.hist_pos = None;
        self.pastes.clear();
    }

    /// The text as it will be sent: large pastes in place of their placeholders.
    pub(crate) fn expanded(&self) -> String {
        self.pastes.expand(&self.text)
    }

    /// Alt-V: the pasted text itself replaces its placeholders.
    pub(crate) fn expand_pastes(&mut self) -> bool {
        if self.pastes.is_empty() {
            return false;
        }
        let t = self.expanded();
        self.pastes.clear();
        self.set_text(&t);
        true
    }

    /// Takes the text out for sending and remembers it in the history.
    pub(crate) fn take(&mut self) -> String {
        let t = self.pastes.expand(&std::mem::take(&mut self.text));
        self.pastes.clear();
        self.cursor = 0;
        self.hist_pos = None;
        if !t.trim().is_empty() && self.history.last() != Some(&t) {
            self.history.push(t.clone());
            self.fresh.push(t.clone());
        }
        t
    }

    /// Puts `older` (the history file, oldest first) before this run's entries.
    pub fn preload(&mut self, mut older: Vec<String>) {
        if let Some(p) = &mut self.hist_pos {
            *p += older.len();
        }
        older.append(&mut self.history);
        self.history = older;
    }

    /// The history, oldest first.
    pub(crate) fn history(&self) -> &[String] {
        &self.history
    }

    pub(crate) fn insert(&mut self, s: &str) {
        self.text.insert_str(self.cursor, s);
        self.cursor += s.len();
    }

    pub(crate) fn paste(&mut self, s: &str) {
        let s = s.replace("\r\n", "\n").replace('\r', "\n");
        let s = self.pastes.insertion(s);
        self.insert(&s);
    }

    fn prev_boundary(&self) -> usize {
        self.text[..self.cursor]
            .char_indices()
            .next_back()
            .map_or(0, |(i, _)| i)
    }

    fn next_boundary(&self) -> usize {
        self.text[self.cursor..]
            .chars()
            .next()
            .map_or(self.cursor, |c| self.cursor + c.len_utf8())
    }

    fn line_start(&self) -> usize {
        self.text[..self.cursor].rfind('\n').map_or(0, |i| i + 1)
    }

    fn line_end(&self) -> usize {
        self.text[self.cursor..]
            .find('\n')
            .map_or(self.text.len(), |i| self.cursor + i)
    }

    fn word_back(&self) -> usize {
        let before = &self.text[..self.cursor];
        let trimmed = before.trim_end();
        trimmed.rfind(|c: char| c.is_whitespace()).map_or(0, |i| {
            i + trimmed[i..].chars().next().map_or(1, char::len_utf8)
        })
    }

    fn word_forward(&self) -> usize {
        let after = &self.text[self.cursor..];
        let skip_ws = after.len() - after.trim_start().len();
        let rest = &after[skip_ws..];
        let word = rest.find(char::is_whitespace).unwrap_or(rest.len());
        self.cursor + skip_ws + word
    }

    /// Moves to the same column on the line above (`up`) or below; false at
    /// the first/last line.
    fn vertical(&mut self, up: bool) -> bool {
        let start = self.line_start();
        let col = self.text[start..self.cursor].chars().count();
        let target_start = if up {
            if start == 0 {
                return false;
            }
            self.text[..start - 1].rfind('\n').map_or(0, |i| i + 1)
        } else {
            let end = self.line_end();
            if end >= self.text.len() {
                return false;
            }
            end + 1
        };
        let line_end = self.text[target_start..]
            .find('\n')
            .map_or(self.text.len(), |i| target_start + i);
        let line = &self.text[target_start..line_end];
        self.cursor = target_start + line.char_indices().nth(col).map_or(line.len(), |(i, _)| i);
        true
    }

    fn history_step(&mut self, back: bool) -> ComposerAction {
        if self.history.is_empty() {
            return ComposerAction::Ignored;
        }
        let pos = match (self.hist_pos, back) {
            (None, true) => {
                self.draft = self.text.clone();
                Some(self.history.len() - 1)
            }
            (None, false) => return ComposerAction::Ignored,
            (Some(0), true) => Some(0),
            (Some(p), true) => Some(p - 1),
            (Some(p), false) if p + 1 < self.history.len() => Some(p + 1),
            (Some(_), false) => None,
        };
        self.hist_pos = pos;
        let text = match pos {
            Some(p) => self.history[p].clone(),
            None => std::mem::take(&mut self.draft),
        };
        self.set_text(&text);
        ComposerAction::Changed
    }

    pub(crate) fn handle_key(&mut self, key: &KeyEvent) -> ComposerAction {
        use ComposerAction::*;
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        let shift = key.modifiers.contains(KeyModifiers::SHIFT);
        match key.code {
            KeyCode::Enter if shift || alt || ctrl => {
                self.insert("\n");
                Changed
            }
            KeyCode::Enter => Submit,
            KeyCode::Char('j') if ctrl => {
                self.insert("\n");
                Changed
            }
            KeyCode::Char('v') if alt => {
                if self.expand_pastes() {
                    Changed
                } else {
                    Ignored
                }
            }
            KeyCode::Char('a') if ctrl => {
                self.cursor = self.line_start();
                Moved
            }
            KeyCode::Char('e') if ctrl => {
                self.cursor = self.line_end();
                Moved
            }
            KeyCode::Char('u') if ctrl => {
                let s = self.line_start();
                let s = if s == self.cursor && s > 0 { s - 1 } else { s };
                self.text.replace_range(s..self.cursor, "");
                self.cursor = s;
                Changed
            }
            KeyCode::Char('k') if ctrl => {
                let e = self.line_end();
                let e = if e == self.cursor && e < self.text.len() {
                    e + 1
                } else {
                    e
                };
                self.text.replace_range(self.cursor..e, "");
                Changed
            }
            KeyCode::Char('w') if ctrl => {
                let s = self.word_back();
                self.text.replace_range(s..self.cursor, "");
                self.cursor = s;
                Changed
            }
            KeyCode::Backspace if alt || ctrl => {
                let s = self.word_back();
                self.text.replace_range(s..self.cursor, "");
                self.cursor = s;
                Changed
            }
            KeyCode::Char(c) if !ctrl => {
                let mut b = [0u8; 4];
                self.insert(c.encode_utf8(&mut b));
                Changed
            }
            KeyCode::Backspace => {
                if self.cursor == 0 {
                    return Ignored;
                }
                let p = self.prev_boundary();
                self.text.replace_range(p..self.cursor, "");
                self.cursor = p;
                Changed
            }
            KeyCode::Delete => {
                let n = self.next_boundary();
                if n == self.cursor {
                    return Ignored;
                }
                self.text.replace_range(self.cursor..n, "");
                Changed
            }
            KeyCode::Left if ctrl || alt => {
                self.cursor = self.word_back();
                Moved
            }
            KeyCode::Right if ctrl || alt => {
                self.cursor = self.word_forward();
                Moved
            }
            KeyCode::Left => {
                self.cursor = self.prev_boundary();
                Moved
            }
            KeyCode::Right => {
                self.cursor = self.next_boundary();
                Moved
            }
            KeyCode::Home => {
                self.cursor = self.line_start();
                Moved
            }
            KeyCode::End => {
                self.cursor = self.line_end();
                Moved
            }
            KeyCode::Up => {
                if self.vertical(true) {
                    Moved
                } else {
                    self.history_step(true)
                }
            }
            KeyCode::Down => {
                if self.vertical(false) {
                    Moved
                } else {
                    self.history_step(false)
                }
            }
            _ => Ignored,
        }
    }

    /// Visual rows (wrapped at word boundaries at `width`; a word longer
    /// than the row is cut) and the cursor's (row, col).
    fn layout(&self, width: usize) -> (Vec<String>, (usize, usize)) {
        let width = width.max(1);
        // Each row: (byte index, char, display width); a newline ends its
        // row as a zero-width entry so the cursor can sit on it.
        let mut rows: Vec<Vec<(usize, char, usize)>> = vec![Vec::new()];
        let mut col = 0usize;
        for (i, ch) in self.text.char_indices() {
            if ch == '\n' {
                if let Some(r) = rows.last_mut() {
                    r.push((i, ch, 0));
                }
                rows.push(Vec::new());
                col = 0;
                continue;
            }
            let cw = ch.width().unwrap_or(0);
            // Spaces may hang past the edge; a word that does not fit moves
            // to the next row whole, from after the row's last space.
            if col + cw > width && !ch.is_whitespace() {
                let Some(row) = rows.last_mut() else { break };
                let tail = match row.iter().rposition(|(_, c, _)| c.is_whitespace()) {
                    Some(k) => row.split_off(k + 1),
                    None => Vec::new(),
                };
                col = tail.iter().map(|e| e.2).sum();
                rows.push(tail);
                if col + cw > width {
                    // The word alone is wider than the row: cut it.
                    let tail = match rows.last_mut() {
                        Some(r) if !r.is_empty() => std::mem::take(r),
                        _ => Vec::new(),
                    };
                    if !tail.is_empty() {
                        if let Some(r) = rows.last_mut() {
                            *r = tail;
                        }
                        rows.push(Vec::new());
                        col = 0;
                    }
                }
            }
            if let Some(r) = rows.last_mut() {
                r.push((i, ch, cw));
            }
            col += cw;
        }
        let cur = if self.cursor >= self.text.len() {
            if col >= width {
                rows.push(Vec::new());
                col = 0;
            }
            (rows.len() - 1, col)
        } else {
            rows.iter()
                .enumerate()
                .find_map(|(ri, r)| {
                    let mut c = 0;
                    for e in r {
                        if e.0 == self.cursor {
                            return Some((ri, c));
                        }
                        c += e.2;
                    }
                    None
                })
                .unwrap_or((0, 0))
        };
        let text = rows
            .iter()
            .map(|r| {
                r.iter()
                    .filter(|e| e.1 != '\n')
                    .map(|e| if e.1 == '\t' { ' ' } else { e.1 })
                    .collect()
            })
            .collect();
        (text, cur)
    }

    /// Text rows needed at `width` (1..=MAX_ROWS).
    pub(crate) fn rows(&self, width: u16) -> u16 {
        let n = self.layout(usize::from(width)).0.len();
        (n as u16).clamp(1, MAX_ROWS)
    }

    /// Draws the text (or the placeholder) and returns the cursor position.
    pub(crate) fn render(
        &self,
        area: Rect,
        buf: &mut Buffer,
        text_style: Style,
        placeholder: (&str, Style),
    ) -> Option<Position> {
        if area.width == 0 || area.height == 0 {
            return None;
        }
        if self.text.is_empty() {
            let p = wrap::truncate(placeholder.0, usize::from(area.width));
            buf.set_line(
                area.x,
                area.y,
                &Line::from(Span::styled(p, placeholder.1)),
                area.width,
            );
            return Some(Position::new(area.x, area.y));
        }
        let (rows, (crow, ccol)) = self.layout(usize::from(area.width));
        let h = usize::from(area.height);
        let first = (crow + 1).saturating_sub(h);
        for (i, r) in rows.iter().skip(first).take(h).enumerate() {
            buf.set_line(
                area.x,
                area.y + i as u16,
                &Line::from(Span::styled(r.clone(), text_style)),
                area.width,
            );
        }
        Some(Position::new(
            area.x + ccol.min(usize::from(area.width)) as u16,
            area.y + (crow - first) as u16,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: KeyCode, m: KeyModifiers) -> KeyEvent {
        KeyEvent::new(code, m)
    }

    fn typed(c: &mut Composer, s: &str) {
        for ch in s.chars() {
            c.handle_key(&key(KeyCode::Char(ch), KeyModifiers::NONE));
        }
    }

    #[test]
    fn editing_newlines_and_history() {
        let mut c = Composer::default();
        typed(&mut c, "héllo");
        assert_eq!(
            c.handle_key(&key(KeyCode::Char('j'), KeyModifiers::CONTROL)),
            ComposerAction::Changed
        );
        typed(&mut c, "world");
        c.handle_key(&key(KeyCode::Enter, KeyModifiers::SHIFT));
        assert_eq!(c.text, "héllo\nworld\n");
        c.handle_key(&key(KeyCode::Backspace, KeyModifiers::NONE));
        c.handle_key(&key(KeyCode::Up, KeyModifiers::NONE));
        c.handle_key(&key(KeyCode::Left, KeyModifiers::NONE));
        c.handle_key(&key(KeyCode::Backspace, KeyModifiers::NONE));
        assert_eq!(c.text, "hélo\nworld");
        assert_eq!(
            c.handle_key(&key(KeyCode::Enter, KeyModifiers::NONE)),
            ComposerAction::Submit
        );
        assert_eq!(c.take(), "hélo\nworld");
        typed(&mut c, "second");
        c.take();
        typed(&mut c, "draft");
        c.handle_key(&key(KeyCode::Up, KeyModifiers::NONE));
        assert_eq!(c.text, "second");
        c.handle_key(&key(KeyCode::Up, KeyModifiers::NONE));
        // Multi-line history entry: the cursor lands at its end (last line).
        assert_eq!(c.text, "hélo\nworld");
        c.handle_key(&key(KeyCode::Down, KeyModifiers::NONE));
        assert_eq!(c.text, "second");
        c.handle_key(&key(KeyCode::Down, KeyModifiers::NONE));
        assert_eq!(c.text, "draft");
        c.handle_key(&key(KeyCode::Char('w'), KeyModifiers::CONTROL));
        assert_eq!(c.text, "");
        c.paste("a\r\nb");
        assert_eq!(c.text, "a\nb");
    }

    #[test]
    fn layout_wraps_and_tracks_cursor() {
        let mut c = Composer::default();
        c.set_text("abcdef");
        let (rows, cur) = c.layout(4);
        assert_eq!(rows, vec!["abcd", "ef"]);
        assert_eq!(cur, (1, 2));
        c.set_text("abcd");
        assert_eq!(c.layout(4).1, (1, 0));
        assert_eq!(c.rows(4), 2);
    }

    #[test]
    fn layout_wraps_at_word_boundaries_and_keeps_the_cursor() {
        let mut c = Composer::default();
        c.set_text("hello big world");
        let (rows, cur) = c.layout(10);
        assert_eq!(rows, vec!["hello big ", "world"]);
        assert_eq!(cur, (1, 5));
        // The cursor on the 'w' of the moved word.
        c.cursor = c.text.find('w').unwrap();
        assert_eq!(c.layout(10).1, (1, 0));
        // On the space before it: end of the first row.
        c.cursor = 9;
        assert_eq!(c.layout(10).1, (0, 9));
        // A word longer than the row is cut.
        c.set_text("a verylongword");
        assert_eq!(c.layout(6).0, vec!["a ", "verylo", "ngword", ""]);
        // Newlines and wide characters.
        c.set_text("日本語 日本\nx");
        c.cursor = "日本語 日本\n".len();
        let (rows, cur) = c.layout(8);
        assert_eq!(rows, vec!["日本語 ", "日本", "x"]);
        assert_eq!(cur, (2, 0));
    }
}
