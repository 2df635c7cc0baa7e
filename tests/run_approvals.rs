//! Approvals in `navi run --json` on a terminal are asked
//! there (not denied), and with piped stdin a denied tool's message keeps
//! the fix (`--approve`) however long the call is.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use crate::{plain_support, support};

use plain_support::{Home, Pty, contents, piped};
use serde_json::json;
use support::{FakeLlm, Reply};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_json_on_a_terminal_asks_and_emits_the_request() {
    let fake = FakeLlm::start().await;
    fake.push(Reply::tool_call(
        "terminal",
        json!({"command": "echo JSON-ASKED-$((40+2))"}),
    ));
    fake.push(Reply::text("done after approval"));
    let home = Home::new(&fake.ollama_url());
    let mut pty = Pty::spawn(home.run_command(&["--json", "run it"]));
    pty.wait_for("\"type\":\"approval_request\"");
    pty.wait_for("[y]es/[s]ession/[N]o");
    pty.send("y\r");
    pty.wait_for("done after approval");
    assert_eq!(pty.exit_code(), 0, "{}", pty.text());
    let reqs = fake.chat_requests();
    let after = contents(&reqs[1]).join("\n");
    assert!(after.contains("JSON-ASKED-42"), "{after}");
    assert!(!after.contains("no terminal"), "{after}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_denied_call_keeps_the_fix_however_long_the_command() {
    for long in [10usize, 300] {
        let fake = FakeLlm::start().await;
        let cmd = format!("echo {}", "x".repeat(long));
        fake.push(Reply::tool_call("terminal", json!({ "command": cmd })));
        fake.push(Reply::text("ok"));
        let home = Home::new(&fake.ollama_url());
        let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_navi"));
        c.args(["run", "--profile", "tester", "go"]);
        let c = home.setup_for_test(c, "dumb");
        let (code, _out, err) = tokio::task::spawn_blocking(move || piped(c, ""))
            .await
            .unwrap();
        assert_eq!(code, 0, "{err}");
        let denied = err
            .lines()
            .find(|l| l.contains("✗ terminal"))
            .unwrap_or_else(|| panic!("{err}"));
        assert!(
            denied.contains("--approve terminal"),
            "cut before the fix: {denied}"
        );
        let reqs = fake.chat_requests();
        let tool_result = contents(&reqs[1]).join("\n");
        assert!(tool_result.contains("--approve terminal"), "{tool_result}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_at_the_first_approval_shows_every_call_of_the_batch() {
    use support::Part;
    let fake = FakeLlm::start().await;
    fake.push(Reply::parts(vec![
        Part::ToolCall {
            name: "terminal".into(),
            args: json!({"command": "echo FIRST-CALL"}),
        },
        Part::ToolCall {
            name: "terminal".into(),
            args: json!({"command": "echo SECOND-CALL"}),
        },
    ]));
    let home = Home::new(&fake.ollama_url());
    let mut pty = Pty::spawn(home.run_command(&["two calls"]));
    pty.wait_for("[y]es/[s]ession/[N]o");
    pty.send("\x03");
    assert_eq!(pty.exit_code(), 130);
    let text = pty.text();
    assert!(
        text.contains("SECOND-CALL"),
        "the second call is hidden:\n{text}"
    );
    assert_eq!(
        text.matches("operation cancelled by user").count(),
        2,
        "{text}"
    );
}
