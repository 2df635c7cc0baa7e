//! End-to-end TUI planning in tmux: `navi --no-plan` is accepted and makes no
//! planner call; without it a multi-step message shows "planning" on the
//! status line, then a plan card with each step once.
use super::*;

fn write_planning_profile(cfg: &Path) {
    write_profile(cfg);
    let file = cfg.join("profiles/tester/config.json");
    let mut conf: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    conf["planning_enabled"] = json!(true);
    conf["planning_phase1_enabled"] = json!(true);
    conf["planning_phase3_enabled"] = json!(true);
    std::fs::write(&file, conf.to_string()).unwrap();
}

fn planner_calls(fake: &FakeLlm) -> usize {
    fake.chat_requests()
        .iter()
        .filter(|c| c["messages"].to_string().contains("Planning stage"))
        .count()
}

fn command(dir: &Path, fake: &FakeLlm, flags: &str) -> String {
    format!(
        "env HOME={home} NAVI_DATA_DIR={home}/data NAVI_CONFIG_DIR={home}/cfg OLLAMA_HOST={url} \
         LLM_STREAM_FIRST_CHUNK_TIMEOUT=20 {bin} {flags} --profile tester; echo NAVI-EXIT:$?; sleep 60",
        home = dir.display(),
        url = fake.ollama_url(),
        bin = env!("CARGO_BIN_EXE_navi"),
    )
}

const TASK: &str = "Read the config, then fix the parser";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tui_accepts_no_plan_and_shows_planning_and_the_plan_card() {
    let dir = tempfile::tempdir().unwrap();
    write_planning_profile(&dir.path().join("cfg"));
    let fake = FakeLlm::start().await;

    // --no-plan: one request for a multi-step message.
    fake.push(Reply::text("Answered without a plan."));
    let t = Tmux::start(&command(dir.path(), &fake, "--no-plan --new"));
    t.wait_text("new session with profile tester").await;
    t.type_line(TASK);
    t.wait_text("Answered without a plan.").await;
    assert_eq!(fake.chat_requests().len(), 1);
    assert_eq!(planner_calls(&fake), 0);
    drop(t);

    // Planning on: the status line says so while the planner runs; the plan
    // card numbers each step once.
    fake.push(Reply::text("Task: fix it\nREFLECT: no").with_prefill(1500));
    fake.push(Reply::text(
        "Milestones:\n1. Parser fixed\nSteps:\n1. 1. Read the config — TOOL: todo\n2. Fix the parser — SELF",
    ));
    fake.push(Reply::text("Fixed with a plan."));
    let t = Tmux::start(&command(dir.path(), &fake, "--new"));
    t.wait_text("new session with profile tester").await;
    t.type_line(TASK);
    t.wait("planning on the status line", |s| {
        status_line(s).contains("planning")
    })
    .await;
    let s = t.wait_text("Fixed with a plan.").await;
    assert!(s.contains("Plan · 2 steps"), "{s}");
    assert!(s.contains("1. Read the config"), "{s}");
    assert!(s.contains("2. Fix the parser"), "{s}");
    assert!(!s.contains("1. 1. Read"), "{s}");
    assert_eq!(planner_calls(&fake), 2);
}
