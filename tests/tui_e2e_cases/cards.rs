//! Tool cards drawn from typed display data (issue 24 item 3): a command's
//! card sums up its exit code and first output line, live and again after
//! the session is resumed in a new navi. The model's text says
//! `exit code: 4`; the card says `exit 4`, so what is drawn comes from the
//! display data, not from parsing that text.
use super::*;

fn navi_command(dir: &Path, cfg: &Path, url: &str, args: &str) -> String {
    format!(
        "cd {home} && env HOME={home} NAVI_DATA_DIR={home}/data NAVI_CONFIG_DIR={cfg} OLLAMA_HOST={url} \
         LLM_STREAM_FIRST_CHUNK_TIMEOUT=20 {bin} {args}; echo NAVI-EXIT:$?; sleep 60",
        home = dir.display(),
        cfg = cfg.display(),
        bin = env!("CARGO_BIN_EXE_navi"),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_card_shows_the_same_exit_code_live_and_after_resume() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("cfg");
    write_profile_with(&cfg, &["terminal"]);
    let fake = FakeLlm::start().await;
    fake.push(Reply::tool_call(
        "terminal",
        json!({"command": "echo first-out-line; echo second; exit 4"}),
    ));
    fake.push(Reply::text("The command failed."));
    // The summary is the output's meaningful (last) line.
    let card = "exit 4 · second";

    let t = Tmux::start(&navi_command(
        dir.path(),
        &cfg,
        &fake.ollama_url(),
        "--profile tester",
    ));
    t.wait_text("new session with profile tester").await;
    t.type_line("run it");
    t.wait_text("Approval needed").await;
    t.keys(&["y"]);
    t.wait_text("The command failed.").await;
    let live = t.wait_idle().await;
    assert!(live.contains("✗ terminal"), "{live}");
    assert!(live.contains(card), "live card: {live}");
    assert!(
        !live.contains("exit code: 4"),
        "the model's text shown: {live}"
    );
    t.keys(&["C-c"]);
    t.wait_text("press Ctrl-C again to quit").await;
    t.keys(&["C-c"]);
    let s = t.wait_text("NAVI-EXIT:0").await;
    let id = s
        .lines()
        .find_map(|l| l.trim().strip_prefix("resume with: navi --session "))
        .unwrap_or_else(|| panic!("no resume hint: {s}"))
        .trim()
        .to_string();
    drop(t);

    let t = Tmux::start(&navi_command(
        dir.path(),
        &cfg,
        &fake.ollama_url(),
        &format!("--session {id}"),
    ));
    let resumed = t.wait_text("The command failed.").await;
    assert!(resumed.contains("✗ terminal"), "{resumed}");
    assert!(resumed.contains(card), "resumed card: {resumed}");
    assert!(
        !resumed.contains("exit code: 4"),
        "the model's text shown: {resumed}"
    );
}
