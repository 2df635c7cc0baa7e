//! TUI states, on `TuiState`: a tool card waiting for its
//! approval neither spins nor counts, the approval keys fit a narrow
//! overlay, command output keeps its indent when wrapped, pinned sessions
//! are marked in the picker, and a subagent shows when it starts.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use crate::tui_support;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use navi::ui::commands::Outcome;
use navi::ui::tui::state::TuiState;
use serde_json::json;
use std::time::Instant;
use tui_support::*;

fn key(st: &mut TuiState, code: KeyCode) {
    st.handle_key(KeyEvent::new(code, KeyModifiers::NONE), Instant::now());
}

fn with_approval(st: &mut TuiState) {
    st.begin_turn("clean up");
    feed(
        st,
        vec![
            json!({"type": "tool_started", "id": "t1", "tool": "terminal", "args": {"command": "rm -rf build"}, "is_subagent": false}),
            json!({"type": "approval_request", "id": "t1", "tool": "terminal", "summary": "rm -rf build", "args": {"command": "rm -rf build"}}),
        ],
    );
}

#[test]
fn a_card_waiting_for_approval_says_so_and_does_not_spin() {
    let mut st = state();
    with_approval(&mut st);
    let mut frames = Vec::new();
    for spin in 0..3 {
        st.spinner = spin;
        frames.push(screen(&mut st, 100, 30));
    }
    let card = |s: &str| {
        s.lines()
            .find(|l| {
                l.contains("terminal") && l.contains("rm -rf build") && !l.contains("Navi wants")
            })
            .unwrap_or_default()
            .to_string()
    };
    assert!(
        card(&frames[0]).contains("waiting for approval"),
        "{}",
        frames[0]
    );
    assert_eq!(card(&frames[0]), card(&frames[1]), "the card spins");
    assert_eq!(card(&frames[1]), card(&frames[2]), "the card spins");
    key(&mut st, KeyCode::Char('y'));
    let after = screen(&mut st, 100, 30);
    assert!(!card(&after).contains("waiting for approval"), "{after}");
    // The clock starts at the answer: a fresh card shows no seconds yet.
    assert!(!card(&after).contains(" · "), "{after}");
}

#[test]
fn approval_keys_are_never_cut_in_a_narrow_overlay() {
    for width in [60u16, 50, 40, 30, 26] {
        let mut st = state();
        with_approval(&mut st);
        let s = screen(&mut st, width, 24);
        assert!(s.contains("[y]"), "{width}: {s}");
        assert!(s.contains("[s]"), "{width}: {s}");
        assert!(s.contains("[n]/Esc"), "{width}: {s}");
        if width >= 60 {
            assert!(s.contains("session") && s.contains("deny"), "{width}: {s}");
        }
    }
}

#[test]
fn wrapped_help_lines_keep_their_indent() {
    let mut st = state();
    let line = format!(
        "{:<26} {}",
        "/session resume [id|n]",
        "open a session (picker without an argument) or the one named by its number"
    );
    st.apply_outcome(Outcome::Show(vec![line]));
    let s = screen(&mut st, 60, 20);
    let rows: Vec<&str> = s
        .lines()
        .skip_while(|l| !l.contains("/session resume"))
        .take(3)
        .collect();
    assert!(rows.len() >= 2, "{s}");
    let start = rows[0].find("open").unwrap();
    let cont = rows[1].len() - rows[1].trim_start().len();
    assert_eq!(cont, start, "continuation not under the description:\n{s}");
}

#[test]
fn the_session_picker_marks_pinned_sessions() {
    let mut st = state();
    let mut pinned = meta("aaaaaaaa11111111", "Pinned work");
    pinned.pinned = true;
    let mut current = meta("0123456789abcdef", "Fix the login bug");
    current.pinned = true;
    let plain = meta("bbbbbbbb22222222", "Other");
    st.apply_outcome(Outcome::Pick(vec![current, pinned, plain]));
    let s = screen(&mut st, 100, 20);
    let row = |t: &str| {
        s.lines()
            .find(|l| l.contains(t))
            .unwrap_or_default()
            .to_string()
    };
    assert!(row("Pinned work").contains('📌'), "{s}");
    assert!(
        row("Fix the login bug").contains('📌'),
        "current and pinned: {s}"
    );
    assert!(!row("Other").contains('📌'), "{s}");
}

#[test]
fn a_subagent_shows_when_it_starts() {
    let mut st = state();
    st.begin_turn("research this");
    let agent = json!({"id": "subagent_a1b2c3d4e5f6", "depth": 1, "profile_id": "discuss"});
    feed(
        &mut st,
        vec![
            json!({"type": "tool_started", "id": "s1", "tool": "spawn_agent", "args": {"profile": "discuss", "task": "summarise"}, "is_subagent": false}),
            json!({"type": "subagent_started", "agent": agent}),
        ],
    );
    let s = screen(&mut st, 100, 20);
    assert!(s.contains("subagent a1b2c3 · discuss started"), "{s}");
}

/// The real TUI on a pty: 24-bit colour only when the terminal says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tui_colours_follow_the_terminal() {
    use crate::plain_support::{Home, Pty};
    let cases: &[(&str, Option<&str>, bool)] = &[
        ("xterm", None, false),
        ("screen", None, false),
        ("linux", None, false),
        ("xterm-256color", None, false),
        ("xterm-256color", Some("truecolor"), true),
        ("screen", Some("24bit"), true),
    ];
    for &(term, colorterm, truecolor) in cases {
        let home = Home::new("http://127.0.0.1:9");
        let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_navi"));
        c.args(["--profile", "tester"]);
        let mut c = home.setup_for_test(c, term);
        if let Some(v) = colorterm {
            c.env("COLORTERM", v);
        }
        let mut pty = Pty::spawn(c);
        pty.wait_for("/help");
        // Let the first frames (and the backend check's error) arrive.
        std::thread::sleep(std::time::Duration::from_millis(600));
        pty.wait_for("idle");
        let raw = pty.text();
        pty.kill9();
        let rgb = raw.contains("38;2;") || raw.contains("48;2;");
        assert_eq!(rgb, truecolor, "TERM={term} COLORTERM={colorterm:?}");
        assert!(
            raw.contains("\x1b[38;5;") || raw.contains("\x1b[3"),
            "no colour at all for {term}"
        );
    }
}

#[test]
fn the_lean_preset_shows_in_the_status_line() {
    let mut st = state();
    st.begin_turn("how many lines are in notes.txt");
    feed(
        &mut st,
        vec![json!({"type": "model_selected", "model": "SmolLM2-135M",
                    "reason": "the profile's model; lean preset for a tiny model"})],
    );
    let status = |s: &str| {
        s.lines()
            .find(|l| l.starts_with(" navi "))
            .unwrap_or_default()
            .to_string()
    };
    let shown = status(&screen(&mut st, 100, 12));
    assert!(shown.contains("SmolLM2-135M · lean "), "{shown}");
    // Another model's turn without the preset drops the mark.
    feed(
        &mut st,
        vec![
            json!({"type": "model_selected", "model": "qwen3:8b", "reason": "the profile's model"}),
        ],
    );
    let shown = status(&screen(&mut st, 100, 12));
    assert!(
        shown.contains("qwen3:8b") && !shown.contains("lean"),
        "{shown}"
    );
}
