//! Long-term memory end to end: the real binary against the fake LLM server
//! and a real SQLite file — extraction of stale sessions (in the background
//! of an interactive front end, and with `navi memory extract`), the inbox,
//! the summary in the next request, the memory tools, the per-session claim,
//! and todo/scratchpad surviving a restart.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use crate::support;

use serde_json::{Value, json};
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;
use support::{FakeLlm, Reply};
use tokio::io::AsyncWriteExt;
use tokio::process::Command;

const EXTRACT_MARK: &str = "You maintain a long-term memory about the user";

struct Env {
    dir: tempfile::TempDir,
}

impl Env {
    fn new() -> Env {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("cfg/profiles/tester");
        std::fs::create_dir_all(&p).unwrap();
        let cfg = json!({
            "id": "tester", "name": "Tester", "description": "test profile",
            "short_description": "a profile for tests",
            "model": ["test-model"], "temperature": 0.2,
            "enabled_tools": ["todo", "scratchpad", "memory_search", "memory_forget"],
            "planning_phase1_enabled": false, "planning_phase3_enabled": false,
            "iteration_budget_enabled": false, "goal_anchoring_enabled": false,
            "think_enabled": false
        });
        std::fs::write(p.join("config.json"), cfg.to_string()).unwrap();
        std::fs::write(p.join("system_prompt.txt"), "TESTER-PROMPT").unwrap();
        std::fs::write(dir.path().join("cfg/persona.txt"), "TEST-PERSONA").unwrap();
        Env { dir }
    }

    fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    fn cmd(&self, fake: &FakeLlm, extra_env: &[(&str, &str)]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_navi"));
        c.env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", self.dir.path())
            .env("NAVI_DATA_DIR", self.data())
            .env("NAVI_CONFIG_DIR", self.dir.path().join("cfg"))
            .env("OLLAMA_HOST", fake.ollama_url())
            .env("NAVI_MEMORY_IDLE_MINUTES", "0")
            .env("TERM", "dumb")
            .args(["--backend", "ollama"])
            .stdin(Stdio::null())
            .kill_on_drop(true);
        for (k, v) in extra_env {
            c.env(k, v);
        }
        c
    }

    async fn run(&self, fake: &FakeLlm, args: &[&str]) -> (i32, String, String) {
        self.run_env(fake, &[], args).await
    }

