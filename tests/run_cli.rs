//! `navi run` end to end: the real binary against the fake LLM server, with a
//! real SQLite file, on both wire protocols.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use crate::support;

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;
use support::{FakeLlm, Part, Reply};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;

pub(crate) struct Env {
    dir: tempfile::TempDir,
}

impl Env {
    /// A data dir, and a config dir holding a test profile with planning off.
    pub(crate) fn new() -> Env {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("cfg/profiles/tester");
        std::fs::create_dir_all(&p).unwrap();
        let cfg = json!({
            "id": "tester", "name": "Tester", "description": "test profile",
            "model": ["missing-model", "test-model"], "temperature": 0.2,
            "enabled_tools": ["todo", "scratchpad"],
            "planning_phase1_enabled": false, "planning_phase3_enabled": false,
            "iteration_budget_enabled": false, "goal_anchoring_enabled": false
        });
        std::fs::write(p.join("config.json"), cfg.to_string()).unwrap();
        std::fs::write(p.join("system_prompt.txt"), "TESTER-PROMPT").unwrap();
        std::fs::write(dir.path().join("cfg/persona.txt"), "TEST-PERSONA").unwrap();
        Env { dir }
    }

    fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    fn cmd(&self, fake: &FakeLlm, backend: &str) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_navi"));
        c.env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", self.dir.path())
            .env("NAVI_DATA_DIR", self.data())
            .env("NAVI_CONFIG_DIR", self.dir.path().join("cfg"))
            .env("OLLAMA_HOST", fake.ollama_url())
            .env("OPENAI_BASE_URL", fake.openai_url())
            .env("LLM_STREAM_FIRST_CHUNK_TIMEOUT", "20")
            .args(["--backend", backend])
            .stdin(Stdio::null())
            .kill_on_drop(true);
        c
    }
}

