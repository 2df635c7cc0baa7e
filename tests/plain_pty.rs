//! `navi --plain` end to end: the real binary in a real pty (reedline mode),
//! against the fake LLM server.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use crate::plain_support;
use crate::support;
#[path = "plain_pty_cases/typing.rs"]
mod typing;

use plain_support::{Home, Pty, contents};
use serde_json::json;
use support::{FakeLlm, Part, Reply};

fn xterm(home: &Home) -> Pty {
    Pty::spawn(home.command("xterm-256color", &[("NO_COLOR", "1")]))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_with_a_tool_call_prints_tool_lines_and_the_answer() {
    let fake = FakeLlm::start().await;
    fake.push(Reply::tool_call(
        "todo",
        json!({"action": "add", "items": ["write the tests"]}),
    ));
    fake.push(Reply::text("All **done**: one item added."));
    let home = Home::new(&fake.ollama_url());
    let mut pty = xterm(&home);
    pty.wait_for("navi[tester]> ");
    pty.send("please track this\r");
    pty.wait_for("→ todo(action=\"add\"");
    pty.wait_for("✓ todo:");
    pty.wait_for("All **done**: one item added.");
    pty.wait_for("── context ");
    pty.wait_prompt();
    // Multi-line: a trailing backslash continues the message.
    fake.push(Reply::text("got both lines"));
    pty.send("line one \\\r");
    pty.send("line two\r");
    pty.wait_for("got both lines");
    pty.wait_prompt();
    pty.send("\x04");
    assert_eq!(pty.exit_code(), 0, "Ctrl-D at an empty prompt exits 0");

    let reqs = fake.chat_requests();
    assert_eq!(reqs.len(), 3, "tool round, answer, second message");
    let second = contents(&reqs[1]);
    assert!(
        second.iter().any(|c| c.contains("write the tests")),
        "the tool result went back to the model: {second:?}"
    );
    let third = contents(&reqs[2]);
    assert_eq!(
        third.last().map(String::as_str),
        Some("line one \nline two")
    );
    let history = std::fs::read_to_string(home.data().join("history.txt")).unwrap();
    assert!(history.contains("please track this"), "{history}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slash_commands_and_completion() {
    let fake = FakeLlm::start().await;
    let home = Home::new(&fake.ollama_url());
    let mut pty = xterm(&home);
    pty.wait_prompt();
    pty.send("/help\r");
    pty.wait_for("/session resume [id|n]");
    pty.wait_for("/quit");
    pty.wait_prompt();
    pty.send("/session rename plain test\r");
    pty.wait_for("renamed to \"plain test\"");
    pty.wait_prompt();
    // Tab completes through the shared completer: "/ses" → "/session".
    pty.send("/ses\t");
    pty.wait_for("/session");
    pty.send(" li\t");
    pty.wait_for("list");
    pty.send("\r");
    pty.wait_for("tester");
    pty.wait_for("plain test");
    pty.wait_prompt();
    pty.send("/nonsense\r");
    pty.wait_for("unknown command /nonsense");
    pty.wait_prompt();
    // Theme names come from the built-in themes; only a known one is taken.
    pty.send("/theme nope\r");
    pty.wait_for("unknown theme 'nope'");
    pty.wait_prompt();
    pty.send("/theme h\t");
    pty.wait_for("high-contrast");
    pty.send("\r");
    pty.wait_for("theme: high-contrast");
    pty.wait_prompt();
    pty.send("/quit\r");
    assert_eq!(pty.exit_code(), 0);
    assert!(
        fake.chat_requests().is_empty(),
        "slash commands never reach the model"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_stops_a_slow_stream_and_the_session_goes_on() {
    let fake = FakeLlm::start().await;
    fake.push(Reply::text("slow ".repeat(300)).with_delay(40));
    fake.push(Reply::text("the second answer"));
    let home = Home::new(&fake.ollama_url());
    let mut pty = xterm(&home);
    pty.wait_prompt();
    pty.send("the first message\r");
    pty.wait_for("slow slow slow");
    pty.send("\x03");
    pty.wait_for("stopped");
    pty.wait_for("── context ");
    pty.wait_prompt();
    // Ctrl-C at the prompt clears the line; it doesn't quit.
    pty.send("never sent\x03");
    pty.wait_prompt();
    pty.send("the second message\r");
    pty.wait_for("the second answer");
    pty.wait_prompt();
    pty.send("\x04");
    assert_eq!(pty.exit_code(), 0);

    let reqs = fake.chat_requests();
    assert_eq!(reqs.len(), 2, "{reqs:?}");
    let second = contents(&reqs[1]);
    assert!(
        second.iter().any(|c| c == "the first message"),
        "the stopped turn stays in the session: {second:?}"
    );
    assert!(!second.iter().any(|c| c.contains("never sent")));
    assert_eq!(
        second.last().map(String::as_str),
        Some("the second message")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approvals_are_asked_inline() {
    let fake = FakeLlm::start().await;
    fake.push(Reply::tool_call(
        "terminal",
        json!({"command": "echo approved-$((20+22))"}),
    ));
    fake.push(Reply::text("ran it"));
    fake.push(Reply::tool_call(
        "terminal",
        json!({"command": "echo nope"}),
    ));
    fake.push(Reply::text("fine, not running it"));
    let home = Home::new(&fake.ollama_url());
    let mut pty = xterm(&home);
    pty.wait_prompt();
    pty.send("run the command\r");
    pty.wait_for("allow terminal: ");
    pty.wait_for("? [y]es/[s]ession/[N]o");
    pty.send("y\r");
    pty.wait_for("✓ terminal");
    pty.wait_for("ran it");
    pty.wait_prompt();
    pty.send("and another\r");
    pty.wait_for("[y]es/[s]ession/[N]o");
    pty.send("n\r");
    pty.wait_for("✗ terminal");
    pty.wait_for("fine, not running it");
    pty.wait_prompt();
    pty.send("/quit\r");
    assert_eq!(pty.exit_code(), 0);

    let reqs = fake.chat_requests();
    let after_yes = contents(&reqs[1]).join("\n");
    assert!(after_yes.contains("approved-42"), "{after_yes}");
    let after_no = contents(&reqs[3]).join("\n");
    assert!(after_no.contains("the user denied"), "{after_no}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dumb_terminal_without_colour_gets_no_escape_sequences() {
    let fake = FakeLlm::start().await;
    fake.push(Reply::parts(vec![
        Part::Thinking("weighing it up".into()),
        Part::Text("# Title\n\n- **bold** item\n\n```rust\nfn main() {}\n```\n".into()),
    ]));
    fake.push(Reply::tool_call("todo", json!({"action": "read"})));
    fake.push(Reply::text("done"));
    let home = Home::new(&fake.ollama_url());
    let mut pty = Pty::spawn(home.command("dumb", &[("NO_COLOR", "1")]));
    pty.wait_for("navi[tester]> ");
    pty.send("hello\r");
    pty.wait_for("fn main() {}");
    pty.wait_for("navi[tester]> ");
    pty.send("a tool please\r");
    pty.wait_for("→ todo");
    pty.wait_for("done");
    pty.wait_for("navi[tester]> ");
    pty.send("/help\r");
    pty.wait_for("/quit");
    pty.send("/copy\r");
    pty.wait_for("cannot copy");
    pty.send("\x04");
    assert_eq!(pty.exit_code(), 0);
    let out = pty.text();
    assert!(out.contains("thinking:"), "{out}");
    assert!(
        out.contains("- **bold** item"),
        "markdown stays as written: {out}"
    );
    assert!(
        !out.contains('\x1b'),
        "escape sequence in dumb output: {out:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn colour_terminal_gets_rendered_markdown() {
    let fake = FakeLlm::start().await;
    fake.push(Reply::text(
        "# Big Title\n\nplain words **strong** end\n\n```rust\nlet answer = 42;\n```\nbye\n",
    ));
    let home = Home::new(&fake.ollama_url());
    let mut pty = Pty::spawn(home.command("xterm-256color", &[]));
    pty.wait_prompt();
    pty.send("show me\r");
    pty.wait_for("bye");
    pty.wait_prompt();
    pty.send("/thinking off\r");
    pty.wait_for("thinking: one summary line per block");
    pty.wait_prompt();
    pty.send("\x04");
    assert_eq!(pty.exit_code(), 0);
    let out = pty.text();
    assert!(out.contains("\x1b[1;4;35mBig Title\x1b[0m"), "{out:?}");
    assert!(!out.contains("# Big Title"), "{out:?}");
    assert!(out.contains("\x1b[1mstrong\x1b[0m"), "{out:?}");
    // Code is highlighted with the 256-colour palette (no COLORTERM).
    assert!(out.contains("\x1b[38;5;"), "{out:?}");
    assert!(out.contains("answer"), "{out:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stderr_redirected_keeps_the_prompt_on_the_terminal() {
    let fake = FakeLlm::start().await;
    fake.push(Reply::text("answer on stdout"));
    let home = Home::new(&fake.ollama_url());
    let err = home.dir.path().join("stderr.log");
    let mut pty = Pty::spawn(home.command_stderr_to("xterm-256color", &err));
    pty.wait_for("navi[tester]> ");
    pty.send("hello\r");
    pty.wait_for("answer on stdout");
    pty.wait_for("navi[tester]> ");
    pty.send("/quit\r");
    assert_eq!(pty.exit_code(), 0);
    let log = std::fs::read_to_string(&err).unwrap();
    assert!(!log.contains("navi["), "the prompt went to stderr: {log:?}");
    assert!(
        !pty.text().contains("\x1b[6n"),
        "reedline ran without a terminal on stderr"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typed_ahead_yes_never_answers_the_approval() {
    let fake = FakeLlm::start().await;
    let words: String = (0..12).map(|i| format!("word{i} ")).collect();
    fake.push(
        Reply::parts(vec![
            Part::Text(words),
            Part::ToolCall {
                name: "terminal".into(),
                args: json!({"command": "echo TYPED-AHEAD-$((40+2))"}),
            },
        ])
        .with_delay(60),
    );
    fake.push(Reply::text("understood, not running it"));
    let home = Home::new(&fake.ollama_url());
    let mut pty = xterm(&home);
    pty.wait_prompt();
    pty.send("stream then run\r");
    // While the answer streams, the user types "y⏎" (and more) ahead.
    pty.wait_for("word1 ");
    pty.send("y\r");
    pty.send("yes\r");
    pty.wait_for("[y]es/[s]ession/[N]o");
    // Only what is typed after the question counts.
    pty.send("n\r");
    pty.wait_for("not taken as the answer");
    pty.wait_for("✗ terminal");
    pty.wait_for("understood, not running it");
    pty.wait_prompt();
    pty.send("/quit\r");
    assert_eq!(pty.exit_code(), 0);
    let reqs = fake.chat_requests();
    assert_eq!(
        reqs.len(),
        2,
        "the typed-ahead text was not sent as a message"
    );
    let after = contents(&reqs[1]).join("\n");
    assert!(after.contains("the user denied"), "{after}");
    assert!(!after.contains("TYPED-AHEAD-42"), "{after}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_in_plain_mode_stops_the_tool_and_exits_143() {
    let fake = FakeLlm::start().await;
    let home = Home::new(&fake.ollama_url());
    // Inside the workspace (navi runs in the home dir): the sandbox lets the
    // tool write there, not into navi's data dir.
    let pg = home.data().parent().unwrap().join("pgid");
    fake.push(Reply::tool_call(
        "terminal",
        json!({"command": format!("echo $$ > {}; sleep 30", pg.display())}),
    ));
    let mut pty = xterm(&home);
    pty.wait_prompt();
    pty.send("sleep a while\r");
    pty.wait_for("[y]es/[s]ession/[N]o");
    pty.send("y\r");
    let start = std::time::Instant::now();
    let pgid = loop {
        if let Some(n) = std::fs::read_to_string(&pg)
            .ok()
            .and_then(|t| t.trim().parse::<u32>().ok())
        {
            break n;
        }
        assert!(start.elapsed().as_secs() < 20, "tool never started");
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    std::process::Command::new("kill")
        .args(["-TERM", &pty.pid().to_string()])
        .status()
        .unwrap();
    assert_eq!(pty.exit_code(), 143);
    // The tool's process group is gone.
    let alive = |pid: u32| {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
            !s.rsplit_once(')')
                .is_some_and(|(_, r)| r.trim_start().starts_with('Z'))
        })
    };
    let start = std::time::Instant::now();
    while alive(pgid) {
        assert!(start.elapsed().as_secs() < 5, "tool group outlived navi");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // The session holds the call with its "cancelled" result.
    let db = rusqlite::Connection::open(home.data().join("navi.db")).unwrap();
    let results: Vec<String> = db
        .prepare("SELECT content FROM messages WHERE role = 'tool' AND buffer = 0")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(|r| r.unwrap())
        .collect();
    assert_eq!(results.len(), 1, "{results:?}");
    assert!(results[0].contains("cancelled"), "{results:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn navi_run_on_a_tty_ignores_typed_ahead_answers_and_ctrl_c_stops_the_turn() {
    let fake = FakeLlm::start().await;
    let words: String = (0..12).map(|i| format!("word{i} ")).collect();
    fake.push(
        Reply::parts(vec![
            Part::Text(words),
            Part::ToolCall {
                name: "terminal".into(),
                args: json!({"command": "echo RUN-AHEAD-$((40+2))"}),
            },
        ])
        .with_delay(60),
    );
    fake.push(Reply::text("ok, skipped"));
    let home = Home::new(&fake.ollama_url());
    let mut pty = Pty::spawn(home.run_command(&["stream then run"]));
    pty.wait_for("word1 ");
    pty.send("y\r");
    pty.wait_for("[y]es/[s]ession/[N]o");
    pty.send("n\r");
    pty.wait_for("ok, skipped");
    assert_eq!(pty.exit_code(), 0);
    let reqs = fake.chat_requests();
    let after = contents(&reqs[1]).join("\n");
    assert!(after.contains("the user denied"), "{after}");
    assert!(!after.contains("RUN-AHEAD-42"), "{after}");

    // Ctrl-C at the question stops the whole turn (exit 130), not just the call.
    fake.push(Reply::tool_call(
        "terminal",
        json!({"command": "echo NEVER-$((1+1))"}),
    ));
    fake.push(Reply::text("should not be asked for"));
    let mut pty = Pty::spawn(home.run_command(&["--continue", "again"]));
    pty.wait_for("[y]es/[s]ession/[N]o");
    pty.send("\x03");
    assert_eq!(pty.exit_code(), 130);
    assert_eq!(fake.chat_requests().len(), 3, "no model call after Ctrl-C");
    let db = rusqlite::Connection::open(home.data().join("navi.db")).unwrap();
    let last: String = db
        .query_row(
            "SELECT content FROM messages WHERE role = 'tool' AND buffer = 0 ORDER BY id DESC LIMIT 1",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(last.contains("cancelled"), "{last}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdout_redirected_keeps_prompts_and_questions_on_the_terminal() {
    let fake = FakeLlm::start().await;
    fake.push(Reply::tool_call(
        "terminal",
        serde_json::json!({"command": "echo hi"}),
    ));
    fake.push(Reply::text("answer in the file"));
    let home = Home::new(&fake.ollama_url());
    let file = home.dir.path().join("answers.txt");
    let mut c = std::process::Command::new("sh");
    c.args([
        "-c",
        "exec \"$0\" --plain --profile tester >\"$1\"",
        env!("CARGO_BIN_EXE_navi"),
    ])
    .arg(&file);
    let mut pty = Pty::spawn(home.setup_for_test(c, "xterm-256color"));
    pty.wait_for("navi[tester]> ");
    pty.send("run it\r");
    pty.wait_for("allow terminal:");
    pty.send("n\r");
    pty.wait_for("navi[tester]> ");
    pty.send("/quit\r");
    assert_eq!(pty.exit_code(), 0);
    let saved = std::fs::read_to_string(&file).unwrap();
    assert!(saved.contains("answer in the file"), "{saved:?}");
    assert!(
        !saved.contains("navi["),
        "the prompt went into the file: {saved:?}"
    );
    assert!(
        !saved.contains("allow terminal"),
        "the question went into the file: {saved:?}"
    );
    assert!(
        !pty.text().contains("answer in the file"),
        "the answer went to the terminal"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn history_is_on_disk_after_each_line() {
    let fake = FakeLlm::start().await;
    let home = Home::new(&fake.ollama_url());
    let mut pty = xterm(&home);
    pty.wait_prompt();
    pty.send("/help\r");
    pty.wait_for("/session new");
    pty.wait_prompt();
    pty.send("/tools\r");
    // The tool list is printed after the line is in the history file (the
    // prompt alone may be reedline repainting the submitted line).
    pty.wait_for("terminal      ");
    pty.wait_prompt();
    pty.kill9();
    let history = std::fs::read_to_string(home.data().join("history.txt")).unwrap_or_default();
    assert!(history.contains("/help"), "{history:?}");
    assert!(history.contains("/tools"), "{history:?}");
}

/// `navi sessions list --json` from another process on the same home.
fn session_rows(home: &Home) -> Vec<serde_json::Value> {
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_navi"));
    c.args(["sessions", "list", "--json"]);
    let out = home.setup_for_test(c, "xterm-256color").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{text}");
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v.as_array().cloned().unwrap()
}

/// Plain mode keeps a new session pending too: no row while idle (also
/// after `/session new`), "(new session)" in `/session list`, the row with
/// the first message, and nothing new left by `/session new` then Ctrl-D.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_session_row_until_the_first_message() {
    let fake = FakeLlm::start().await;
    fake.push(Reply::text("first answer"));
    let home = Home::new(&fake.ollama_url());
    let mut pty = xterm(&home);
    pty.wait_prompt();
    assert!(session_rows(&home).is_empty());
    pty.send("/session new\r");
    pty.wait_for("new session");
    pty.wait_prompt();
    pty.send("/session list\r");
    pty.wait_for("(new session)");
    pty.wait_prompt();
    assert!(session_rows(&home).is_empty());
    pty.send("hello plain\r");
    pty.wait_for("first answer");
    pty.wait_prompt();
    let rows = session_rows(&home);
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0]["profile_id"], "tester");
    pty.send("/session new\r");
    pty.wait_for("new session");
    pty.wait_prompt();
    pty.send("\x04");
    assert_eq!(pty.exit_code(), 0);
    assert_eq!(session_rows(&home).len(), 1);
}
