//! Snapshots of overlays, layouts and themes: approval overlay, completion
//! popup, session picker, queued messages and busy status, the narrow layout,
//! every built-in theme (with styles) and NO_COLOR.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use crate::tui_support;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use insta::assert_snapshot;
use navi::ui::commands::Outcome;
use navi::ui::tui::state::{Action, TuiState};
use serde_json::json;
use std::time::Instant;
use tui_support::*;

fn key(st: &mut TuiState, code: KeyCode, m: KeyModifiers) -> Vec<Action> {
    st.handle_key(KeyEvent::new(code, m), Instant::now())
}

fn typed(st: &mut TuiState, s: &str) {
    for c in s.chars() {
        key(st, KeyCode::Char(c), KeyModifiers::NONE);
    }
}

fn busy_turn(st: &mut TuiState) {
    st.begin_turn("clean up the build directory");
    st.apply(&ev(
        json!({"type": "model_selected", "model": "gemma4:31b", "reason": "first"}),
    ));
    st.apply(&ev(json!({"type": "tool_started", "id": "t1", "tool": "terminal", "args": {"command": "rm -rf build/ && mkdir build"}, "is_subagent": false})));
}

#[test]
fn approval_overlay_shows_the_command_in_full() {
    let mut st = state();
    busy_turn(&mut st);
    let long = "rm -rf build/ && mkdir build && cp -r assets/ build/assets && find build -name '*.tmp' -delete && echo 'done cleaning the build directory'";
    st.apply(&ev(json!({"type": "approval_request", "id": "t1", "tool": "terminal", "summary": long, "args": {"command": long}})));
    assert_eq!(st.run.label(), "waiting for approval");
    assert_snapshot!(screen(&mut st, 100, 20));
    // Typing goes nowhere while the overlay is up; `s` answers.
    assert!(key(&mut st, KeyCode::Char('x'), KeyModifiers::NONE).is_empty());
    let acts = key(&mut st, KeyCode::Char('s'), KeyModifiers::NONE);
    assert_eq!(
        acts,
        vec![Action::Answer(
            "t1".into(),
            navi::protocol::Decision::Session
        )]
    );
    assert!(st.approvals.is_empty());
    assert!(st.composer.is_empty());
}

#[test]
fn typed_ahead_keys_never_answer_an_approval_and_ctrl_c_there_stops_the_turn() {
    let mut st = state();
    busy_turn(&mut st);
    st.apply(&ev(json!({"type": "approval_request", "id": "t1", "tool": "terminal", "summary": "rm -rf build", "args": {}})));
    // Keys read before the overlay was ever drawn were typed ahead: they go
    // to the composer, and Enter queues them as a message, never an answer.
    for c in ["y", "s", "Y"] {
        assert!(
            key(
                &mut st,
                KeyCode::Char(c.chars().next().unwrap()),
                KeyModifiers::NONE
            )
            .is_empty()
        );
    }
    assert!(key(&mut st, KeyCode::Enter, KeyModifiers::NONE).is_empty());
    assert_eq!(st.queue.iter().collect::<Vec<_>>(), ["ysY"]);
    assert_eq!(st.approvals.len(), 1);
    // Once drawn, `y` answers; the queued message stays queued.
    screen(&mut st, 100, 20);
    let acts = key(&mut st, KeyCode::Char('y'), KeyModifiers::NONE);
    assert_eq!(
        acts,
        vec![Action::Answer("t1".into(), navi::protocol::Decision::Once)]
    );
    assert_eq!(st.queue.len(), 1);
    // A second request needs its own draw before a key counts.
    st.apply(&ev(json!({"type": "approval_request", "id": "t2", "tool": "terminal", "summary": "rm -rf dist", "args": {}})));
    screen(&mut st, 100, 20);
    // Ctrl-C at the question stops the whole turn, not just this call.
    let acts = key(&mut st, KeyCode::Char('c'), KeyModifiers::CONTROL);
    assert_eq!(acts, vec![Action::Stop]);
    assert!(st.approvals.is_empty());
    assert_eq!(st.run.label(), "stopping…");
}

#[test]
fn narrow_terminal_hides_the_side_pane() {
    let mut st = state();
    busy_turn(&mut st);
    st.apply(&ev(json!({"type": "todo_updated", "items": [{"id": 1, "text": "clean", "status": "in_progress"}]})));
    st.apply(&ev(json!({"type": "token_usage", "prompt_tokens": 1, "completion_tokens": 1, "context_tokens": 12300, "max_context_tokens": 64000})));
    let s = screen(&mut st, 72, 12);
    assert!(!s.contains("Todo"), "{s}");
    assert_snapshot!(s);
}

