//! `navi --plain` with stdin and stdout on pipes: a plain reader of stdin
//! lines that writes plain text.
#![allow(clippy::unwrap_used, clippy::expect_used)]
mod plain_support;
mod support;

use plain_support::{Home, contents, piped};
use serde_json::json;
use support::{FakeLlm, Part, Reply};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn piped_run_reads_lines_and_writes_plain_text() {
    let fake = FakeLlm::start().await;
    fake.push(Reply::parts(vec![
        Part::Thinking("thinking hard".into()),
        Part::Text("## Answer\n\nUse `cargo test` and **relax**.\n".into()),
    ]));
    fake.push(Reply::tool_call(
        "todo",
        json!({"action": "add", "items": ["x"]}),
    ));
    fake.push(Reply::text("second answer"));
    let home = Home::new(&fake.ollama_url());
    // Even with a colour-loving TERM, a pipe gets no escape sequences.
    let cmd = home.command("xterm-256color", &[("COLORTERM", "truecolor")]);
    let input = "first question\n/session list\nsecond \\\nquestion\n";
    let (code, out, err) = tokio::task::spawn_blocking(move || piped(cmd, input))
        .await
        .unwrap();
    assert_eq!(code, 0, "end of input exits 0; stderr: {err}");
    assert!(out.contains("## Answer"), "{out}");
    assert!(out.contains("Use `cargo test` and **relax**."), "{out}");
    assert!(out.contains("→ todo(action=\"add\""), "{out}");
    assert!(out.contains("✓ todo:"), "{out}");
    assert!(out.contains("second answer"), "{out}");
    assert!(out.contains("first question"), "{out}");
    assert!(
        !out.contains('\x1b'),
        "escape sequence in piped output: {out:?}"
    );
    assert!(!err.contains('\x1b'), "{err:?}");
    let reqs = fake.chat_requests();
    assert_eq!(reqs.len(), 3);
    assert_eq!(
        contents(&reqs[1]).last().map(String::as_str),
        Some("second \nquestion")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quit_command_exits_zero_and_skips_the_rest() {
    let fake = FakeLlm::start().await;
    let home = Home::new(&fake.ollama_url());
    let cmd = home.command("dumb", &[]);
    let (code, out, _) =
        tokio::task::spawn_blocking(move || piped(cmd, "/help\n/quit\nnot sent\n"))
            .await
            .unwrap();
    assert_eq!(code, 0);
    assert!(out.contains("/session new"), "{out}");
    assert!(fake.chat_requests().is_empty());
}
