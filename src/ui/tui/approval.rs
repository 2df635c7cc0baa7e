//! The approval overlay for `approval_request`: allow once (y), for this
//! session (s), deny (n / Esc).
//!
//! Invariants: the command, path or URL (`summary`) is shown in full —
//! wrapped, never cut — and the answer goes back under the request's id.
use super::theme::Theme;
use super::wrap::wrap;
use crate::tools::Decision;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Widget};
use serde_json::Value;

#[derive(Clone, Debug, PartialEq)]
pub struct ApprovalPrompt {
    pub id: String,
    pub tool: String,
    pub summary: String,
    pub args: Value,
}

/// The decision a key stands for, if any.
pub fn decision_for(key: &KeyEvent) -> Option<Decision> {
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
    pub fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme, waiting: usize) {
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
        body.push(Line::default());
        for l in self.summary.lines() {
            body.extend(wrap(
                &Line::from(Span::styled(l.to_string(), th.code_inline)),
                iw,
                &[],
            ));
        }
        body.push(Line::default());
        body.push(Line::from(vec![
            Span::styled("[y]", th.status_key),
            Span::styled(" allow once   ", th.overlay),
            Span::styled("[s]", th.status_key),
            Span::styled(" allow for this session   ", th.overlay),
            Span::styled("[n]", th.status_key),
            Span::styled("/Esc deny", th.overlay),
        ]));
        let max_h = area.height.saturating_sub(2);
        let h = (body.len() as u16 + 2).min(max_h);
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
        // Keep the key line visible: cut the summary from its end if needed.
        let keys = body.pop().unwrap_or_default();
        let take = rows.saturating_sub(1).min(body.len());
        for (i, l) in body.iter().take(take).enumerate() {
            buf.set_line(inner.x, inner.y + i as u16, l, inner.width);
        }
        buf.set_line(inner.x, inner.y + take as u16, &keys, inner.width);
    }
}
