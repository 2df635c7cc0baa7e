//! Completion of slash-command arguments in the TUI popup (issue 26, item
//! 13): saved sessions (by id or title) for `/session resume|delete`, the
//! server's models for `/model` (listed in the background), profile ids for
//! `/profile switch`. Shares the tmux harness of `tests/tui_e2e.rs`.
use super::*;

/// The session ids the popup offers after `/session resume `.
fn offered_ids(screen: &str, head: &str) -> Vec<String> {
    screen
        .lines()
        .filter_map(|l| {
            let at = l.find(head)? + head.len();
            let id: String = l[at..].chars().take(8).collect();
            (id.len() == 8 && id.chars().all(|c| c.is_ascii_hexdigit())).then_some(id)
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_popup_completes_sessions_models_and_profiles() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("cfg");
    write_profile(&cfg);
    let fake = FakeLlm::start().await;
    fake.set_models(vec![
        ("test-model".into(), Some(32768)),
        ("other-model:7b".into(), Some(8192)),
    ]);
    fake.push(Reply::text("first answer"));
    fake.push(Reply::text("second answer"));
    let command = format!(
        "env HOME={home} NAVI_DATA_DIR={home}/data NAVI_CONFIG_DIR={cfg} OLLAMA_HOST={url} \
         LLM_STREAM_FIRST_CHUNK_TIMEOUT=20 {bin} --profile tester; echo NAVI-EXIT:$?; sleep 60",
        home = dir.path().display(),
        cfg = cfg.display(),
        url = fake.ollama_url(),
        bin = env!("CARGO_BIN_EXE_navi"),
    );
    let t = Tmux::start(&command);
    t.wait_text("new session with profile tester").await;
    t.type_line("alpha question");
    t.wait_text("first answer").await;
    t.wait_idle().await;
    t.type_line("/session new");
    t.wait("the new session", |s| {
        status_line(s).contains("(new session)")
    })
    .await;
    t.type_line("bravo question");
    t.wait_text("second answer").await;
    t.wait_idle().await;

    // Sessions: both offered, with their titles.
    let head = "/session resume ";
    t.keys(&["-l", head]);
    let s = t
        .wait("two sessions in the popup", |s| {
            offered_ids(s, head).len() >= 2
        })
        .await;
    assert!(
        s.contains("alpha question") && s.contains("bravo question"),
        "{s}"
    );
    let ids = offered_ids(&s, head);
    // By title: only the alpha session is left; Tab puts its id in.
    t.keys(&["-l", "alp"]);
    let s = t
        .wait("one session left", |s| offered_ids(s, head).len() == 1)
        .await;
    let alpha = offered_ids(&s, head)[0].clone();
    assert!(ids.contains(&alpha), "{ids:?} {alpha}");
    t.keys(&["Tab"]);
    t.wait("the id in the composer", |s| {
        s.contains(&format!("{head}{alpha}")) && !s.contains("Tab completes")
    })
    .await;
    t.keys(&["Enter"]);
    t.wait_text("› alpha question").await;
    // The same list for `/session delete`, by id prefix.
    t.keys(&["-l", &format!("/session delete {}", &alpha[..3])]);
    t.wait("the delete candidate", |s| {
        offered_ids(s, "/session delete ") == vec![alpha.clone()]
    })
    .await;
    t.keys(&["C-u"]);

    // Models: listed in the background, then offered; Tab completes.
    t.keys(&["-l", "/model oth"]);
    t.wait("the model candidate", |s| {
        s.contains("/model other-model:7b")
    })
    .await;
    t.keys(&["Tab"]);
    t.wait("the model in the composer", |s| {
        s.contains("/model other-model:7b") && !s.contains("Tab completes")
    })
    .await;
    t.keys(&["Enter"]);
    t.wait("the model on the status line", |s| {
        status_line(s).contains("other-model:7b")
    })
    .await;

    // Profiles.
    t.keys(&["-l", "/profile switch t"]);
    t.wait_text("/profile switch tester").await;
    t.keys(&["C-u"]);
}