pub(crate) async fn run(
    env: &Env,
    fake: &FakeLlm,
    backend: &str,
    args: &[&str],
) -> (i32, String, String) {
    let out = env.cmd(fake, backend).args(args).output().await.unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn session_json(data: &Path) -> Value {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_navi"))
        .env("NAVI_DATA_DIR", data)
        .env("NAVI_CONFIG_DIR", data.join("nocfg"))
        .args(["sessions", "show", "1", "--json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

async fn tool_loop_with_thinking(backend: &str) {
    let env = Env::new();
    let fake = FakeLlm::start().await;
    fake.push(Reply::parts(vec![
        Part::Thinking("I should note the task".into()),
        Part::ToolCall {
            name: "todo".into(),
            args: json!({"action": "set", "items": ["check the logs"]}),
        },
    ]));
    fake.push(Reply::thinking_text("done thinking", "The list has one item.").with_usage(120, 9));
    let (code, stdout, stderr) = run(
        &env,
        &fake,
        backend,
        &["run", "--profile", "tester", "make a todo"],
    )
    .await;
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout.trim(), "The list has one item.");
    assert!(
        stderr.contains("→ todo(") && stderr.contains("✓ todo"),
        "{stderr}"
    );
    let chats = fake.chat_requests();
    assert_eq!(chats.len(), 2);
    for c in &chats {
        assert_eq!(
            c["model"], "test-model",
            "priority list skipped missing-model"
        );
        assert_eq!(c["messages"][0]["role"], "system");
        // Persona, separator, profile prompt, then the other profiles.
        let system = c["messages"][0]["content"].as_str().unwrap();
        assert!(
            system.starts_with("TEST-PERSONA\n\n---\n\nTESTER-PROMPT\n\nOther profiles"),
            "{system}"
        );
        let tools: Vec<&str> = c["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["function"]["name"].as_str().unwrap())
            .collect();
        assert_eq!(tools, vec!["todo", "scratchpad"]);
    }
    let second = chats[1]["messages"].as_array().unwrap();
    let tool_msg = second
        .iter()
        .find(|m| m["role"] == "tool")
        .expect("tool result sent back");
    assert!(
        tool_msg["content"]
            .as_str()
            .unwrap()
            .contains("check the logs")
    );
    let assistant = second.iter().find(|m| m["role"] == "assistant").unwrap();
    if backend == "ollama" {
        assert_eq!(tool_msg["tool_name"], "todo");
        assert_eq!(
            assistant["tool_calls"][0]["function"]["arguments"]["action"],
            "set"
        );
    } else {
        assert_eq!(tool_msg["tool_call_id"], assistant["tool_calls"][0]["id"]);
        assert!(assistant["tool_calls"][0]["function"]["arguments"].is_string());
    }
    let s = session_json(&env.data());
    let msgs = s["messages"].as_array().unwrap();
    let roles: Vec<&str> = msgs.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, vec!["user", "assistant", "tool", "assistant"]);
    assert_eq!(msgs[3]["thinking"], "done thinking");
    assert_eq!(s["session"]["profile_id"], "tester");
}

#[tokio::test]
async fn tool_loop_with_thinking_ollama() {
    tool_loop_with_thinking("ollama").await;
}

#[tokio::test]
async fn tool_loop_with_thinking_openai() {
    tool_loop_with_thinking("openai").await;
}

#[tokio::test]
async fn json_mode_prints_the_event_protocol() {
    let env = Env::new();
    let fake = FakeLlm::start().await;
    fake.push(Reply::thinking_text("hmm", "Hello world"));
    let (code, stdout, _) = run(
        &env,
        &fake,
        "ollama",
        &["run", "--json", "--profile", "tester", "hi"],
    )
    .await;
    assert_eq!(code, 0);
    let events: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(types.first(), Some(&"stream_start"));
    assert_eq!(types.last(), Some(&"stream_end"));
    for t in [
        "model_selected",
        "thinking_delta",
        "thinking_end",
        "turn_thinking",
        "stream_delta",
        "token_usage",
    ] {
        assert!(types.contains(&t), "{t} missing in {types:?}");
    }
    let text: String = events
        .iter()
        .filter(|e| e["type"] == "stream_delta")
        .map(|e| e["delta"].as_str().unwrap())
        .collect();
    assert_eq!(text, "Hello world");
    assert_eq!(events.last().unwrap()["content"], "Hello world");
}

/// A streamed answer written piece by piece ends as one row per buffer with
/// the whole text and thinking, and no pieces left over, on both protocols.
#[tokio::test]
async fn a_streamed_answer_is_folded_into_one_row_per_buffer() {
    for backend in ["ollama", "openai"] {
        let env = Env::new();
        let fake = FakeLlm::start().await;
        let thinking = "first I think, then I answer ";
        let answer = "one two three four five six seven eight nine ten ";
        fake.push(Reply::thinking_text(thinking, answer).with_delay(30));
        let (code, stdout, stderr) = run(
            &env,
            &fake,
            backend,
            &["run", "--profile", "tester", "count"],
        )
        .await;
        assert_eq!(code, 0, "{stderr}");
        assert_eq!(stdout.trim(), answer.trim());
        let c = rusqlite::Connection::open(env.data().join("navi.db")).unwrap();
        let left: i64 = c
            .query_row("SELECT COUNT(*) FROM message_deltas", [], |r| r.get(0))
            .unwrap();
        assert_eq!(left, 0, "{backend}: no pieces left");
        let mut st = c
            .prepare("SELECT buffer, content, thinking FROM messages WHERE role = 'assistant' ORDER BY buffer")
            .unwrap();
        let rows: Vec<(i64, String, Option<String>)> = st
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(rows.len(), 2, "{backend}: {rows:?}");
        for (buffer, (b, content, thought)) in rows.into_iter().enumerate() {
            assert_eq!(b, buffer as i64);
            assert_eq!(content, answer, "{backend}");
            assert_eq!(thought.as_deref(), Some(thinking), "{backend}");
        }
    }
}

#[tokio::test]
async fn kill_9_mid_stream_loses_nothing_shown_and_continue_works() {
    let env = Env::new();
    let fake = FakeLlm::start().await;
    let words: Vec<String> = (0..40).map(|i| format!("w{i} ")).collect();
    fake.push(Reply::text(words.concat()).with_delay(150));
    let mut child = env
        .cmd(&fake, "ollama")
        .args(["run", "--json", "--profile", "tester", "tell a long story"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut shown = String::new();
    let mut deltas = 0;
    while let Ok(Some(line)) = tokio::time::timeout(Duration::from_secs(20), lines.next_line())
        .await
        .unwrap()
    {
        let ev: Value = serde_json::from_str(&line).unwrap();
        if ev["type"] == "stream_delta" {
            shown.push_str(ev["delta"].as_str().unwrap());
            deltas += 1;
            if deltas == 5 {
                break;
            }
        }
    }
    let pid = child.id().unwrap() as i32;
    // SAFETY-free: kill(2) through the shell's kill command.
    std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .unwrap();
    let _ = child.wait().await;
    // The text after the first piece was appended as deltas, never folded.
    let db = env.data().join("navi.db");
    let deltas = |sql: &str| -> i64 {
        let c = rusqlite::Connection::open(&db).unwrap();
        c.query_row(sql, [], |r| r.get(0)).unwrap()
    };
    assert!(deltas("SELECT COUNT(*) FROM message_deltas") >= 3);
    let s = session_json(&env.data());
    let msgs = s["messages"].as_array().unwrap();
    assert_eq!(msgs[0]["content"], "tell a long story");
    let saved = msgs[1]["content"].as_str().unwrap();
    assert!(
        saved.starts_with(shown.trim_end()),
        "saved {saved:?} lacks shown {shown:?}"
    );
    fake.push(Reply::text("continuing the story"));
    let (code, stdout, stderr) = run(&env, &fake, "ollama", &["run", "--continue", "go on"]).await;
    assert_eq!(code, 0, "{stderr}");
    // The next writer folded them into the message for good.
    assert_eq!(deltas("SELECT COUNT(*) FROM message_deltas"), 0);
    let folded: String = rusqlite::Connection::open(&db)
        .unwrap()
        .query_row(
            "SELECT content FROM messages WHERE role = 'assistant' AND buffer = 0 ORDER BY id LIMIT 1",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(folded.starts_with(shown.trim_end()), "{folded:?}");
    assert_eq!(stdout.trim(), "continuing the story");
    let last = fake.chat_requests().pop().unwrap();
    let contents: Vec<&str> = last["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["content"].as_str())
        .collect();
    assert!(contents.contains(&"tell a long story") && contents.contains(&"go on"));
    assert!(contents.iter().any(|c| c.starts_with("w0 w1 w2")));
}

/// The database refuses the streamed text mid-answer (a trigger standing for
/// a full disk): `navi run` stops with one clear error and exit 1 instead of
/// panicking or hanging, and what was saved before stays.
#[tokio::test]
async fn a_database_write_failure_mid_stream_is_one_clear_error() {
    let env = Env::new();
    let fake = FakeLlm::start().await;
    fake.push(Reply::text("hello"));
    let (code, _, stderr) = run(&env, &fake, "ollama", &["run", "--profile", "tester", "hi"]).await;
    assert_eq!(code, 0, "{stderr}");
    let c = rusqlite::Connection::open(env.data().join("navi.db")).unwrap();
    c.execute_batch(
        "CREATE TRIGGER full BEFORE INSERT ON message_deltas
         BEGIN SELECT RAISE(FAIL, 'database or disk is full (simulated)'); END;",
    )
    .unwrap();
    let words: Vec<String> = (0..20).map(|i| format!("w{i} ")).collect();
    fake.push(Reply::text(words.concat()).with_delay(40));
    let out = tokio::time::timeout(
        Duration::from_secs(30),
        env.cmd(&fake, "ollama")
            .args(["run", "--continue", "tell a long story"])
            .output(),
    )
    .await
    .expect("navi run does not hang")
    .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("session database error") && stderr.contains("disk is full (simulated)"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    let s = session_json(&env.data());
    let msgs: Vec<&str> = s["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["content"].as_str())
        .collect();
    assert_eq!(&msgs[..3], &["hi", "hello", "tell a long story"]);
    assert!(msgs[3].starts_with("w0"), "{msgs:?}");
}

#[tokio::test]
async fn sigint_during_prefill_exits_130_and_saves() {
    let env = Env::new();
    let fake = FakeLlm::start().await;
    fake.push(Reply::text("too late").with_prefill(30_000));
    let mut child = env
        .cmd(&fake, "ollama")
        .args(["run", "--profile", "tester", "slow one"])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the chat request reached the server (prefill has begun).
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while fake.chat_requests().is_empty() {
        assert!(tokio::time::Instant::now() < deadline, "no chat request");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    std::process::Command::new("kill")
        .args(["-INT", &child.id().unwrap().to_string()])
        .status()
        .unwrap();
    let status = tokio::time::timeout(Duration::from_secs(10), child.wait())
        .await
        .expect("exits promptly")
        .unwrap();
    assert_eq!(status.code(), Some(130));
    let s = session_json(&env.data());
    let msgs = s["messages"].as_array().unwrap();
    assert_eq!(msgs[0]["content"], "slow one");
    assert!(
        msgs.last().unwrap()["content"]
            .as_str()
            .unwrap()
            .contains("stopped")
    );
}

#[tokio::test]
async fn unreachable_server_is_one_clear_error_exit_1() {
    let env = Env::new();
    let fake = FakeLlm::start().await;
    let mut c = env.cmd(&fake, "ollama");
    c.env("OLLAMA_HOST", "http://127.0.0.1:9");
    let out = c
        .args(["run", "--profile", "tester", "hi"])
        .output()
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("cannot reach") && err.contains("127.0.0.1:9") && err.contains("ollama serve"),
        "{err}"
    );
    assert!(!err.contains("panicked"));
    assert!(err.contains("nothing was saved"), "{err}");
    // Four runs that never reached a model leave no session behind; with
    // --json a line says so.
    for _ in 0..3 {
        let mut c = env.cmd(&fake, "ollama");
        c.env("OLLAMA_HOST", "http://127.0.0.1:9");
        let out = c.args(["run", "hi", "--json"]).output().await.unwrap();
        assert_eq!(out.status.code(), Some(1));
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(stdout.contains(r#""type":"session_not_saved""#), "{stdout}");
    }
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_navi"))
        .env("NAVI_DATA_DIR", env.data())
        .env("NAVI_CONFIG_DIR", env.data().join("nocfg"))
        .args(["sessions", "list", "--json"])
        .output()
        .unwrap();
    let listed: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    assert_eq!(
        listed.as_array().map(Vec::len).unwrap_or(0),
        0,
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[tokio::test]
async fn models_lists_both_protocols() {
    let env = Env::new();
    let fake = FakeLlm::start().await;
    fake.set_models(vec![
        ("alpha:7b".into(), Some(8192)),
        ("beta:1b".into(), None),
    ]);
    for backend in ["ollama", "openai"] {
        let (code, stdout, stderr) = run(&env, &fake, backend, &["models"]).await;
        assert_eq!(code, 0, "{backend}: {stderr}");
        assert!(
            stdout.contains("alpha:7b") && stdout.contains("beta:1b"),
            "{backend}: {stdout}"
        );
        let (code, stdout, _) = run(&env, &fake, backend, &["models", "--json"]).await;
        assert_eq!(code, 0);
        let v: Value = serde_json::from_str(&stdout).unwrap();
        assert_eq!(v[0]["name"], "alpha:7b");
    }
}

#[tokio::test]
async fn sessions_commands_work_on_the_saved_session() {
    let env = Env::new();
    let fake = FakeLlm::start().await;
    fake.push(Reply::text("first answer"));
    let (code, _, _) = run(
        &env,
        &fake,
        "ollama",
        &["run", "--profile", "tester", "Plan my week"],
    )
    .await;
    assert_eq!(code, 0);
    let (code, stdout, _) = run(&env, &fake, "ollama", &["sessions", "list"]).await;
    assert_eq!(code, 0);
    assert!(
        stdout.contains("Plan my week") && stdout.contains("tester"),
        "{stdout}"
    );
    let (code, _, _) = run(&env, &fake, "ollama", &["sessions", "pin", "1"]).await;
    assert_eq!(code, 0);
    let (_, stdout, _) = run(&env, &fake, "ollama", &["sessions", "list", "--json"]).await;
    let v: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v[0]["pinned"], true);
    let (code, _, stderr) = run(&env, &fake, "ollama", &["sessions", "show", "no-such-id"]).await;
    assert_eq!(code, 2, "{stderr}");
    let (code, _, _) = run(&env, &fake, "ollama", &["sessions", "delete", "1"]).await;
    assert_eq!(code, 0);
    let (_, stdout, _) = run(&env, &fake, "ollama", &["sessions", "list", "--json"]).await;
    assert_eq!(stdout.trim(), "[]");
}

#[tokio::test]
async fn planning_over_the_wire_makes_a_plan_and_todo() {
    let env = Env::new();
    let p = env.dir.path().join("cfg/profiles/planner");
    std::fs::create_dir_all(&p).unwrap();
    let cfg = json!({
        "id": "planner", "name": "Planner", "description": "plans", "model": "test-model",
        "enabled_tools": ["todo", "scratchpad"], "planning_phase2_enabled": true, "think_enabled": true
    });
    std::fs::write(p.join("config.json"), cfg.to_string()).unwrap();
    std::fs::write(p.join("system_prompt.txt"), "PLANNER-PROMPT").unwrap();
    let fake = FakeLlm::start().await;
    fake.push(Reply::text("Task: tidy the repo\nREFLECT: yes"));
    fake.push(Reply::text("Critic: REVIEW-TOKEN\nPlan Adjustments: none"));
    fake.push(Reply::text(
        "Milestones: tidy\n1. List files — TOOL: scratchpad\n2. Summarise — SELF",
    ));
    fake.push(Reply::text("Tidied."));
    let (code, stdout, stderr) = run(
        &env,
        &fake,
        "ollama",
        &[
            "run",
            "--json",
            "--profile",
            "planner",
            "tidy the repo, then list what changed",
        ],
    )
    .await;
    assert_eq!(code, 0, "{stderr}");
    let chats = fake.chat_requests();
    assert_eq!(chats.len(), 4);
    for c in &chats[..3] {
        // Same tools and system prompt as the main call: a shared, cacheable prefix.
        assert_eq!(c["tools"], chats[3]["tools"], "{c}");
        assert_eq!(c["messages"][0], chats[3]["messages"][0]);
        assert_eq!(c["think"], false);
        assert_eq!(c["options"]["temperature"], 0.3);
    }
    assert!(
        chats[2]["messages"][1]["content"]
            .as_str()
            .unwrap()
            .contains("REVIEW-TOKEN")
    );
    assert_eq!(chats[3]["think"], true);
    let events: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let todo = events
        .iter()
        .find(|e| e["type"] == "todo_updated")
        .expect("todo from plan");
    assert_eq!(todo["items"][0]["executor"], "TOOL: scratchpad");
    assert_eq!(todo["items"][1]["text"], "Summarise");
    assert!(events.iter().any(|e| e["type"] == "plan_ready"));
}
