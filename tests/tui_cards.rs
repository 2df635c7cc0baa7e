//! Tool cards drawn from typed display data (issue 24 item 3), rendered from
//! events to a `TestBackend` like tests/tui_cells.rs.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use crate::tui_support;

use serde_json::json;
use tui_support::*;

fn user_turn(st: &mut navi::ui::tui::state::TuiState, text: &str) {
    st.begin_turn(text);
    feed(
        st,
        vec![json!({"type": "stream_start", "session_id": "0123456789abcdef"})],
    );
}

#[test]
fn expanded_cards_show_streams_and_diffs_from_display_data() {
    let mut st = state();
    user_turn(&mut st, "build and fix");
    feed(
        &mut st,
        vec![
            json!({"type": "tool_started", "id": "c1", "tool": "terminal", "args": {"command": "make"}, "is_subagent": false}),
            json!({"type": "tool_call", "id": "c1", "tool": "terminal", "args": {"command": "make"},
                   "result": "MODEL TEXT ONLY", "success": true, "is_subagent": false,
                   "display": {"kind": "command", "command": "make", "exit_code": 0,
                               "stdout": "built ok\n", "stderr": "warning: unused\n", "duration_ms": 1500}}),
            json!({"type": "tool_started", "id": "c2", "tool": "filesystem", "args": {"action": "write", "path": "a.txt"}, "is_subagent": false}),
            json!({"type": "tool_call", "id": "c2", "tool": "filesystem", "args": {"action": "write", "path": "a.txt"},
                   "result": "wrote 8 B to /w/a.txt", "success": true, "is_subagent": false,
                   "display": {"kind": "file_write", "path": "/w/a.txt", "bytes": 8, "added": 1, "removed": 1,
                               "diff": "--- a//w/a.txt\n+++ b//w/a.txt\n@@ -1,2 +1,2 @@\n keep\n-old line\n+new line\n"}}),
        ],
    );
    let s = screen(&mut st, 90, 12);
    assert!(s.contains("└ exit 0 · built ok"), "{s}");
    assert!(s.contains("└ wrote /w/a.txt · +1 -1 · 8 B"), "{s}");
    let ctrl_o = crossterm::event::KeyEvent::new(
        crossterm::event::KeyCode::Char('o'),
        crossterm::event::KeyModifiers::CONTROL,
    );
    for cell in [1, 2] {
        st.transcript.selected = Some(cell);
        st.handle_key(ctrl_o, std::time::Instant::now());
    }
    let s = screen(&mut st, 90, 60);
    for part in [
        "│ exit 0 · 1.5s",
        "│ stdout",
        "│ built ok",
        "│ stderr",
        "│ warning: unused",
        "│ @@ -1,2 +1,2 @@",
        "│ -old line",
        "│ +new line",
    ] {
        assert!(s.contains(part), "{part:?} missing: {s}");
    }
    assert!(!s.contains("MODEL TEXT ONLY"), "{s}");
    assert!(!s.contains("+++ b/"), "{s}");
}
