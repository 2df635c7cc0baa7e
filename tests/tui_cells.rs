//! Snapshots of every transcript cell type and state, fed `AgentEvent`s and
//! drawn to a `TestBackend` (no terminal, no App, no model).
#![allow(clippy::unwrap_used, clippy::expect_used)]
use crate::tui_support;

use insta::assert_snapshot;
use navi::llm::{ChatMessage, ToolCall};
use navi::session::{MessageKind, StoredMessage};
use serde_json::json;
use tui_support::*;

fn user_turn(st: &mut navi::ui::tui::state::TuiState, text: &str) {
    st.begin_turn(text);
    feed(
        st,
        vec![json!({"type": "stream_start", "session_id": "0123456789abcdef"})],
    );
}

const ANSWER: &str = "## Findings\n\nThe login fails because the **session cookie** is set without `Secure`.\n\n1. Set the flag\n2. Restart the service\n\n```rust\nfn cookie() -> Cookie {\n    Cookie::new(\"sid\", id).secure(true)\n}\n```\n\n> Note: test over HTTPS.";

#[test]
fn markdown_answer_with_collapsed_thinking() {
    let mut st = state();
    user_turn(&mut st, "why does login fail?");
    feed(
        &mut st,
        vec![
            json!({"type": "model_selected", "model": "gemma4:31b", "reason": "first available"}),
            json!({"type": "thinking_delta", "delta": "The user asks about login.\nCheck cookies first."}),
            json!({"type": "thinking_end"}),
        ],
    );
    for piece in ANSWER.split_inclusive(' ') {
        st.apply(&ev(json!({"type": "stream_delta", "delta": piece})));
    }
    feed(
        &mut st,
        vec![
            json!({"type": "token_usage", "prompt_tokens": 900, "completion_tokens": 80, "context_tokens": 12345, "max_context_tokens": 65536}),
            json!({"type": "stream_end", "content": ANSWER, "context_tokens": 12345, "max_context_tokens": 65536}),
        ],
    );
    st.turn_finished();
    assert_snapshot!(screen(&mut st, 110, 30));
}

#[test]
fn thinking_streaming_then_expanded() {
    let mut st = state();
    user_turn(&mut st, "plan the migration");
    let thought: String = (1..=12)
        .map(|i| format!("Step {i} of my reasoning about the migration.\n"))
        .collect();
    feed(
        &mut st,
        vec![json!({"type": "thinking_delta", "delta": thought})],
    );
    assert_snapshot!("thinking_streaming", screen(&mut st, 80, 18));
    feed(&mut st, vec![json!({"type": "thinking_end"})]);
    assert_snapshot!("thinking_collapsed", screen(&mut st, 80, 8));
    st.handle_key(
        crossterm::event::KeyEvent::new(
            crossterm::event::KeyCode::Char('t'),
            crossterm::event::KeyModifiers::CONTROL,
        ),
        std::time::Instant::now(),
    );
    assert_snapshot!("thinking_expanded", screen(&mut st, 80, 20));
}

#[test]
fn plan_card_and_todo_pane() {
    let mut st = state();
    user_turn(&mut st, "fix the login bug");
    feed(
        &mut st,
        vec![
            json!({"type": "plan_ready", "plan": "Goal: make login work over HTTPS.\n1. Read the auth module — TOOL: filesystem\n2. Reproduce the failure with curl — TOOL: terminal\n3. Fix the cookie flags and explain — SELF"}),
            json!({"type": "todo_updated", "items": [
                {"id": 1, "text": "Read the auth module", "status": "done", "executor": "TOOL: filesystem"},
                {"id": 2, "text": "Reproduce the failure with curl", "status": "in_progress"},
                {"id": 3, "text": "Fix the cookie flags and explain the change to the user", "status": "pending"},
                {"id": 4, "text": "Old idea", "status": "skipped"},
                {"id": 5, "text": "Broken step", "status": "failed"}
            ]}),
        ],
    );
    assert_snapshot!("plan_card_expanded", screen(&mut st, 110, 16));
    st.handle_key(
        crossterm::event::KeyEvent::new(
            crossterm::event::KeyCode::Char('o'),
            crossterm::event::KeyModifiers::CONTROL,
        ),
        std::time::Instant::now(),
    );
    assert_snapshot!("plan_card_collapsed", screen(&mut st, 110, 10));
}

