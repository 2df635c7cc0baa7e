//! `navi --plain` with stdin and stdout on pipes: a plain reader of stdin
//! lines that writes plain text.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use crate::plain_support;
use crate::support;

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
    // Piped stdout holds only answers and command output; progress,
    // status lines and the greeting go to stderr; input is not echoed.
    assert!(err.contains("→ todo(action=\"add\""), "{err}");
    assert!(err.contains("✓ todo:"), "{err}");
    assert!(!out.contains("→ todo("), "{out}");
    assert!(out.contains("second answer"), "{out}");
    assert!(
        !out.contains("> first question"),
        "input is not echoed: {out}"
    );
    assert!(
        !out.contains("profile tester"),
        "no greeting in stdout: {out}"
    );
    assert!(
        out.contains("1 "),
        "/session list output stays on stdout: {out}"
    );
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
    let (code, out, err) =
        tokio::task::spawn_blocking(move || piped(cmd, "/help\n/quit\nnot sent\n"))
            .await
            .unwrap();
    assert_eq!(code, 0);
    assert!(out.contains("/session new"), "{out}");
    // The default theme ("auto") is one line mode knows.
    assert!(
        !format!("{out}{err}").contains("unknown theme"),
        "{out}{err}"
    );
    assert!(fake.chat_requests().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn piped_input_starts_a_new_session_unless_continued_and_fails_with_1() {
    let fake = FakeLlm::start().await;
    let home = Home::new(&fake.ollama_url());
    fake.push(Reply::text("one"));
    let cmd = home.command("dumb", &[]);
    let (code, out, err) = tokio::task::spawn_blocking(move || piped(cmd, "first\n"))
        .await
        .unwrap();
    assert_eq!((code, out.trim()), (0, "one"), "{err}");
    // A second piped run does not see the first conversation...
    fake.push(Reply::text("two"));
    let cmd = home.command("dumb", &[]);
    let (code, _, err) = tokio::task::spawn_blocking(move || piped(cmd, "second\n"))
        .await
        .unwrap();
    assert_eq!(code, 0, "{err}");
    // ...unless --continue is given.
    fake.push(Reply::text("three"));
    let mut cmd = home.command("dumb", &[]);
    cmd.arg("--continue");
    let (code, _, err) = tokio::task::spawn_blocking(move || piped(cmd, "third\n"))
        .await
        .unwrap();
    assert_eq!(code, 0, "{err}");
    let reqs = fake.chat_requests();
    assert_eq!(
        contents(&reqs[1]).iter().filter(|c| *c == "first").count(),
        0
    );
    let third = contents(&reqs[2]);
    assert!(third.contains(&"second".to_string()), "{third:?}");
    // A failed turn makes the piped run exit 1 (the other turns still run).
    fake.push(Reply::fault(support::Fault::Status(400, "boom".into())));
    fake.push(Reply::text("after"));
    let cmd = home.command("dumb", &[]);
    let (code, out, err) = tokio::task::spawn_blocking(move || piped(cmd, "bad\ngood\n"))
        .await
        .unwrap();
    assert_eq!(code, 1, "{out}{err}");
    assert!(err.contains("boom"), "{err}");
    assert_eq!(out.trim(), "after", "the next line still ran");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attach_and_at_path_send_files_with_the_message() {
    let fake = FakeLlm::start().await;
    let home = Home::new(&fake.ollama_url());
    std::fs::write(home.dir.path().join("a.txt"), "alpha file").unwrap();
    std::fs::write(home.dir.path().join("b.txt"), "beta file").unwrap();
    fake.push(Reply::text("ok1"));
    fake.push(Reply::text("ok2"));
    let cmd = home.command("dumb", &[]);
    let input = "/attach a.txt\nfirst\nsecond with @b.txt please\n/attach missing.txt\n";
    let (code, out, err) = tokio::task::spawn_blocking(move || piped(cmd, input))
        .await
        .unwrap();
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("attached a.txt"), "{out}");
    assert!(err.contains("missing.txt"), "{err}");
    let reqs = fake.chat_requests();
    assert_eq!(
        contents(&reqs[0]).last().unwrap(),
        "first\n\na.txt:\n```\nalpha file\n```"
    );
    assert_eq!(
        contents(&reqs[1]).last().unwrap(),
        "second with @b.txt please\n\nb.txt:\n```\nbeta file\n```"
    );
}

/// `/model` is the session's, kept with it: chosen in plain mode, then
/// `navi run -c` in another process uses it; `/model default` clears it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_chosen_with_slash_model_stays_with_the_session() {
    let fake = FakeLlm::start().await;
    let home = Home::new(&fake.ollama_url());
    let last_model = |fake: &FakeLlm| {
        fake.chat_requests()
            .last()
            .map(|r| r["model"].as_str().unwrap_or("").to_string())
            .unwrap_or_default()
    };
    let plain = |continued: bool, input: &'static str| {
        let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_navi"));
        c.args(["--plain", "--profile", "tester"]);
        if continued {
            c.arg("-c");
        }
        let cmd = home.setup_for_test(c, "dumb");
        tokio::task::spawn_blocking(move || piped(cmd, input))
    };
    let run = |text: &str| {
        let mut c = home.run_command(&["-c", text]);
        tokio::task::spawn_blocking(move || c.output().unwrap())
    };
    for _ in 0..3 {
        fake.push(Reply::text("an answer"));
    }
    let (code, out, err) = plain(false, "hello\n/model other-model\n").await.unwrap();
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("model set to other-model for this session"),
        "{out}"
    );
    let asked = fake.chat_requests().len();
    fake.push(Reply::text("again"));
    let done = run("again").await.unwrap();
    assert!(done.status.success(), "{done:?}");
    assert!(fake.chat_requests().len() > asked);
    assert_eq!(last_model(&fake), "other-model");
    // Back to the profile's list, in another process again.
    let (code, out, err) = plain(true, "/model default\n").await.unwrap();
    assert_eq!(code, 0, "{out}{err}");
    fake.push(Reply::text("third"));
    let done = run("third").await.unwrap();
    assert!(done.status.success(), "{done:?}");
    assert_eq!(last_model(&fake), "test-model");
}
