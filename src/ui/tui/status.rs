//! The status bar: profile, model, session title, context use, run state.
//!
//! Invariant: one line; the right part (context use and state) is always
//! shown, the title is cut first when the line is too narrow.
use super::state::{RunState, TuiState};
use super::wrap::{self, truncate};
use crate::ui::format::tokens_short;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

pub fn render(st: &TuiState, area: Rect, buf: &mut Buffer) {
    let th = &st.theme.s;
    buf.set_style(area, th.status_bar);
    let s = &st.status;
    let state_style = match st.run {
        RunState::Idle => th.status_idle,
        RunState::Stopping => th.status_stopping,
        _ => th.status_busy,
    };
    let spin = if st.running && st.run != RunState::Stopping {
        format!(
            "{} ",
            super::cells::SPINNER[st.spinner % super::cells::SPINNER.len()]
        )
    } else {
        String::new()
    };
    let ctx = if s.ctx_max > 0 {
        format!(" {} ", tokens_short(s.ctx_used, s.ctx_max))
    } else if s.ctx_used > 0 {
        let used = tokens_short(s.ctx_used, 0);
        format!(" {}/– ", used.split('/').next().unwrap_or(""))
    } else {
        " –/– ".to_string()
    };
    let queued = if st.queue.is_empty() {
        String::new()
    } else {
        format!(" {} queued ·", st.queue.len())
    };
    let right = vec![
        Span::styled(queued, th.status_bar),
        Span::styled(ctx, th.status_bar),
        Span::styled(format!(" {spin}{} ", st.run.label()), state_style),
    ];
    let right_w: usize = right.iter().map(|s| wrap::width(&s.content)).sum();
    let model = match (s.model.is_empty(), s.model_note.is_empty()) {
        (false, _) => &s.model,
        (true, false) => &s.model_note,
        (true, true) => "model: on first message",
    };
    let mut left = vec![
        Span::styled(" navi ", th.status_key),
        Span::styled(format!("{} · {} ", s.profile, model), th.status_bar),
    ];
    let used: usize = left.iter().map(|s| wrap::width(&s.content)).sum();
    let room = usize::from(area.width).saturating_sub(used + right_w + 1);
    let middle = match &st.flash {
        Some(f) => f.clone(),
        None if s.title.is_empty() => "(new session)".to_string(),
        None => s.title.clone(),
    };
    if room > 3 {
        let style = if st.flash.is_some() {
            th.status_key
        } else {
            th.status_bar
        };
        left.push(Span::styled(
            format!("· {}", truncate(&middle, room - 2)),
            style,
        ));
    }
    buf.set_line(area.x, area.y, &Line::from(left), area.width);
    let rw = right_w.min(usize::from(area.width)) as u16;
    buf.set_line(area.x + area.width - rw, area.y, &Line::from(right), rw);
}
