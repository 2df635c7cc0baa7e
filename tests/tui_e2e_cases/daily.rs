//! End-to-end TUI cases for issue 26 item 10 (honest status): a server
//! without the profile's models is not "down", and a resumed session shows
//! its stored window at once. Shares the tmux harness of `tests/tui_e2e.rs`.
use super::*;

fn navi_command(dir: &Path, cfg: &Path, url: &str) -> String {
    format!(
        "env HOME={home} NAVI_DATA_DIR={home}/data NAVI_CONFIG_DIR={cfg} OLLAMA_HOST={url} \
         LLM_STREAM_FIRST_CHUNK_TIMEOUT=20 {bin} --profile tester; echo NAVI-EXIT:$?; sleep 60",
        home = dir.display(),
        cfg = cfg.display(),
        bin = env!("CARGO_BIN_EXE_navi"),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_without_the_profiles_models_is_not_down() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("cfg");
    write_profile(&cfg);
    let fake = FakeLlm::start().await;
    fake.set_models(vec![
        ("someone-else:7b".into(), Some(8192)),
        ("another:3b".into(), Some(8192)),
    ]);
    let t = Tmux::start(&navi_command(dir.path(), &cfg, &fake.ollama_url()));
    let s = t
        .wait("the model check on the status line", |s| {
            status_line(s).contains('⚠')
        })
        .await;
    let status = status_line(&s);
    assert!(status.contains("no model of the profile"), "{s}");
    assert!(status.contains("/model"), "{s}");
    assert!(!status.contains("server down"), "{s}");
    assert!(s.contains("Pick one with /model"), "{s}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_session_shows_its_stored_window_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("cfg");
    write_profile(&cfg);
    let fake = FakeLlm::start().await;
    fake.set_models(vec![("test-model".into(), Some(32768))]);
    fake.push(Reply::text("first answer"));
    fake.push(Reply::text("second answer"));
    let t = Tmux::start(&navi_command(dir.path(), &cfg, &fake.ollama_url()));
    t.wait_text("new session with profile tester").await;
    t.type_line("one");
    t.wait_text("first answer").await;
    t.wait_idle().await;
    t.type_line("/session new");
    // The new session is on screen once the old one's messages are gone.
    t.wait("a new session", |s| {
        s.contains("new session") && !s.contains("first answer")
    })
    .await;
    t.type_line("two");
    t.wait_text("second answer").await;
    t.wait_idle().await;
    t.type_line("/session resume 2");
    let s = t.wait_text("› one").await;
    let status = status_line(&s);
    assert!(
        status.contains("/32k"),
        "window not shown after resume: {s}"
    );
    assert!(!status.contains('–'), "{s}");
}