#[test]
fn tool_cards_pending_done_failed_expanded() {
    let mut st = state();
    user_turn(&mut st, "look around");
    feed(
        &mut st,
        vec![
            json!({"type": "tool_started", "id": "c1", "tool": "terminal", "args": {"command": "ls -la /srv/app"}, "is_subagent": false}),
        ],
    );
    st.spinner = 3;
    assert_snapshot!("tool_pending", screen(&mut st, 90, 10));
    feed(
        &mut st,
        vec![
            json!({"type": "tool_call", "id": "c1", "tool": "terminal", "args": {"command": "ls -la /srv/app"}, "result": "total 8\ndrwxr-xr-x 2 app app 4096 .\n-rw-r--r-- 1 app app  120 config.toml", "success": true, "is_subagent": false}),
            json!({"type": "tool_started", "id": "c2", "tool": "filesystem", "args": {"action": "read", "path": "/srv/app/missing.toml"}, "is_subagent": false}),
            json!({"type": "tool_call", "id": "c2", "tool": "filesystem", "args": {"action": "read", "path": "/srv/app/missing.toml"}, "result": "error: /srv/app/missing.toml does not exist", "success": false, "is_subagent": false}),
        ],
    );
    assert_snapshot!("tool_done_and_failed", screen(&mut st, 90, 12));
    st.transcript.selected = Some(2);
    st.handle_key(
        crossterm::event::KeyEvent::new(
            crossterm::event::KeyCode::Char('o'),
            crossterm::event::KeyModifiers::CONTROL,
        ),
        std::time::Instant::now(),
    );
    assert_snapshot!("tool_expanded_selected", screen(&mut st, 90, 22));
}

#[test]
fn subagent_events_nest_under_spawn_card() {
    let mut st = state();
    user_turn(&mut st, "research this");
    let agent = json!({"id": "subagent_a1b2c3d4e5f6", "depth": 1, "profile_id": "discuss"});
    feed(
        &mut st,
        vec![
            json!({"type": "tool_started", "id": "s1", "tool": "spawn_agent", "args": {"profile": "discuss", "task": "summarise the RFC"}, "is_subagent": false}),
            json!({"type": "thinking_delta", "delta": "hmm", "is_subagent": true, "agent": agent}),
            json!({"type": "tool_started", "id": "x1", "tool": "web_view", "args": {"url": "https://example.org/rfc"}, "is_subagent": true, "agent": agent}),
            json!({"type": "tool_call", "id": "x1", "tool": "web_view", "args": {"url": "https://example.org/rfc"}, "result": "RFC 6265: HTTP State Management", "success": true, "is_subagent": true, "agent": agent}),
            json!({"type": "stream_delta", "delta": "The RFC says cookies with Secure are sent only over HTTPS.", "is_subagent": true, "agent": agent}),
        ],
    );
    assert_snapshot!("subagent_live", screen(&mut st, 110, 14));
    feed(
        &mut st,
        vec![
            json!({"type": "tool_call", "id": "s1", "tool": "spawn_agent", "args": {"profile": "discuss", "task": "summarise the RFC"}, "result": "Secure cookies are only sent over HTTPS.", "success": true, "is_subagent": false}),
        ],
    );
    assert_snapshot!("subagent_done", screen(&mut st, 110, 10));
    st.transcript.selected = Some(1);
    st.handle_key(
        crossterm::event::KeyEvent::new(
            crossterm::event::KeyCode::Enter,
            crossterm::event::KeyModifiers::NONE,
        ),
        std::time::Instant::now(),
    );
    assert_snapshot!("subagent_expanded", screen(&mut st, 110, 22));
}

#[test]
fn notices_warnings_errors() {
    let mut st = state();
    feed(
        &mut st,
        vec![
            json!({"type": "context_compressed", "messages_before": 40, "messages_after": 12}),
            json!({"type": "context_compressed", "messages_before": 6, "messages_after": 6}),
            json!({"type": "profile_switched", "profile_id": "discuss", "profile_name": "Discuss"}),
            json!({"type": "warning", "message": "context is 85% full (55000 of 65536 tokens); consider /compact or a new session"}),
            json!({"type": "error", "message": "cannot reach Ollama at http://127.0.0.1:11434 (connection refused): is \"ollama serve\" running? set OLLAMA_HOST or [llm].ollama_host"}),
            json!({"type": "stream_stopped"}),
        ],
    );
    st.hint("unknown command /frobnicate (see /help)");
    assert_snapshot!(screen(&mut st, 80, 18));
}

