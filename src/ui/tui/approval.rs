//! The approval overlay for `approval_request`: allow once (y), for this
//! session (s), deny (n / Esc). A file write or append also shows the diff
//! against the file as it is now ([`super::approval_diff`]), scrollable
//! with ↑↓ / PgUp / PgDn.
//!
//! Invariants: the command, path or URL (`summary`) is shown in full —
//! wrapped, never cut — and the answer goes back under the request's id;
//! the key line always stays visible, the diff scrolls between them.
use super::approval_diff::DiffLine;
use super::theme::Theme;
use super::wrap::wrap;
use crate::protocol::Decision;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Widget};
use serde_json::Value;

#[derive(Clone, Debug, PartialEq)]
pub struct ApprovalPrompt {
    pub(crate) id: String,
    pub(crate) tool: String,
    pub(crate) summary: String,
    pub(crate) args: Value,
    /// For file writes: the change against the current file.
    pub(crate) diff: Option<Vec<DiffLine>>,
    /// What the sandbox lets a command do (terminal, code_exec).
    pub(crate) note: Option<String>,
    /// First diff line shown.
    pub(crate) scroll: usize,
    /// Diff rows visible at the last frame (for paging).
    pub(crate) diff_rows: usize,
}

/// The decision a key stands for, if any.
pub(crate) fn decision_for(key: &KeyEvent) -> Option<Decision> {
    if key.modifiers.contains(KeyModifiers::CONTROL) {
        return (key.code == KeyCode::Char('c')).then_some(Decision::Deny);
    }
    match key.code {
        KeyCode::Char('y') | KeyCode::Char('Y') => Some(Decision::Once),
        KeyCode::Char('s') | KeyCode::Char('S') => Some(Decision::Session),
        KeyCode::Char('n') | KeyCode::Char('N') | KeyCode::Esc => Some(Decision::Deny),
        _ => None,
    }
}

impl ApprovalPrompt {
    /// A prompt for a request; a call that edits a file gets its diff (the
    /// before/after pair the tool described with the request).
    pub fn new(
        id: &str,
        tool: &str,
        summary: &str,
        args: &Value,
        call: Option<&crate::protocol::CallInfo>,
    ) -> Self {
        ApprovalPrompt {
            id: id.to_string(),
            tool: tool.to_string(),
            summary: summary.to_string(),
            args: args.clone(),
            diff: call.and_then(super::approval_diff::for_call),
            note: None,
            scroll: 0,
            diff_rows: 0,
        }
    }

    /// Scrolls the diff; false when the key is not a scroll key or there is
    /// no diff (then the transcript scrolls as before).
    pub(crate) fn scroll_key(&mut self, key: &KeyEvent) -> bool {
        let Some(d) = &self.diff else {
            return false;
        };
        let page = self.diff_rows.max(1);
        let max = d.len().saturating_sub(page);
        self.scroll = match key.code {
            KeyCode::Up => self.scroll.saturating_sub(1),
            KeyCode::Down => self.scroll + 1,
            KeyCode::PageUp => self.scroll.saturating_sub(page),
            KeyCode::PageDown => self.scroll + page,
            KeyCode::Home => 0,
            KeyCode::End => max,
            _ => return false,
        }
        .min(max);
        true
    }