#[test]
fn queued_message_and_busy_status() {
    let mut st = state();
    busy_turn(&mut st);
    typed(&mut st, "then run the tests");
    let acts = key(&mut st, KeyCode::Enter, KeyModifiers::NONE);
    assert!(acts.is_empty(), "a running turn queues: {acts:?}");
    assert_eq!(st.queue.len(), 1);
    typed(&mut st, "draft in progress");
    assert_snapshot!(screen(&mut st, 100, 12));
    // The turn ends: the queued message becomes the next turn.
    st.turn_finished();
    assert_eq!(st.next_queued().as_deref(), Some("then run the tests"));
    assert!(st.running);
}

#[test]
fn completion_popup() {
    let mut st = state();
    typed(&mut st, "/session r");
    assert_snapshot!("popup_subcommands", screen(&mut st, 100, 14));
    key(&mut st, KeyCode::Down, KeyModifiers::NONE);
    key(&mut st, KeyCode::Tab, KeyModifiers::NONE);
    assert_eq!(st.composer.text, "/session rename ");
    st.composer.clear();
    st.popup = None;
    typed(&mut st, "/theme ");
    key(&mut st, KeyCode::Tab, KeyModifiers::NONE);
    assert_snapshot!("popup_themes", screen(&mut st, 100, 12));
}

#[test]
fn session_picker() {
    let mut st = state();
    let mut a = meta("0123456789abcdef", "Fix the login bug");
    a.pinned = true;
    let b = meta("fedcba9876543210", "");
    let c = meta(
        "aaaabbbbccccdddd",
        "Plan the database migration for the reporting service",
    );
    st.apply_outcome(Outcome::Pick(vec![a, b, c]));
    key(&mut st, KeyCode::Down, KeyModifiers::NONE);
    assert_snapshot!(screen(&mut st, 100, 12));
    let acts = key(&mut st, KeyCode::Enter, KeyModifiers::NONE);
    assert_eq!(
        acts,
        vec![Action::Command("/session resume fedcba9876543210".into())]
    );
    assert!(st.picker.is_none());
}

fn themed(name: &str, no_color: bool) -> String {
    let mut st = state_with(name, no_color);
    st.begin_turn("hi");
    st.apply(&ev(
        json!({"type": "stream_delta", "delta": "Use `cargo test`:\n\n```rust\nlet x = 1;\n```"}),
    ));
    st.apply(&ev(json!({"type": "tool_started", "id": "a", "tool": "terminal", "args": {"command": "ls"}, "is_subagent": false})));
    st.apply(&ev(json!({"type": "tool_call", "id": "a", "tool": "terminal", "args": {"command": "ls"}, "result": "boom", "success": false, "is_subagent": false})));
    st.apply(&ev(json!({"type": "warning", "message": "careful"})));
    st.turn_finished();
    styled(&mut st, 48, 14)
}

#[test]
fn theme_dark() {
    assert_snapshot!(themed("dark", false));
}

#[test]
fn theme_light() {
    assert_snapshot!(themed("light", false));
}

#[test]
fn theme_high_contrast() {
    assert_snapshot!(themed("high-contrast", false));
}

#[test]
fn no_color_has_no_colours_but_keeps_emphasis() {
    let s = themed("dark", true);
    assert!(!s.contains("Rgb") && !s.contains("Indexed"), "{s}");
    assert!(s.contains("BOLD"), "{s}");
    assert_snapshot!(s);
}

#[test]
fn theme_switch_applies_live() {
    let mut st = state();
    st.apply_outcome(Outcome::Theme("light".into()));
    assert_eq!(st.theme.name, "light");
    st.apply_outcome(Outcome::Theme("nope".into()));
    assert_eq!(st.theme.name, "light");
    let s = screen(&mut st, 90, 8);
    assert!(s.contains("unknown theme 'nope'"), "{s}");
}

#[test]
fn mouse_wheel_scrolls_and_returns_to_following() {
    use crossterm::event::{MouseEvent, MouseEventKind};
    let mut st = state();
    for i in 0..40 {
        st.notice(format!("line {i}"));
    }
    screen(&mut st, 80, 12);
    let wheel = |kind| MouseEvent {
        kind,
        column: 5,
        row: 3,
        modifiers: KeyModifiers::NONE,
    };
    st.handle_mouse(wheel(MouseEventKind::ScrollUp));
    assert!(!st.transcript.following());
    st.notice("arrives while scrolled up");
    let s = screen(&mut st, 80, 12);
    assert!(s.contains("↓ new output"), "{s}");
    assert!(!s.contains("arrives while scrolled up"), "{s}");
    st.handle_mouse(wheel(MouseEventKind::ScrollDown));
    st.handle_mouse(wheel(MouseEventKind::ScrollDown));
    assert!(st.transcript.following());
    assert!(screen(&mut st, 80, 12).contains("arrives while scrolled up"));
}

/// The typed call data a file write carries (as the tool describes it).
fn edit_call(path: &std::path::Path, old: Option<&str>, new: &str) -> navi::protocol::CallInfo {
    let path = path.to_string_lossy().into_owned();
    navi::protocol::CallInfo {
        paths: vec![path.clone()],
        edit: Some(navi::protocol::FileEdit {
            path,
            old_text: old.map(str::to_string),
            new_text: new.to_string(),
            note: None,
        }),
        ..navi::protocol::CallInfo::titled(navi::protocol::CallKind::Edit, "filesystem", None)
    }
}