#[test]
fn history_renders_with_the_same_cells() {
    let mut st = state();
    let call = ToolCall {
        id: "call_1".into(),
        name: "terminal".into(),
        arguments: json!({"command": "make test"}),
    };
    let mut asst = ChatMessage::assistant("Running the tests.");
    asst.set_thinking(Some("Tests first.".into()));
    asst.set_tool_calls(vec![call.clone()]);
    let mut result = StoredMessage::new(
        ChatMessage::tool_result(&call, "2 failed"),
        MessageKind::Message,
    );
    result.success = Some(false);
    let history = vec![
        StoredMessage::new(ChatMessage::user("run the tests"), MessageKind::Message),
        StoredMessage::new(
            ChatMessage::assistant("1. Run the tests — TOOL: terminal\n2. Report — SELF"),
            MessageKind::Plan,
        ),
        StoredMessage::new(asst, MessageKind::Message),
        result,
        StoredMessage::new(
            ChatMessage::assistant("Two tests fail."),
            MessageKind::Message,
        ),
        StoredMessage::new(ChatMessage::system("stopped by user"), MessageKind::Notice),
        StoredMessage::new(
            ChatMessage::system("error: the model timed out"),
            MessageKind::Notice,
        ),
    ];
    let replayed = navi::session::replay::events(&history, &Default::default());
    st.switch_session(&meta("0123456789abcdef", "Run tests"), &replayed);
    assert_eq!(st.last_answer, "Two tests fail.");
    assert_snapshot!(screen(&mut st, 90, 26));
}

const WIDE_TABLE: &str = "| Crate | What it does in Navi | Why this one and not another | Status |\n|---|---|---|---|\n| ratatui | draws the full-screen chat, the panes, the popups and the status bar | immediate mode, no retained widget tree to keep in sync | in use |\n| pulldown-cmark | parses the Markdown the model writes into events | CommonMark and GFM tables, fast, no allocations per event | in use |\n";

fn answer(st: &mut navi::ui::tui::state::TuiState, question: &str, text: &str) {
    user_turn(st, question);
    feed(
        st,
        vec![
            json!({"type": "stream_delta", "delta": text}),
            json!({"type": "stream_end", "content": text, "context_tokens": 1000, "max_context_tokens": 65536}),
        ],
    );
    st.turn_finished();
}

/// Every screen row is legible: nothing of the table runs past the edge and
/// every column separator of a row sits where the header's does.
fn assert_table_aligned(screen: &str) {
    // Cut off the side pane (at 100+ columns) at its border.
    let pane = screen
        .lines()
        .find_map(|l| l.find("│ Todo").map(|b| l[..b].chars().count()));
    let cut: Vec<String> = screen
        .lines()
        .map(|l| l.chars().take(pane.unwrap_or(usize::MAX)).collect())
        .collect();
    let rows: Vec<&str> = cut
        .iter()
        .map(String::as_str)
        .filter(|l| l.contains('│'))
        .collect();
    assert!(rows.len() >= 4, "{screen}");
    let col = |l: &str| -> Vec<usize> {
        l.chars()
            .enumerate()
            .filter(|(_, c)| *c == '│' || *c == '┼')
            .map(|(i, _)| i)
            .collect()
    };
    let head = col(rows[0]);
    assert_eq!(head.len(), 3, "{screen}");
    for r in &rows {
        assert_eq!(col(r), head, "misaligned row {r:?} in\n{screen}");
    }
}

#[test]
fn wide_table_wraps_cells_at_80_and_120_columns() {
    for (w, name) in [(80u16, "wide_table_80"), (120, "wide_table_120")] {
        let mut st = state();
        answer(&mut st, "which crates?", WIDE_TABLE);
        let s = screen(&mut st, w, 24);
        assert_table_aligned(&s);
        for word in ["immediate", "allocations", "retained", "Status", "GFM"] {
            assert!(s.contains(word), "{word} lost at {w} columns:\n{s}");
        }
        assert_snapshot!(name, s);
    }
}

