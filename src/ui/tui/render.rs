//! The frame: layout of the panes and overlays, drawn from `TuiState`.
//!
//! Layout, top to bottom: transcript (| side pane when the terminal is at
//! least `side_pane::MIN_TOTAL_WIDTH` wide), queued messages, composer,
//! status bar. Overlays (completion popup, session picker, approval) draw
//! last. Invariant: rendering mutates only caches and the recorded viewport
//! size — never what the state means.
use super::side_pane::{self, SidePane};
use super::state::TuiState;
use super::wrap::truncate;
use super::{cells::RenderCtx, status};
use ratatui::Frame;
use ratatui::layout::{Position, Rect};
use ratatui::text::{Line, Span};

const MAX_QUEUED_ROWS: u16 = 3;

pub fn render(frame: &mut Frame<'_>, st: &mut TuiState) {
    let area = frame.area();
    if area.width < 10 || area.height < 5 {
        return;
    }
    let buf = frame.buffer_mut();
    let th = st.theme.s.clone();
    buf.set_style(area, th.text);

    let status_area = Rect::new(area.x, area.bottom() - 1, area.width, 1);
    let text_rows = st.composer.rows(area.width.saturating_sub(2));
    let comp_h = (text_rows + 1).min(area.height.saturating_sub(3));
    let comp_area = Rect::new(area.x, status_area.y - comp_h, area.width, comp_h);
    let pending: Vec<String> = st
        .steers
        .iter()
        .map(|s| format!("  steer (after the current tool batch): {}", first_line(s)))
        .chain(
            st.queue
                .iter()
                .map(|q| format!("  queued: {}", first_line(q))),
        )
        .chain(st.attachments.iter().enumerate().map(|(i, a)| {
            format!(
                "  attached {}: {} (goes with your next message; /attach remove {})",
                i + 1,
                a.describe(),
                i + 1
            )
        }))
        .collect();
    let queued_h = (pending.len() as u16).min(MAX_QUEUED_ROWS);
    let queued_h = queued_h.min(comp_area.y.saturating_sub(area.y + 2));
    let queue_area = Rect::new(area.x, comp_area.y - queued_h, area.width, queued_h);
    let main = Rect::new(area.x, area.y, area.width, queue_area.y - area.y);

    st.viewport_total = area.width;
    let show_side = st
        .side_shown
        .unwrap_or(area.width >= side_pane::MIN_TOTAL_WIDTH)
        && area.width >= side_pane::WIDTH + 30;
    let (tr_area, side_area) = if show_side {
        let sw = side_pane::WIDTH;
        (
            Rect::new(main.x, main.y, main.width - sw, main.height),
            Some(Rect::new(main.right() - sw, main.y, sw, main.height)),
        )
    } else {
        (main, None)
    };
    st.viewport = (tr_area.width, tr_area.height);

    let ctx = RenderCtx {
        theme: &st.theme,
        width: super::transcript::content_width(tr_area.width),
        spinner: st.spinner,
        show_thinking: st.show_thinking,
        thinking_expanded: st.thinking_expanded,
        generation: st.generation,
    };
    st.transcript.render(tr_area, buf, &ctx, th.focus);
    if st.transcript.unseen && !st.transcript.following() && tr_area.height > 1 {
        let label = " ↓ new output · End to follow ";
        let w = label.chars().count() as u16;
        if tr_area.width > w + 2 {
            let line = Line::from(Span::styled(label, th.status_key));
            buf.set_line(tr_area.right() - w - 1, tr_area.bottom() - 1, &line, w);
        }
    }
    if let Some(sa) = side_area {
        SidePane::render(&st.side, sa, buf, &st.theme);
    }

    for (i, text) in pending.iter().take(usize::from(queued_h)).enumerate() {
        let line = Line::from(Span::styled(
            truncate(text, usize::from(area.width)),
            th.queued,
        ));
        buf.set_line(
            queue_area.x,
            queue_area.y + i as u16,
            &line,
            queue_area.width,
        );
    }

    // Composer: a rule with a hint, then the text.
    let hint = if st.running {
        " Navi is working · Enter queues · Ctrl-S steers · Esc stops "
    } else {
        " Enter sends · Shift+Enter/Ctrl+J newline · / commands "
    };
    let rule_w = usize::from(area.width);
    let label = truncate(hint, rule_w.saturating_sub(3));
    let fill = rule_w.saturating_sub(label.chars().count() + 2);
    buf.set_line(
        comp_area.x,
        comp_area.y,
        &Line::from(vec![
            Span::styled("──", th.composer_border),
            Span::styled(label, th.dim),
            Span::styled("─".repeat(fill), th.composer_border),
        ]),
        comp_area.width,
    );
    let text_area = Rect::new(
        comp_area.x,
        comp_area.y + 1,
        comp_area.width,
        comp_h.saturating_sub(1),
    );
    let prompt_area = Rect::new(text_area.x, text_area.y, 2.min(text_area.width), 1);
    if text_area.height > 0 {
        buf.set_line(
            prompt_area.x,
            prompt_area.y,
            &Line::from(Span::styled("› ", th.user_label)),
            prompt_area.width,
        );
    }
    let input_area = Rect::new(
        text_area.x + 2,
        text_area.y,
        text_area.width.saturating_sub(2),
        text_area.height,
    );
    let mut cursor = st.composer.render(
        input_area,
        buf,
        th.composer_text,
        (
            "Ask Navi anything — /help lists commands",
            th.composer_placeholder,
        ),
    );
    if let Some(r) = &st.rsearch {
        let bar = Rect::new(comp_area.x, comp_area.y, comp_area.width, 1);
        if let Some(p) = super::rsearch::render_bar(r, bar, buf, &st.theme) {
            cursor = Some(p);
        }
    }
    if let Some(s) = &st.search {
        let bar = Rect::new(comp_area.x, comp_area.y, comp_area.width, 1);
        cursor = super::search::render_bar(s, bar, buf, &st.theme);
    }
    let label = st.run.label();
    if st.phase.as_ref().is_none_or(|(l, _)| *l != label) {
        st.phase = Some((label, std::time::Instant::now()));
    }
    status::render(st, status_area, buf);

    let mut overlay = false;
    if let Some(p) = &st.popup {
        p.render(main, comp_area.y, buf, &st.theme);
    }
    if let Some(p) = &st.picker {
        p.render(main, buf, &st.theme);
        overlay = true;
    }
    if let Some(p) = &st.model_picker {
        p.render(main, buf, &st.theme);
        overlay = true;
    }
    let waiting = st.approvals.len();
    if let Some(a) = st.approvals.front_mut() {
        a.render(main, buf, &st.theme, waiting);
        st.approval_shown = true;
        overlay = true;
    }
    if !overlay && let Some(Position { x, y }) = cursor {
        frame.set_cursor_position(Position { x, y });
    }
}

/// The first line of a message, with a mark when more lines follow.
fn first_line(s: &str) -> String {
    let t = s.trim();
    let first = t.lines().next().unwrap_or("").trim();
    if t.lines().count() > 1 {
        format!("{first} …")
    } else {
        first.to_string()
    }
}
