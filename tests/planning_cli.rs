//! Planning through the real binary and the fake LLM server: which messages
//! cost planner calls in `navi run`, the progress line on stderr, a junk plan
//! over the wire, and `--no-plan` / `[planning] enabled = false` for `run`,
//! `--plain` and the full-screen UI's command line.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use crate::plain_support;
use crate::support;

use serde_json::{Value, json};
use std::path::PathBuf;
use std::process::Stdio;
use support::{FakeLlm, Reply};
use tokio::process::Command;

const TASK: &str = "Read the config, then fix the parser and run the tests";

/// A config dir with a `planner` profile that plans every message.
struct Env {
    dir: tempfile::TempDir,
}

impl Env {
    fn new() -> Env {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("cfg/profiles/planner");
        std::fs::create_dir_all(&p).unwrap();
        let cfg = json!({
            "id": "planner", "name": "Planner", "description": "plans", "model": ["test-model"],
            "enabled_tools": ["todo", "scratchpad"], "planning_enabled": true,
            "planning_phase1_enabled": true, "planning_phase3_enabled": true,
            "think_enabled": false, "iteration_budget_enabled": false,
            "goal_anchoring_enabled": false
        });
        std::fs::write(p.join("config.json"), cfg.to_string()).unwrap();
        std::fs::write(p.join("system_prompt.txt"), "PLANNER-PROMPT").unwrap();
        Env { dir }
    }

    fn cfg(&self) -> PathBuf {
        self.dir.path().join("cfg")
    }

    async fn run(&self, fake: &FakeLlm, args: &[&str]) -> (i32, String, String) {
        let out = Command::new(env!("CARGO_BIN_EXE_navi"))
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", self.dir.path())
            .env("NAVI_DATA_DIR", self.dir.path().join("data"))
            .env("NAVI_CONFIG_DIR", self.cfg())
            .env("OLLAMA_HOST", fake.ollama_url())
            .env("LLM_STREAM_FIRST_CHUNK_TIMEOUT", "20")
            .args(["--backend", "ollama"])
            .args(args)
            .stdin(Stdio::null())
            .kill_on_drop(true)
            .output()
            .await
            .unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }
}

fn planner_calls(chats: &[Value]) -> usize {
    chats
        .iter()
        .filter(|c| c["messages"].to_string().contains("Planning stage"))
        .count()
}

#[tokio::test]
async fn run_answers_greetings_and_short_requests_without_the_planner() {
    for msg in [
        "hi",
        "thanks!",
        "Name a large river in Germany.",
        "what is the capital of france",
        "list the files here",
    ] {
        let env = Env::new();
        let fake = FakeLlm::start().await;
        fake.push(Reply::text("The Rhine."));
        let (code, out, err) = env.run(&fake, &["run", "-p", "planner", msg]).await;
        assert_eq!(code, 0, "{msg}: {err}");
        assert_eq!(out.trim(), "The Rhine.", "{msg}");
        let chats = fake.chat_requests();
        assert_eq!(chats.len(), 1, "{msg}: one request, no planner call");
        assert_eq!(planner_calls(&chats), 0, "{msg}");
        assert!(!err.contains("planning"), "{msg}: {err}");
    }
}

#[tokio::test]
async fn run_plans_a_multi_step_task_and_shows_progress_on_stderr_only() {
    let env = Env::new();
    let fake = FakeLlm::start().await;
    fake.push(Reply::text("Task: fix the parser\nREFLECT: no").with_prefill(200));
    fake.push(Reply::text(
        "Milestones:\n1. Parser fixed\nSteps:\n1. 1. Read the config — TOOL: scratchpad\n2. Fix the parser — SELF",
    ));
    fake.push(Reply::text("Fixed."));
    let (code, out, err) = env.run(&fake, &["run", "-p", "planner", TASK]).await;
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.trim(), "Fixed.", "only the answer on stdout");
    let chats = fake.chat_requests();
    assert_eq!(chats.len(), 3);
    assert_eq!(planner_calls(&chats), 2);
    assert!(err.contains("planning… "), "{err}");
    assert!(
        err.contains("planning done (") || err.contains("done ("),
        "{err}"
    );
    // Each step once, with its own number; milestones are notes.
    assert!(
        err.contains("  1. Read the config — TOOL: scratchpad"),
        "{err}"
    );
    assert!(err.contains("  2. Fix the parser — SELF"), "{err}");
    assert!(err.contains("  - Parser fixed"), "{err}");
    assert!(!err.contains("1. 1.") && !err.contains("3. 1."), "{err}");
}

#[tokio::test]
async fn a_junk_plan_over_the_wire_is_no_plan_and_one_warning() {
    let env = Env::new();
    let fake = FakeLlm::start().await;
    fake.push(Reply::text("Task: t\nREFLECT: no"));
    fake.push(Reply::text("1. 1.1.1.\n".repeat(50)));
    fake.push(Reply::text("Answered anyway."));
    let (code, out, err) = env
        .run(&fake, &["run", "--json", "-p", "planner", TASK])
        .await;
    assert_eq!(code, 0, "{err}");
    let events: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let types: Vec<&str> = events.iter().filter_map(|e| e["type"].as_str()).collect();
    assert!(
        !types.contains(&"plan_ready") && !types.contains(&"todo_updated"),
        "{types:?}"
    );
    let warnings: Vec<&Value> = events.iter().filter(|e| e["type"] == "warning").collect();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    let w = warnings[0]["message"].as_str().unwrap();
    assert!(
        w.contains("50 steps") && w.ends_with("continuing without a plan"),
        "{w}"
    );
    // The planning phase is in the JSON stream: on, then off.
    let phases: Vec<bool> = events
        .iter()
        .filter(|e| e["type"] == "planning")
        .map(|e| e["active"].as_bool().unwrap())
        .collect();
    assert_eq!(phases, vec![true, false]);
    // The answer call carries no plan.
    let chats = fake.chat_requests();
    assert_eq!(chats.len(), 3);
    assert!(!chats[2]["messages"].to_string().contains("1.1.1."));
}