#[test]
fn user_message_is_shown_as_typed() {
    let mut st = state();
    user_turn(
        &mut st,
        "check these:\n2*3*4 = 24\n  - not a list\n\n# not a heading\n**not bold**",
    );
    let s = screen(&mut st, 60, 10);
    assert!(s.contains("2*3*4 = 24"), "{s}");
    assert!(s.contains("# not a heading"), "{s}");
    assert!(s.contains("**not bold**"), "{s}");
    assert_snapshot!(s);
}

#[test]
fn soft_breaks_in_answers_are_line_breaks() {
    let mut st = state();
    answer(
        &mut st,
        "steps?",
        "First line of the answer\nSecond line\nThird line with **bold**\n\nNew paragraph",
    );
    let s = screen(&mut st, 60, 10);
    let lines: Vec<&str> = s.lines().collect();
    let i = lines
        .iter()
        .position(|l| l.contains("First line of the answer"))
        .unwrap();
    assert!(lines[i + 1].trim_start().starts_with("Second line"), "{s}");
    assert!(
        lines[i + 2]
            .trim_start()
            .starts_with("Third line with bold"),
        "{s}"
    );
    assert_snapshot!(s);
}

#[test]
fn farewell_leaves_the_last_answer_or_the_transcript_and_the_resume_hint() {
    use navi::config::Scrollback;
    use navi::ui::tui::farewell::farewell;
    let mut st = state();
    let mut empty = meta("0123456789abcdef", "");
    empty.message_count = 0;
    st.set_session_meta(&empty);
    // Nothing sent: nothing to keep, no resume hint.
    assert_eq!(farewell(&st, Scrollback::Full), "");
    answer(&mut st, "first question", "first answer");
    answer(&mut st, "second question", "second answer\nline two");
    let last = farewell(&st, Scrollback::Last);
    assert_eq!(
        last,
        "second answer\nline two\n\nresume with: navi --session 0123456789abcdef\n"
    );
    let full = farewell(&st, Scrollback::Full);
    let order: Vec<usize> = [
        "› first question",
        "• first answer",
        "› second question",
        "• second answer",
        "resume with:",
    ]
    .iter()
    .map(|p| {
        full.find(p)
            .unwrap_or_else(|| panic!("{p} missing in {full}"))
    })
    .collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{full}");
    assert_eq!(
        farewell(&st, Scrollback::None),
        "resume with: navi --session 0123456789abcdef\n"
    );
}

#[test]
fn tool_summary_todo_toggle_and_cwd() {
    let mut st = state();
    st.cwd = "~/src/navi".into();
    st.status.model = "m1".into();
    user_turn(&mut st, "build it");
    feed(
        &mut st,
        vec![
            json!({"type": "tool_started", "id": "c1", "tool": "terminal", "args": {"command": "make"}, "is_subagent": false}),
            json!({"type": "tool_call", "id": "c1", "tool": "terminal", "args": {"command": "make"},
                   "result": "exit code: 2\n--- stdout ---\n(empty)\n--- stderr ---\nmake: *** No targets.  Stop.\n",
                   "success": false, "is_subagent": false,
                   "display": {"kind": "command", "command": "make", "exit_code": 2,
                               "stdout": "", "stderr": "make: *** No targets.  Stop.\n"}}),
            // The same text without display data is shown as text, not parsed.
            json!({"type": "tool_started", "id": "c2", "tool": "terminal", "args": {"command": "make"}, "is_subagent": false}),
            json!({"type": "tool_call", "id": "c2", "tool": "terminal", "args": {"command": "make"},
                   "result": "exit code: 3\n--- stdout ---\n(empty)\n--- stderr ---\nboom\n",
                   "success": false, "is_subagent": false}),
        ],
    );
    let s = screen(&mut st, 80, 12);
    assert!(s.contains("└ exit 2 · make: *** No targets.  Stop."), "{s}");
    assert!(s.contains("└ exit code: 3…"), "{s}");
    assert!(!s.contains("exit 3 ·"), "{s}");
    assert!(s.contains("· ~/src/navi"), "{s}");
    assert!(!s.contains("Todo"), "no side pane under 100 columns: {s}");
    // Alt-T shows the todo pane below 100 columns, and hides it again.
    let alt_t = crossterm::event::KeyEvent::new(
        crossterm::event::KeyCode::Char('t'),
        crossterm::event::KeyModifiers::ALT,
    );
    st.handle_key(alt_t, std::time::Instant::now());
    let s = screen(&mut st, 80, 12);
    assert!(s.contains("│ Todo"), "{s}");
    st.handle_key(alt_t, std::time::Instant::now());
    assert!(!screen(&mut st, 80, 12).contains("Todo"));
}

