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