#[tokio::test]
async fn no_plan_before_or_after_run_and_the_config_key_turn_planning_off() {
    let env = Env::new();
    let fake = FakeLlm::start().await;
    for args in [
        vec!["run", "-p", "planner", "--no-plan", TASK],
        vec!["--no-plan", "run", "-p", "planner", TASK],
        vec!["--no-plan", "-p", "planner", "run", TASK],
    ] {
        fake.push(Reply::text("No plan needed."));
        let before = fake.chat_requests().len();
        let (code, out, err) = env.run(&fake, &args).await;
        assert_eq!(code, 0, "{args:?}: {err}");
        assert_eq!(out.trim(), "No plan needed.");
        assert_eq!(fake.chat_requests().len(), before + 1, "{args:?}");
        assert!(!err.contains("planning"), "{args:?}: {err}");
    }
    assert_eq!(planner_calls(&fake.chat_requests()), 0);
    // [planning] enabled = false: the same, for every run.
    std::fs::write(
        env.cfg().join("config.toml"),
        "[planning]\nenabled = false\n",
    )
    .unwrap();
    fake.push(Reply::text("Still no plan."));
    let (code, _, err) = env.run(&fake, &["run", "-p", "planner", TASK]).await;
    assert_eq!(code, 0, "{err}");
    assert_eq!(planner_calls(&fake.chat_requests()), 0);
    // A command that never plans refuses the flag instead of ignoring it.
    let (code, _, err) = env.run(&fake, &["--no-plan", "models"]).await;
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--no-plan does not apply to `navi models`"),
        "{err}"
    );
    // A bad value names the key.
    std::fs::write(
        env.cfg().join("config.toml"),
        "[planning]\nenabled = \"sometimes\"\n",
    )
    .unwrap();
    let (code, _, err) = env.run(&fake, &["run", "-p", "planner", TASK]).await;
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("enabled"), "{err}");
}

/// `navi --plain --no-plan` with piped input: accepted, and no planner call;
/// without the flag the same message is planned and the progress shows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plain_accepts_no_plan_and_shows_planning_progress() {
    let fake = FakeLlm::start().await;
    let home = plain_support::Home::new(&fake.ollama_url());
    let profile = home.dir.path().join("cfg/profiles/tester/config.json");
    let mut cfg: Value = serde_json::from_str(&std::fs::read_to_string(&profile).unwrap()).unwrap();
    cfg["planning_phase1_enabled"] = json!(true);
    cfg["planning_phase3_enabled"] = json!(true);
    std::fs::write(&profile, cfg.to_string()).unwrap();

    fake.push(Reply::text("Done without a plan."));
    let mut cmd = home.command("dumb", &[]);
    cmd.arg("--no-plan");
    let input = format!("{TASK}\n");
    let (code, out, err) = tokio::task::spawn_blocking(move || plain_support::piped(cmd, &input))
        .await
        .unwrap();
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("Done without a plan."), "{out}");
    assert_eq!(fake.chat_requests().len(), 1);
    assert_eq!(planner_calls(&fake.chat_requests()), 0);

    fake.push(Reply::text("Task: t\nREFLECT: no"));
    fake.push(Reply::text(
        "1. Read the config — TOOL: todo\n2. Fix it — SELF",
    ));
    fake.push(Reply::text("Done with a plan."));
    let cmd = home.command("dumb", &[]);
    let input = format!("{TASK}\n");
    let (code, out, err) = tokio::task::spawn_blocking(move || plain_support::piped(cmd, &input))
        .await
        .unwrap();
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("Done with a plan."), "{out}");
    assert_eq!(planner_calls(&fake.chat_requests()), 2);
    // Progress goes to stderr when stdout is a pipe.
    assert!(err.contains("planning… "), "{err}");
    assert!(err.contains("1. Read the config — TOOL: todo"), "{err}");
    assert!(!out.contains("planning"), "{out}");
}

/// `--no-plan` covers the helpers of the run too, even a profile whose
/// subagents plan their own tasks.
#[tokio::test]
async fn no_plan_reaches_subagents() {
    let env = Env::new();
    let file = env.cfg().join("profiles/planner/config.json");
    let mut cfg: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    cfg["enabled_tools"] = json!(["todo", "spawn_agent"]);
    cfg["subagent_planning_enabled"] = json!(true);
    std::fs::write(&file, cfg.to_string()).unwrap();
    let fake = FakeLlm::start().await;
    fake.push(Reply::tool_call(
        "spawn_agent",
        json!({"task": "Read the config, then fix the parser and report back"}),
    ));
    fake.push(Reply::text("helper report"));
    fake.push(Reply::text("Done."));
    let (code, out, err) = env
        .run(&fake, &["--no-plan", "run", "-p", "planner", TASK])
        .await;
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.trim(), "Done.", "{err}");
    let chats = fake.chat_requests();
    assert_eq!(chats.len(), 3, "main, helper, main: {err}");
    assert_eq!(planner_calls(&chats), 0);
}
