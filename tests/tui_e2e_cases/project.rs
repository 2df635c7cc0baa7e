//! Issue 34 in the full-screen UI: the AGENTS.md line at start, a custom
//! command in the completion popup and run with its arguments, and
//! `--full-auto` on the status line. Shares the tmux harness of
//! `tests/tui_e2e.rs`.
use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn instructions_and_a_custom_command_in_the_tui() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("cfg");
    write_profile(&cfg);
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    std::fs::create_dir_all(repo.join(".navi/commands")).unwrap();
    std::fs::write(repo.join("AGENTS.md"), "TUI-RULE: answer in haiku\n").unwrap();
    std::fs::write(
        repo.join(".navi/commands/review.md"),
        "---\ndescription: review one file\n---\nPlease review $1 (focus: $2)",
    )
    .unwrap();
    let fake = FakeLlm::start().await;
    fake.push(Reply::text("REVIEWED-IT"));
    let command = format!(
        "cd {repo} && env HOME={home} NAVI_DATA_DIR={home}/data NAVI_CONFIG_DIR={cfg} OLLAMA_HOST={url} \
         LLM_STREAM_FIRST_CHUNK_TIMEOUT=20 {bin} --profile tester --full-auto; echo NAVI-EXIT:$?; sleep 60",
        repo = repo.display(),
        home = dir.path().display(),
        cfg = cfg.display(),
        url = fake.ollama_url(),
        bin = env!("CARGO_BIN_EXE_navi"),
    );
    let t = Tmux::start(&command);
    let s = t.wait_text("instructions: ").await;
    assert!(s.contains("repo/AGENTS.md"), "{s}");
    t.wait("full-auto on the status line", |s| {
        status_line(s).contains("full-auto")
    })
    .await;
    // The popup offers the command with its description.
    t.cmd(&["send-keys", "-t", SESSION, "-l", "/rev"])
        .status()
        .unwrap();
    t.wait_text("review one file").await;
    t.keys(&["C-u"]);
    t.type_line("/review src/lib.rs naming");
    t.wait_text("REVIEWED-IT").await;
    t.wait_idle().await;
    let reqs = fake.chat_requests();
    let msgs = reqs[0]["messages"].as_array().unwrap();
    let system = msgs[0]["content"].as_str().unwrap();
    assert!(system.contains("TUI-RULE: answer in haiku"), "{system}");
    let user = msgs.last().unwrap()["content"].as_str().unwrap();
    assert_eq!(user, "Please review src/lib.rs (focus: naming)");
}

/// Issue 34 items 5 and 6 in the TUI: a command file made after start is in
/// the popup, a terminal approval says what the sandbox allows, the card's
/// summary is the output's meaningful line, and at 60 columns the status
/// line still shows the model.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn later_commands_sandbox_sentence_card_summary_and_a_narrow_status_line() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("cfg");
    write_profile_with(&cfg, &["todo", "terminal"]);
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    let fake = FakeLlm::start().await;
    fake.push(Reply::tool_call(
        "terminal",
        json!({"command": "printf 'test_a ... ok\\n\\n----------------------------------------\\nRan 3 tests in 0.001s\\n\\nOK\\n' >&2"}),
    ));
    fake.push(Reply::text("TESTS-RAN"));
    let command = format!(
        "cd {repo} && env HOME={home} NAVI_DATA_DIR={home}/data NAVI_CONFIG_DIR={cfg} OLLAMA_HOST={url} \
         LLM_STREAM_FIRST_CHUNK_TIMEOUT=20 {bin} --profile tester; echo NAVI-EXIT:$?; sleep 60",
        repo = repo.display(),
        home = dir.path().display(),
        cfg = cfg.display(),
        url = fake.ollama_url(),
        bin = env!("CARGO_BIN_EXE_navi"),
    );
    let t = Tmux::start(&command);
    t.wait("the model on the status line", |s| {
        status_line(s).contains("test-model")
    })
    .await;
    // A command file written after navi started.
    std::fs::create_dir_all(repo.join(".navi/commands")).unwrap();
    std::fs::write(
        repo.join(".navi/commands/later.md"),
        "---\ndescription: made after start\n---\nDo the later thing",
    )
    .unwrap();
    t.cmd(&["send-keys", "-t", SESSION, "-l", "/lat"])
        .status()
        .unwrap();
    t.wait_text("made after start").await;
    t.keys(&["C-u"]);
    t.type_line("run the tests");
    let s = t.wait_text("Approval needed").await;
    let s = if s.contains("no network") {
        s
    } else {
        t.wait_text("no network").await
    };
    assert!(s.contains("may write only in the workspace"), "{s}");
    t.keys(&["y"]);
    t.wait_text("TESTS-RAN").await;
    let s = t.wait_idle().await;
    assert!(s.contains("Ran 3 tests in 0.001s · OK"), "{s}");
    assert!(!s.contains("└ exit 0 · ---"), "{s}");
    // Narrow: the model keeps its place on the status line.
    t.cmd(&["resize-window", "-t", SESSION, "-x", "60", "-y", "30"])
        .status()
        .unwrap();
    let s = t
        .wait("a 60-column screen", |s| {
            s.lines().all(|l| l.chars().count() <= 60) && status_line(s).contains("idle")
        })
        .await;
    let line = status_line(&s);
    assert!(line.contains("test-model"), "{line}");
}