fn key(
    st: &mut navi::ui::tui::state::TuiState,
    code: crossterm::event::KeyCode,
    m: crossterm::event::KeyModifiers,
) {
    st.handle_key(
        crossterm::event::KeyEvent::new(code, m),
        std::time::Instant::now(),
    );
}

fn typed(st: &mut navi::ui::tui::state::TuiState, s: &str) {
    for c in s.chars() {
        key(
            st,
            crossterm::event::KeyCode::Char(c),
            crossterm::event::KeyModifiers::NONE,
        );
    }
}

/// A transcript long enough to scroll: three turns, each with a long answer.
fn three_turns() -> navi::ui::tui::state::TuiState {
    let mut st = state();
    for (i, q) in ["first question", "second question", "third question"]
        .iter()
        .enumerate()
    {
        user_turn(&mut st, q);
        let body: String = (1..=8)
            .map(|n| {
                format!(
                    "Answer {} line {n}{}\n",
                    i + 1,
                    if n == 4 { " with the Needle" } else { "" }
                )
            })
            .collect();
        feed(
            &mut st,
            vec![
                json!({"type": "stream_end", "content": body, "context_tokens": 10, "max_context_tokens": 100}),
            ],
        );
        st.turn_finished();
    }
    st
}

#[test]
fn transcript_search_highlights_and_steps_through_matches() {
    use crossterm::event::{KeyCode, KeyModifiers};
    let mut st = three_turns();
    screen(&mut st, 60, 12);
    key(&mut st, KeyCode::Char('f'), KeyModifiers::CONTROL);
    typed(&mut st, "NEEDLE");
    let s = st.search.as_ref().unwrap();
    assert_eq!(s.hits.len(), 3);
    // Typing picks the most recent match.
    assert_eq!(s.position(), "3/3");
    assert_snapshot!("search_last_match", screen(&mut st, 60, 12));
    // The match itself is highlighted (reversed), the rest of its line not.
    let term = draw(&mut st, 60, 12);
    let buf = term.backend().buffer();
    let (x, y) = (0..12u16)
        .flat_map(|y| (0..60u16).map(move |x| (x, y)))
        .find(|&(x, y)| buf[(x, y)].symbol() == "N" && buf[(x + 1, y)].symbol() == "e")
        .unwrap();
    let rev = |x: u16| {
        buf[(x, y)]
            .modifier
            .contains(ratatui::style::Modifier::REVERSED)
    };
    assert!((x..x + 6).all(rev));
    assert!(!rev(x - 2) && !rev(x + 6));
    // Shift-Enter / Ctrl-P go up; the earliest answer scrolls into view.
    key(&mut st, KeyCode::Enter, KeyModifiers::SHIFT);
    key(&mut st, KeyCode::Char('p'), KeyModifiers::CONTROL);
    assert_eq!(st.search.as_ref().unwrap().position(), "1/3");
    let shot = screen(&mut st, 60, 12);
    assert!(shot.contains("Answer 1 line 4 with the Needle"), "{shot}");
    assert!(!shot.contains("Answer 3 line 4"), "{shot}");
    assert_snapshot!("search_first_match", shot);
    // Enter / Ctrl-N go down and wrap around.
    key(&mut st, KeyCode::Enter, KeyModifiers::NONE);
    assert_eq!(st.search.as_ref().unwrap().position(), "2/3");
    key(&mut st, KeyCode::Char('n'), KeyModifiers::CONTROL);
    key(&mut st, KeyCode::Char('n'), KeyModifiers::CONTROL);
    assert_eq!(st.search.as_ref().unwrap().position(), "1/3");
    // No match is said so; typing never reaches the composer.
    typed(&mut st, "zz");
    assert_eq!(st.search.as_ref().unwrap().position(), "no match");
    assert!(screen(&mut st, 60, 12).contains("no match"));
    assert!(st.composer.is_empty());
    key(&mut st, KeyCode::Esc, KeyModifiers::NONE);
    assert!(st.search.is_none());
    assert!(!screen(&mut st, 60, 12).contains("find:"));
    // Esc closed the search, it did not stop anything or type anything.
    typed(&mut st, "x");
    assert_eq!(st.composer.text, "x");
}