    async fn run_env(
        &self,
        fake: &FakeLlm,
        env: &[(&str, &str)],
        args: &[&str],
    ) -> (i32, String, String) {
        let out = self.cmd(fake, env).args(args).output().await.unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    async fn facts(&self, fake: &FakeLlm) -> Vec<Value> {
        let (code, out, err) = self.run(fake, &["memory", "list", "--json"]).await;
        assert_eq!(code, 0, "{err}");
        serde_json::from_str::<Value>(&out)
            .unwrap()
            .as_array()
            .unwrap()
            .clone()
    }

    fn log_text(&self) -> String {
        let mut all = String::new();
        if let Ok(rd) = std::fs::read_dir(self.data().join("logs")) {
            for e in rd.flatten() {
                all.push_str(&std::fs::read_to_string(e.path()).unwrap_or_default());
            }
        }
        all
    }
}

fn is_extraction(body: &Value) -> bool {
    body["messages"][0]["content"]
        .as_str()
        .is_some_and(|s| s.starts_with(EXTRACT_MARK))
}

fn extraction_requests(fake: &FakeLlm) -> Vec<Value> {
    fake.chat_requests()
        .into_iter()
        .filter(is_extraction)
        .collect()
}

/// One finished session whose user message is display message `#1`.
async fn seed_session(env: &Env, fake: &FakeLlm, text: &str) {
    fake.push(Reply::text("Noted."));
    let (code, _, err) = env.run(fake, &["run", "--profile", "tester", text]).await;
    assert_eq!(code, 0, "{err}");
}

/// The memory part of the request: it travels in the one system message
/// (strict chat templates accept no second one), after the prompt.
fn memory_message(body: &Value) -> Option<String> {
    let m = &body["messages"][0];
    let text = m["content"].as_str().filter(|_| m["role"] == "system")?;
    let at = text.find("## What I remember about the user")?;
    Some(text[at..].to_string())
}

#[tokio::test]
async fn stale_session_is_extracted_when_plain_mode_starts_a_new_session() {
    let env = Env::new();
    let fake = FakeLlm::start().await;
    seed_session(&env, &fake, "I use helix as my editor and I live in Lyon").await;
    fake.push(Reply::text(
        "environment: editor = helix [#1]\nhome: city = Lyon [#1]",
    ));
    // An interactive front end on a new session: extraction runs in the
    // background while the prompt waits for input.
    let mut child = env
        .cmd(&fake, &[])
        .args(["--plain", "--new"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut waited = 0;
    while extraction_requests(&fake).is_empty() || env.facts_count().await < 2 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        waited += 1;
        assert!(waited < 200, "no extraction request arrived");
    }
    stdin.write_all(b"/quit\n").await.unwrap();
    drop(stdin);
    let status = tokio::time::timeout(Duration::from_secs(20), child.wait())
        .await
        .unwrap()
        .unwrap();
    assert!(status.success());
    let req = &extraction_requests(&fake)[0];
    // Thinking off; the conversation with message ids is what was sent.
    assert_eq!(req["think"], json!(false));
    let convo = req["messages"][1]["content"].as_str().unwrap();
    assert!(
        convo.contains("[#1] user: I use helix as my editor"),
        "{convo}"
    );
    assert!(convo.contains("assistant: Noted."), "{convo}");
    let facts = env.facts(&fake).await;
    assert_eq!(facts.len(), 2, "{facts:?}");
    let editor = facts.iter().find(|f| f["key"] == "editor").unwrap();
    assert_eq!(editor["category"], "environment");
    assert_eq!(editor["value"], "helix");
    assert_eq!(editor["status"], "proposed");
    assert_eq!(editor["source_message"], 1);
    let sessions = env.run(&fake, &["sessions", "list", "--json"]).await.1;
    let sessions: Value = serde_json::from_str(&sessions).unwrap();
    let first = sessions
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["title"].as_str().unwrap_or("").starts_with("I use helix"))
        .unwrap();
    assert_eq!(editor["source_session"], first["id"]);
}

impl Env {
    async fn facts_count(&self) -> usize {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_navi"))
            .env("NAVI_DATA_DIR", self.data())
            .env("NAVI_CONFIG_DIR", self.dir.path().join("cfg"))
            .env("HOME", self.dir.path())
            .args(["memory", "list", "--json"])
            .output()
            .unwrap();
        serde_json::from_slice::<Value>(&out.stdout)
            .ok()
            .and_then(|v| v.as_array().map(Vec::len))
            .unwrap_or(0)
    }
}

#[tokio::test]
async fn review_accepts_and_rejects_and_only_accepted_facts_reach_the_model() {
    let env = Env::new();
    let fake = FakeLlm::start().await;
    seed_session(
        &env,
        &fake,
        "my editor is helix, my shell is fish, I work at Acme",
    )
    .await;
    fake.push(Reply::text(
        "Sure! Here is what I found:\nenvironment: editor = helix [#1]\nenvironment: shell = fish [#1]\nwork: employer = Acme [#1]\nthis is not a fact",
    ));
    let (code, out, err) = env.run(&fake, &["memory", "extract"]).await;
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("3 new fact(s)"), "{out}");
    assert!(out.contains("2 line(s) skipped as malformed"), "{out}");
    assert!(
        env.log_text().contains("not a fact"),
        "no log line for the malformed lines"
    );
    // Nothing accepted yet: no memory message in the next request.
    fake.push(Reply::text("ok"));
    env.run(&fake, &["run", "--profile", "tester", "hello"])
        .await;
    let last = fake.chat_requests().last().cloned().unwrap();
    assert_eq!(memory_message(&last), None, "{last}");