    /// The answer keys, in the longest wording that fits `width` (a key is
    /// never cut: narrow overlays get shorter words).
    fn keys_line(width: u16, th: &super::theme::Styles) -> Line<'static> {
        const WORDINGS: [[&str; 3]; 3] = [
            [" allow once   ", " allow for this session   ", "/Esc deny"],
            [" once  ", " session  ", "/Esc deny"],
            ["", " ", "/Esc"],
        ];
        let fits = |w: &[&str; 3]| 9 + w.iter().map(|s| s.chars().count()).sum::<usize>();
        let words = WORDINGS
            .iter()
            .find(|w| fits(w) <= usize::from(width))
            .unwrap_or(&WORDINGS[2]);
        Line::from(vec![
            Span::styled("[y]", th.status_key),
            Span::styled(words[0], th.overlay),
            Span::styled("[s]", th.status_key),
            Span::styled(words[1], th.overlay),
            Span::styled("[n]", th.status_key),
            Span::styled(words[2], th.overlay),
        ])
    }

    fn diff_line(l: &DiffLine, th: &super::theme::Styles) -> Line<'static> {
        let (mark, text, style) = match l {
            DiffLine::Header(t) => ("", t.as_str(), th.accent),
            DiffLine::Added(t) => ("+", t.as_str(), th.tool_ok),
            DiffLine::Removed(t) => ("-", t.as_str(), th.tool_failed),
            DiffLine::Context(t) => (" ", t.as_str(), th.dim),
        };
        Line::from(Span::styled(format!("{mark}{text}"), style))
    }

    pub(crate) fn render(&mut self, area: Rect, buf: &mut Buffer, theme: &Theme, waiting: usize) {
        let th = &theme.s;
        let w = area.width.saturating_sub(4).min(90);
        if w < 20 || area.height < 7 {
            return;
        }
        let iw = usize::from(w - 4);
        let mut body: Vec<Line<'static>> = vec![Line::from(vec![
            Span::styled("Navi wants to run ", th.overlay),
            Span::styled(self.tool.clone(), th.overlay_title),
            Span::styled(":", th.overlay),
        ])];
        let has_diff = self.diff.as_ref().is_some_and(|d| !d.is_empty());
        if !has_diff {
            body.push(Line::default());
        }
        for l in self.summary.lines() {
            body.extend(wrap(
                &Line::from(Span::styled(l.to_string(), th.code_inline)),
                iw,
                &[],
            ));
        }
        if let Some(n) = &self.note {
            body.push(Line::default());
            body.extend(wrap(&Line::from(Span::styled(n.clone(), th.dim)), iw, &[]));
        }
        body.push(Line::default());
        let diff: Vec<Line<'static>> = self
            .diff
            .iter()
            .flatten()
            .map(|l| Self::diff_line(l, th))
            .collect();
        let max_h = area.height.saturating_sub(2);
        let wanted = body.len() + diff.len() + usize::from(!diff.is_empty()) + 1;
        let h = (wanted as u16 + 2).min(max_h);
        let rect = Rect::new(
            area.x + (area.width - w) / 2,
            area.y + (area.height.saturating_sub(h)) / 2,
            w,
            h,
        );
        Clear.render(rect, buf);
        let title = if waiting > 1 {
            format!(" Approval needed (1 of {waiting}) ")
        } else {
            " Approval needed ".to_string()
        };
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(th.overlay_title)
            .style(th.overlay)
            .title(Span::styled(title, th.overlay_title));
        let inner = block.inner(rect);
        block.render(rect, buf);
        let inner = Rect::new(
            inner.x + 1,
            inner.y,
            inner.width.saturating_sub(2),
            inner.height,
        );
        let rows = usize::from(inner.height);
        let keys = Self::keys_line(inner.width, th);
        // Keep the key line visible. With a diff, the summary keeps at most
        // half the rows and the diff scrolls in the rest; without one the
        // summary is cut from its end if needed.
        let room = rows.saturating_sub(1);
        let take = if diff.is_empty() {
            room.min(body.len())
        } else {
            body.len().min(room.div_ceil(3))
        };
        for (i, l) in body.iter().take(take).enumerate() {
            buf.set_line(inner.x, inner.y + i as u16, l, inner.width);
        }
        let diff_rows = room - take;
        self.diff_rows = diff_rows;
        self.scroll = self.scroll.min(diff.len().saturating_sub(diff_rows));
        for (i, l) in diff.iter().skip(self.scroll).take(diff_rows).enumerate() {
            buf.set_line(inner.x, inner.y + (take + i) as u16, l, inner.width);
        }
        if diff.len() > diff_rows && diff_rows > 0 {
            let more = format!(
                " ↑↓ PgUp/PgDn scroll · lines {}-{} of {} ",
                self.scroll + 1,
                (self.scroll + diff_rows).min(diff.len()),
                diff.len()
            );
            let w = more.chars().count() as u16;
            if rect.width > w + 4 {
                buf.set_line(
                    rect.right() - w - 2,
                    rect.bottom() - 1,
                    &Line::from(Span::styled(more, th.overlay_title)),
                    w,
                );
            }
        }
        buf.set_line(inner.x, inner.y + room as u16, &keys, inner.width);
    }
}