#[test]
fn ctrl_up_and_down_jump_between_the_users_messages() {
    use crossterm::event::{KeyCode, KeyModifiers};
    let mut st = three_turns();
    screen(&mut st, 60, 8);
    key(&mut st, KeyCode::Up, KeyModifiers::CONTROL);
    let top = |st: &mut navi::ui::tui::state::TuiState| {
        screen(st, 60, 8)
            .lines()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("")
            .to_string()
    };
    assert!(
        top(&mut st).contains("› third question"),
        "{}",
        screen(&mut st, 60, 8)
    );
    key(&mut st, KeyCode::Up, KeyModifiers::CONTROL);
    assert!(top(&mut st).contains("› second question"));
    key(&mut st, KeyCode::Up, KeyModifiers::CONTROL);
    assert!(top(&mut st).contains("› first question"));
    key(&mut st, KeyCode::Up, KeyModifiers::CONTROL);
    assert!(top(&mut st).contains("› first question"));
    key(&mut st, KeyCode::Down, KeyModifiers::CONTROL);
    assert!(top(&mut st).contains("› second question"));
    key(&mut st, KeyCode::Down, KeyModifiers::CONTROL);
    key(&mut st, KeyCode::Down, KeyModifiers::CONTROL);
    assert!(st.transcript.following());
    assert!(screen(&mut st, 60, 8).contains("Answer 3 line 8"));
}

#[test]
fn planning_is_its_own_phase_on_the_status_line() {
    let mut st = state();
    user_turn(&mut st, "fix the login bug");
    feed(&mut st, vec![json!({"type": "planning", "active": true})]);
    let status = screen(&mut st, 80, 8).lines().last().unwrap().to_string();
    assert!(status.contains("planning"), "{status}");
    feed(&mut st, vec![json!({"type": "planning", "active": false})]);
    let status = screen(&mut st, 80, 8).lines().last().unwrap().to_string();
    assert!(status.contains("waiting for the model"), "{status}");
    // A stop during planning is not undone by the planner's end.
    feed(&mut st, vec![json!({"type": "planning", "active": true})]);
    st.request_stop();
    feed(&mut st, vec![json!({"type": "planning", "active": false})]);
    assert!(screen(&mut st, 80, 8).contains("stopping"));
}

#[test]
fn ctrl_r_searches_the_input_history() {
    use crossterm::event::{KeyCode, KeyModifiers};
    let mut st = state();
    st.composer.preload(vec![
        "git status".into(),
        "cargo test --lib".into(),
        "Cargo build".into(),
    ]);
    typed(&mut st, "my draft");
    key(&mut st, KeyCode::Char('r'), KeyModifiers::CONTROL);
    typed(&mut st, "cargo");
    assert_eq!(st.composer.text, "Cargo build");
    assert_snapshot!("reverse_search_bar", screen(&mut st, 70, 6));
    key(&mut st, KeyCode::Char('r'), KeyModifiers::CONTROL);
    assert_eq!(st.composer.text, "cargo test --lib");
    key(&mut st, KeyCode::Char('r'), KeyModifiers::CONTROL);
    assert_eq!(st.composer.text, "cargo test --lib");
    // Esc: back to the draft, untouched.
    key(&mut st, KeyCode::Esc, KeyModifiers::NONE);
    assert!(st.rsearch.is_none());
    assert_eq!(st.composer.text, "my draft");
    // Enter keeps the entry in the composer, nothing is sent.
    key(&mut st, KeyCode::Char('r'), KeyModifiers::CONTROL);
    typed(&mut st, "STAT");
    assert_eq!(st.composer.text, "git status");
    typed(&mut st, "zz");
    assert!(screen(&mut st, 70, 6).contains("no match"));
    key(&mut st, KeyCode::Backspace, KeyModifiers::NONE);
    key(&mut st, KeyCode::Backspace, KeyModifiers::NONE);
    key(&mut st, KeyCode::Enter, KeyModifiers::NONE);
    assert!(st.rsearch.is_none());
    assert_eq!(st.composer.text, "git status");
    assert!(!st.running);
    // A cursor key keeps the entry and edits it.
    key(&mut st, KeyCode::Char('r'), KeyModifiers::CONTROL);
    typed(&mut st, "test");
    key(&mut st, KeyCode::Left, KeyModifiers::NONE);
    typed(&mut st, "X");
    assert_eq!(st.composer.text, "cargo test --liXb");
}