    let facts = env.facts(&fake).await;
    let id = |k: &str| {
        facts.iter().find(|f| f["key"] == k).unwrap()["id"]
            .as_i64()
            .unwrap()
            .to_string()
    };
    let (code, out, err) = env
        .run(
            &fake,
            &[
                "memory",
                "review",
                "--accept",
                &id("editor"),
                "--reject",
                &id("employer"),
                "--edit",
                &format!("{}=zsh", id("shell")),
            ],
        )
        .await;
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("rejected"), "{out}");
    let facts = env.facts(&fake).await;
    assert_eq!(facts.len(), 2, "{facts:?}");
    assert!(facts.iter().all(|f| f["status"] == "active"));
    assert!(
        facts
            .iter()
            .any(|f| f["key"] == "shell" && f["value"] == "zsh")
    );
    // A bad id changes nothing and is a usage error.
    let (code, _, err) = env
        .run(&fake, &["memory", "review", "--accept", "999"])
        .await;
    assert_eq!(code, 2);
    assert!(err.contains("no fact #999"), "{err}");

    fake.push(Reply::text("ok"));
    env.run(&fake, &["run", "--profile", "tester", "hello again"])
        .await;
    let last = fake.chat_requests().last().cloned().unwrap();
    let mem = memory_message(&last).expect("memory after the system prompt");
    assert!(
        mem.starts_with("## What I remember about the user"),
        "{mem}"
    );
    assert!(
        mem.contains("editor = helix") && mem.contains("shell = zsh"),
        "{mem}"
    );
    assert!(!mem.contains("Acme"), "{mem}");
    // The system prompt names the other profiles (cross-profile awareness).
    let system = last["messages"][0]["content"].as_str().unwrap();
    assert!(system.contains("- developer: "), "{system}");
    assert!(!system.contains("- tester: "), "{system}");
}

#[tokio::test]
async fn memory_tools_search_and_forget_round_trip() {
    let env = Env::new();
    let fake = FakeLlm::start().await;
    seed_session(&env, &fake, "I run Arch Linux on my laptop").await;
    fake.push(Reply::text("environment: os = Arch Linux [#1]"));
    env.run_env(
        &fake,
        &[("NAVI_MEMORY_AUTO_ACCEPT", "true")],
        &["memory", "extract"],
    )
    .await;
    assert_eq!(env.facts(&fake).await[0]["status"], "active");

    fake.push(Reply::tool_call("memory_search", json!({"query": "linux"})));
    fake.push(Reply::tool_call("memory_forget", json!({"key": "os"})));
    fake.push(Reply::text("Forgotten."));
    let (code, _, err) = env
        .run(
            &fake,
            &[
                "run",
                "--profile",
                "tester",
                "what OS do I use? then forget it",
            ],
        )
        .await;
    assert_eq!(code, 0, "{err}");
    let reqs = fake.chat_requests();
    let n = reqs.len();
    let tools: Vec<&str> = reqs[n - 3]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert!(tools.contains(&"memory_search") && tools.contains(&"memory_forget"));
    let tool_result = |r: &Value| {
        r["messages"]
            .as_array()
            .unwrap()
            .iter()
            .rev()
            .find(|m| m["role"] == "tool")
            .map(|m| m["content"].as_str().unwrap().to_string())
            .unwrap()
    };
    assert_eq!(tool_result(&reqs[n - 2]), "environment: os = Arch Linux");
    assert!(tool_result(&reqs[n - 1]).starts_with("Forgot: environment: os"));
    assert!(env.facts(&fake).await.is_empty());
    let (_, out, _) = env.run(&fake, &["memory", "export"]).await;
    let export: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(export["summary"], "");
}

#[tokio::test]
async fn two_processes_never_extract_the_same_session() {
    let env = Env::new();
    let fake = FakeLlm::start().await;
    seed_session(&env, &fake, "I prefer tabs over spaces").await;
    // A slow answer: both processes are running while the first one waits.
    fake.push(Reply::text("prefs: indent = tabs [#1]").with_prefill(1500));
    fake.push(Reply::text("prefs: indent = spaces [#1]"));
    let a = env.cmd(&fake, &[]).args(["memory", "extract"]).output();
    let b = async {
        tokio::time::sleep(Duration::from_millis(300)).await;
        env.cmd(&fake, &[])
            .args(["memory", "extract"])
            .output()
            .await
    };
    let (a, b) = tokio::join!(a, b);
    let (a, b) = (a.unwrap(), b.unwrap());
    assert!(a.status.success() && b.status.success());
    assert_eq!(extraction_requests(&fake).len(), 1);
    let facts = env.facts(&fake).await;
    assert_eq!(facts.len(), 1);
    assert_eq!(facts[0]["value"], "tabs");
}

