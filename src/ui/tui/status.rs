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

pub(crate) fn render(st: &TuiState, area: Rect, buf: &mut Buffer) {
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
    // Risky calls that run without asking are flagged in the key colour.
    let guard_style = if st.guard.starts_with("auto") || st.guard.starts_with("approve-all") {
        th.status_key
    } else {
        th.status_bar
    };
    let guard = if st.guard.is_empty() {
        String::new()
    } else {
        format!(" {} ·", st.guard)
    };
    let right = vec![
        Span::styled(guard, guard_style),
        Span::styled(queued, th.status_bar),
        Span::styled(ctx, th.status_bar),
        Span::styled(
            format!(" {spin}{}{} ", st.run.label(), elapsed(st)),
            state_style,
        ),
    ];
    let right_w: usize = right.iter().map(|s| wrap::width(&s.content)).sum();
    let model = match (s.model.is_empty(), s.model_note.is_empty()) {
        (false, _) => &s.model,
        (true, false) => &s.model_note,
        (true, true) => "model: on first message",
    };
    // The model stays in sight before anything else on the left: on a
    // narrow line the profile goes first, then the model name is shortened
    // (the `navi` label goes only when nothing else fits).
    // The lean preset for tiny models (docs/small-models.md) says so.
    let lean = if s.lean && !s.model.is_empty() {
        "· lean "
    } else {
        ""
    };
    let avail = usize::from(area.width).saturating_sub(right_w + 1);
    let full = format!("{} · {} {lean}", s.profile, model);
    let mut left = if 6 + wrap::width(&full) <= avail {
        vec![
            Span::styled(" navi ", th.status_key),
            Span::styled(full, th.status_bar),
        ]
    } else if avail >= 6 + 5 {
        vec![
            Span::styled(" navi ", th.status_key),
            Span::styled(
                format!("{} ", short_model(model, avail.saturating_sub(7))),
                th.status_bar,
            ),
        ]
    } else {
        vec![Span::styled(
            format!(" {} ", short_model(model, avail.saturating_sub(2))),
            th.status_bar,
        )]
    };
    if !st.cwd.is_empty() {
        // The directory before the title; the title is cut first.
        let used: usize = left.iter().map(|s| wrap::width(&s.content)).sum();
        let room = usize::from(area.width).saturating_sub(used + right_w + 4);
        if room > 8 {
            left.push(Span::styled(
                format!("· {} ", truncate_left(&st.cwd, room.min(40))),
                th.status_bar,
            ));
        }
    }
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

/// ` 12s` for a running phase shown for a second or more (planning,
/// waiting for the first token, streaming, running a tool).
fn elapsed(st: &TuiState) -> String {
    match &st.phase {
        Some((_, since)) if st.running && st.run != RunState::Idle => {
            let s = since.elapsed().as_secs();
            match s {
                0 => String::new(),
                1..=59 => format!(" {s}s"),
                _ => format!(" {}m{:02}s", s / 60, s % 60),
            }
        }
        _ => String::new(),
    }
}

/// A model name in at most `max` columns: without its provider part
/// (`ollama/`, `hf.co/…/`), then cut with `…`.
pub(crate) fn short_model(name: &str, max: usize) -> String {
    if wrap::width(name) <= max {
        return name.to_string();
    }
    let base = name.rsplit('/').next().unwrap_or(name);
    truncate(base, max.max(4))
}

/// Keeps the end of a path: `…/src/navi` when it is too long.
fn truncate_left(s: &str, max: usize) -> String {
    let n = s.chars().count();
    if n <= max {
        return s.to_string();
    }
    let tail: String = s.chars().skip(n + 1 - max).collect();
    format!("…{tail}")
}

/// The working directory with the home directory as `~`.
pub(crate) fn short_cwd() -> String {
    let Ok(cwd) = std::env::current_dir() else {
        return String::new();
    };
    if let Some(home) = std::env::var_os("HOME").map(std::path::PathBuf::from)
        && let Ok(rest) = cwd.strip_prefix(&home)
    {
        if rest.as_os_str().is_empty() {
            return "~".into();
        }
        return format!("~/{}", rest.display());
    }
    cwd.display().to_string()
}
