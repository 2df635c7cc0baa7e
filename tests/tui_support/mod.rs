//! Helpers for the TUI tests: a `TuiState` fed `AgentEvent`s (as JSON, the
//! public protocol) and drawn to a ratatui `TestBackend`.
#![allow(dead_code, clippy::unwrap_used)]

use navi::protocol::AgentEvent;
use navi::session::SessionMeta;
use navi::ui::tui::render::render;
use navi::ui::tui::state::TuiState;
use navi::ui::tui::theme::Theme;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use serde_json::Value;

pub fn meta(id: &str, title: &str) -> SessionMeta {
    let now = navi::session::now_ms();
    SessionMeta {
        id: id.to_string(),
        profile_id: "developer".into(),
        title: title.to_string(),
        pinned: false,
        created_at: now - 3_600_000,
        last_active: now - 300_000,
        context_token_count: 0,
        message_count: 4,
        cwd: None,
        project: None,
    }
}

pub fn state_with(theme: &str, no_color: bool) -> TuiState {
    // Highlighting loads after the first frame in the app; load it up front
    // so snapshots are deterministic.
    navi::ui::tui::highlight::warm_up();
    let mut st = TuiState::new(Theme::load(theme, None, no_color).unwrap());
    st.theme_names = vec!["dark".into(), "high-contrast".into(), "light".into()];
    st.profile_ids = vec!["developer".into(), "discuss".into()];
    st.set_session_meta(&meta("0123456789abcdef", "Fix the login bug"));
    st
}

pub fn state() -> TuiState {
    state_with("dark", false)
}

pub fn ev(v: Value) -> AgentEvent {
    serde_json::from_value(v).unwrap()
}

pub fn feed(st: &mut TuiState, events: Vec<Value>) {
    for e in events {
        st.apply(&ev(e));
    }
}

pub fn draw(st: &mut TuiState, w: u16, h: u16) -> Terminal<TestBackend> {
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| render(f, st)).unwrap();
    t
}

/// The screen as text, one line per row, trailing spaces cut.
pub fn screen(st: &mut TuiState, w: u16, h: u16) -> String {
    text_of(draw(st, w, h).backend().buffer())
}

pub fn text_of(buf: &Buffer) -> String {
    let a = buf.area;
    (a.y..a.bottom())
        .map(|y| {
            (a.x..a.right())
                .map(|x| buf[(x, y)].symbol().to_string())
                .collect::<String>()
                .trim_end()
                .to_string()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The screen with styles: each row's text, then its style runs
/// `col..col fg/bg/modifiers` (for theme snapshots).
pub fn styled(st: &mut TuiState, w: u16, h: u16) -> String {
    let t = draw(st, w, h);
    let buf = t.backend().buffer();
    let mut out = String::new();
    for y in 0..h {
        let row: String = (0..w).map(|x| buf[(x, y)].symbol().to_string()).collect();
        out.push_str(&format!("{:>2} |{}|\n", y, row.trim_end()));
        let mut x = 0;
        while x < w {
            let c = &buf[(x, y)];
            let key = (c.fg, c.bg, c.modifier);
            let start = x;
            while x < w && {
                let d = &buf[(x, y)];
                (d.fg, d.bg, d.modifier) == key
            } {
                x += 1;
            }
            out.push_str(&format!(
                "     {start}..{x} fg={:?} bg={:?} mod={:?}\n",
                key.0, key.1, key.2
            ));
        }
    }
    out
}