#[tokio::test]
async fn memory_disabled_means_no_extraction_no_summary_no_tools() {
    let env = Env::new();
    let fake = FakeLlm::start().await;
    seed_session(&env, &fake, "I use helix").await;
    fake.push(Reply::text("environment: editor = helix [#1]"));
    env.run_env(
        &fake,
        &[("NAVI_MEMORY_AUTO_ACCEPT", "true")],
        &["memory", "extract"],
    )
    .await;
    let off = [("NAVI_MEMORY", "false")];
    let (code, _, err) = env.run_env(&fake, &off, &["memory", "list"]).await;
    assert_eq!(code, 2);
    assert!(err.contains("memory is turned off"), "{err}");
    fake.push(Reply::text("ok"));
    let (code, _, err) = env
        .run_env(&fake, &off, &["run", "--profile", "tester", "hi"])
        .await;
    assert_eq!(code, 0, "{err}");
    let last = fake.chat_requests().last().cloned().unwrap();
    assert_eq!(memory_message(&last), None);
    let tools = last["tools"].to_string();
    assert!(!tools.contains("memory_search"), "{tools}");
    assert_eq!(extraction_requests(&fake).len(), 1);
}

#[tokio::test]
async fn todo_and_scratchpad_survive_a_restart() {
    let env = Env::new();
    let fake = FakeLlm::start().await;
    fake.push(Reply::tool_call(
        "todo",
        json!({"action": "set", "items": ["write the parser", "test it"]}),
    ));
    fake.push(Reply::tool_call(
        "scratchpad",
        json!({"action": "write", "section": "findings", "content": "the bug is in line 42"}),
    ));
    fake.push(Reply::text("planned"));
    let (code, _, err) = env
        .run(&fake, &["run", "--profile", "tester", "plan it"])
        .await;
    assert_eq!(code, 0, "{err}");
    // A new process continues the session.
    fake.push(Reply::tool_call("todo", json!({"action": "read"})));
    fake.push(Reply::tool_call("scratchpad", json!({"action": "read"})));
    fake.push(Reply::text("done"));
    let (code, _, err) = env
        .run(&fake, &["run", "--continue", "what was the plan?"])
        .await;
    assert_eq!(code, 0, "{err}");
    let reqs = fake.chat_requests();
    let n = reqs.len();
    let last_tool = |r: &Value| {
        r["messages"]
            .as_array()
            .unwrap()
            .iter()
            .rev()
            .find(|m| m["role"] == "tool")
            .map(|m| m["content"].as_str().unwrap().to_string())
            .unwrap()
    };
    let todo = last_tool(&reqs[n - 2]);
    assert!(
        todo.contains("1. write the parser") && todo.contains("2. test it"),
        "{todo}"
    );
    let pad = last_tool(&reqs[n - 1]);
    assert_eq!(pad, "## findings\nthe bug is in line 42");
}

#[tokio::test]
async fn plain_mode_memory_command_shows_and_reviews_the_inbox() {
    let env = Env::new();
    let fake = FakeLlm::start().await;
    seed_session(&env, &fake, "I use helix").await;
    fake.push(Reply::text("environment: editor = helix [#1]"));
    env.run(&fake, &["memory", "extract"]).await;
    let id = env.facts(&fake).await[0]["id"].as_i64().unwrap();
    let mut child = env
        .cmd(&fake, &[("NAVI_MEMORY_IDLE_MINUTES", "600")])
        .args(["--plain", "--new"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let script = format!("/memory\n/memory accept {id} kakoune\n/memory\n/quit\n");
    stdin.write_all(script.as_bytes()).await.unwrap();
    drop(stdin);
    let out = tokio::time::timeout(Duration::from_secs(20), child.wait_with_output())
        .await
        .unwrap()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("Inbox (1 proposed"), "{text}");
    assert!(
        text.contains("[proposed] environment: editor = helix"),
        "{text}"
    );
    assert!(text.contains("accepted #"), "{text}");
    assert!(text.contains("- environment: editor = kakoune"), "{text}");
    assert!(text.contains("Inbox: empty"), "{text}");
    let facts = env.facts(&fake).await;
    assert_eq!(facts[0]["status"], "active");
    assert_eq!(facts[0]["value"], "kakoune");
}