#[test]
fn approval_overlay_shows_a_file_write_as_a_scrollable_diff() {
    let dir = tempfile::tempdir().unwrap();
    let old: String = (1..=30).map(|i| format!("line {i}\n")).collect();
    std::fs::write(dir.path().join("notes.txt"), &old).unwrap();
    let new = old
        .replace("line 3\n", "line three\n")
        .replace("line 25\n", "");
    let args = json!({"action": "write", "path": "notes.txt", "content": new});
    let mut st = state();
    busy_turn(&mut st);
    st.approvals
        .push_back(navi::ui::tui::approval::ApprovalPrompt::new(
            "t1",
            "filesystem",
            "write 200 bytes to notes.txt (replacing it if it exists)",
            &args,
            Some(&edit_call(&dir.path().join("notes.txt"), Some(&old), &new)),
        ));
    let s = screen(&mut st, 80, 20);
    assert!(s.contains("-line 3") && s.contains("+line three"), "{s}");
    assert!(!s.contains("-line 25"), "the second hunk is below: {s}");
    assert_snapshot!("approval_diff_top", s);
    // PgDn scrolls the diff (not the transcript); the keys stay visible.
    assert!(key(&mut st, KeyCode::PageDown, KeyModifiers::NONE).is_empty());
    let s = screen(&mut st, 80, 20);
    assert!(s.contains("-line 25"), "{s}");
    assert!(s.contains("[y] allow once"), "{s}");
    assert_snapshot!("approval_diff_scrolled", s);
    // Up and PgUp go back; the answer keys still answer.
    key(&mut st, KeyCode::PageUp, KeyModifiers::NONE);
    assert!(screen(&mut st, 80, 20).contains("+line three"));
    let acts = key(&mut st, KeyCode::Char('y'), KeyModifiers::NONE);
    assert_eq!(
        acts,
        vec![Action::Answer("t1".into(), navi::protocol::Decision::Once)]
    );
}

#[test]
fn approval_overlay_shows_a_new_file_as_its_content() {
    let dir = tempfile::tempdir().unwrap();
    let args = json!({"action": "write", "path": "src/new.rs", "content": "fn main() {\n    println!(\"hi\");\n}\n"});
    let mut st = state();
    st.approvals
        .push_back(navi::ui::tui::approval::ApprovalPrompt::new(
            "t1",
            "filesystem",
            "write 34 bytes to src/new.rs (replacing it if it exists)",
            &args,
            Some(&edit_call(
                &dir.path().join("src/new.rs"),
                None,
                args["content"].as_str().unwrap(),
            )),
        ));
    let s = screen(&mut st, 80, 20);
    assert!(s.contains("new file, 3 line(s)"), "{s}");
    assert!(s.contains("+    println!(\"hi\");"), "{s}");
    assert_snapshot!("approval_diff_new_file", s);
}

#[test]
fn at_mention_popup_completes_file_paths() {
    let mut st = state();
    typed(&mut st, "explain ");
    // The scan of the working directory, as cached for this mention.
    st.mention_files = Some(
        [
            "Cargo.toml",
            "README.md",
            "docs/tui.md",
            "src/main.rs",
            "src/ui/tui/mention.rs",
            "tests/tui_overlays.rs",
        ]
        .map(String::from)
        .to_vec(),
    );
    typed(&mut st, "@tui");
    let s = screen(&mut st, 100, 14);
    assert!(
        s.contains("docs/tui.md") && s.contains("src/ui/tui/mention.rs"),
        "{s}"
    );
    assert!(!s.contains("Cargo.toml"), "{s}");
    assert_snapshot!("popup_at_mention", s);
    // ↓ then Tab completes the word in place; typing goes on after it.
    key(&mut st, KeyCode::Down, KeyModifiers::NONE);
    key(&mut st, KeyCode::Tab, KeyModifiers::NONE);
    assert!(st.popup.is_none());
    let chosen = st.composer.text.clone();
    assert!(
        chosen.starts_with("explain @") && chosen.ends_with(' ') && chosen.contains("tui"),
        "{chosen}"
    );
    // Enter completes too (it does not send while the popup is open).
    typed(&mut st, "and ");
    st.mention_files = Some(vec!["src/main.rs".into()]);
    typed(&mut st, "@main");
    assert!(key(&mut st, KeyCode::Enter, KeyModifiers::NONE).is_empty());
    assert_eq!(st.composer.text, format!("{chosen}and @src/main.rs "));
    // With the popup closed, Enter sends the text with its mentions.
    let acts = key(&mut st, KeyCode::Enter, KeyModifiers::NONE);
    assert_eq!(
        acts,
        vec![Action::Send(format!("{chosen}and @src/main.rs "))]
    );
}
