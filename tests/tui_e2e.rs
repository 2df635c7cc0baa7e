//! The real `navi` binary in tmux against the fake LLM server: a streamed
//! answer, a tool card and the todo pane, Ctrl-C during a slow stream,
//! `/session list`, `/session new`, the `/session resume` picker, `/attach`
//! of a text file, and quitting with the terminal restored. Needs tmux (CI installs it).
#![allow(clippy::unwrap_used, clippy::expect_used)]
#[path = "tui_e2e_cases/cards.rs"]
mod cards;
#[path = "tui_e2e_cases/checkpoints.rs"]
mod checkpoints;
#[path = "tui_e2e_cases/complete.rs"]
mod complete;
#[path = "tui_e2e_cases/daily.rs"]
mod daily;
#[path = "tui_e2e_cases/lifetime.rs"]
mod lifetime;
#[path = "tui_e2e_cases/more.rs"]
mod more;
#[path = "tui_e2e_cases/plan.rs"]
mod plan;
#[path = "tui_e2e_cases/project.rs"]
mod project;
use crate::support;

use serde_json::json;
use std::path::Path;
use std::process::Command;
use std::time::Duration;
use support::{FakeLlm, Part, Reply};

/// A tmux server of its own (own socket), killed on drop.
struct Tmux {
    socket: String,
}

const SESSION: &str = "navi";

impl Tmux {
    fn start(command: &str) -> Tmux {
        match Command::new("tmux").arg("-V").output() {
            Ok(o) if o.status.success() => {}
            _ => panic!(
                "tmux is required for the TUI end-to-end test: install it (apt-get install tmux / brew install tmux)"
            ),
        }
        // One tmux server per test (tests in this file run in parallel).
        static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let socket = format!("navi-e2e-{}-{n}", std::process::id());
        let t = Tmux { socket };
        let ok = t
            .cmd(&[
                "new-session",
                "-d",
                "-s",
                SESSION,
                "-x",
                "120",
                "-y",
                "40",
                command,
            ])
            .status()
            .unwrap()
            .success();
        assert!(ok, "tmux new-session failed");
        t
    }

    fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new("tmux");
        c.args(["-L", &self.socket, "-f", "/dev/null"]).args(args);
        c
    }

    fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", SESSION];
        args.extend_from_slice(keys);
        assert!(self.cmd(&args).status().unwrap().success());
    }

    fn type_line(&self, text: &str) {
        assert!(
            self.cmd(&["send-keys", "-t", SESSION, "-l", text])
                .status()
                .unwrap()
                .success()
        );
        self.keys(&["Enter"]);
    }

    fn capture(&self) -> String {
        let out = self
            .cmd(&["capture-pane", "-p", "-t", SESSION])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Polls the screen until `f` holds (20 s deadline); returns the screen.
    async fn wait(&self, what: &str, f: impl Fn(&str) -> bool) -> String {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
        loop {
            let s = self.capture();
            if f(&s) {
                return s;
            }
            if tokio::time::Instant::now() > deadline {
                panic!("timed out waiting for {what}; screen:\n{s}");
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    async fn wait_text(&self, text: &str) -> String {
        self.wait(&format!("{text:?}"), |s| s.contains(text)).await
    }

    /// Waits until the status line says the turn is over: the answer's text
    /// is drawn before the turn finishes storing it, and keys sent in
    /// between go to a running turn (Ctrl-C stops it instead of quitting).
    async fn wait_idle(&self) -> String {
        self.wait("idle", |s| status_line(s).ends_with("idle"))
            .await
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.cmd(&["kill-server"]).status();
    }
}

fn write_profile(cfg: &Path) {
    write_profile_with(cfg, &["todo"]);
}

fn write_profile_with(cfg: &Path, tools: &[&str]) {
    let p = cfg.join("profiles/tester");
    std::fs::create_dir_all(&p).unwrap();
    let conf = json!({
        "id": "tester", "name": "Tester", "description": "test profile",
        "model": ["test-model"], "temperature": 0.2,
        "enabled_tools": tools,
        "think_enabled": false, "planning_enabled": false,
        "planning_phase1_enabled": false, "planning_phase2_enabled": false,
        "planning_phase3_enabled": false, "iteration_budget_enabled": false,
        "goal_anchoring_enabled": false, "anti_stall_enabled": false,
        "step_validation_enabled": false
    });
    std::fs::write(p.join("config.json"), conf.to_string()).unwrap();
    std::fs::write(p.join("system_prompt.txt"), "TESTER-PROMPT").unwrap();
}

fn status_line(screen: &str) -> String {
    screen
        .lines()
        .rfind(|l| l.contains(" navi "))
        .unwrap_or("")
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn navi_tui_end_to_end() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("cfg");
    write_profile(&cfg);
    let fake = FakeLlm::start().await;
    fake.set_models(vec![
        ("test-model".into(), Some(32768)),
        ("other-model:7b".into(), Some(8192)),
    ]);
    fake.push(Reply::text("Hello from the **fake** model.").with_delay(20));
    fake.push(Reply::tool_call(
        "todo",
        json!({"action": "set", "items": ["write the e2e test", "run it"]}),
    ));
    fake.push(Reply::text("Todo list ready."));
    let story: Vec<Part> = (1..=200)
        .map(|i| Part::Text(format!("Once upon a time number {i}. ")))
        .collect();
    fake.push(Reply::parts(story).with_delay(100));
    // Steer: the tool call arrives late, so the steer is typed mid-turn.
    fake.push(
        Reply::tool_call("todo", json!({"action": "set", "items": ["steer me"]}))
            .with_prefill(1500),
    );
    fake.push(Reply::text("Steered as asked."));

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
    // The model is resolved in the background and shown before anything is typed.
    t.wait("the model on the status line before typing", |s| {
        status_line(s).contains("test-model")
    })
    .await;
    assert!(
        fake.requests().iter().all(|r| !r.is_chat()),
        "no chat request before the first message"
    );

    // A streamed answer, rendered as Markdown (the ** markers are gone).
    t.type_line("hi");
    let s = t.wait_text("Hello from the fake model.").await;
    assert!(s.contains("› hi"), "{s}");
    let s = t
        .wait("idle after the answer", |s| {
            status_line(s).ends_with("idle")
        })
        .await;
    assert!(status_line(&s).contains("test-model"), "{s}");

    // A tool card and the todo pane.
    t.type_line("make a todo");
    let s = t.wait_text("Todo list ready.").await;
    assert!(s.contains("✓ todo"), "{s}");
    assert!(s.contains("1. write the e2e test"), "todo pane: {s}");

    // Ctrl-C during a slow stream stops it cooperatively.
    t.type_line("tell me a long story");
    t.wait_text("Once upon a time number 2").await;
    t.keys(&["C-c"]);
    let s = t.wait_text("stopped by user").await;
    assert!(!s.contains("number 200"), "the stream was not stopped: {s}");
    t.wait("idle after the stop", |s| status_line(s).ends_with("idle"))
        .await;
    let chats = fake.requests().into_iter().filter(|r| r.is_chat()).count();
    assert_eq!(chats, 4, "one request per answer, none after the stop");

    // Interrupt-and-steer: Ctrl-S during the turn; the steer goes in after
    // the tool batch and the next request carries it.
    t.type_line("update the todo list");
    t.wait("the turn running", |s| !status_line(s).ends_with("idle"))
        .await;
    assert!(
        t.cmd(&["send-keys", "-t", SESSION, "-l", "also say STEER-OK"])
            .status()
            .unwrap()
            .success()
    );
    t.keys(&["C-s"]);
    t.wait_text("steer (after the current tool batch)").await;
    let s = t.wait_text("Steered as asked.").await;
    assert!(s.contains("steer: taken in after the tool batch"), "{s}");
    let reqs = fake.chat_requests();
    assert_eq!(reqs.len(), 6, "no extra turn for the steer");
    let msgs = reqs[5]["messages"].as_array().unwrap();
    let last = &msgs[msgs.len() - 1];
    // The steer is a user message of its own, after a note closing the
    // tool batch (roles alternate; nothing folded into the result).
    assert_eq!(last["role"], "user", "{last}");
    assert_eq!(last["content"], "also say STEER-OK", "{last}");
    assert_eq!(msgs[msgs.len() - 2]["role"], "assistant");
    assert_eq!(msgs[msgs.len() - 3]["role"], "tool");
    assert!(
        reqs[4].to_string().find("STEER-OK").is_none(),
        "the steer waited for the safe point"
    );
    t.wait("idle after the steered turn", |s| {
        status_line(s).ends_with("idle")
    })
    .await;

    // /copy inside tmux goes through tmux's own buffer, and says so.
    t.type_line("/copy");
    t.wait_text("tmux's paste buffer").await;
    let buf = t.cmd(&["show-buffer"]).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&buf.stdout), "Steered as asked.");

    // /session list shows this session, titled by its first message.
    t.type_line("/session list");
    t.wait("the session list", |s| {
        s.lines()
            .any(|l| l.contains(">  1") && l.contains("tester") && l.contains(" hi "))
    })
    .await;

    // A new session, then the picker back to the first one.
    t.type_line("/session new");
    t.wait("an empty new session", |s| {
        s.contains("· new session") && !s.contains("Hello from the fake model.")
    })
    .await;
    t.type_line("/session resume");
    t.wait_text("Resume a session").await;
    t.keys(&["Down"]);
    t.keys(&["Enter"]);
    let s = t.wait_text("resumed hi").await;
    assert!(s.contains("Todo list ready."), "history after resume: {s}");
    assert!(s.contains("✓ todo"), "tool card from history: {s}");

    // The model picker: what the server serves, with its context length and
    // capabilities; an unknown name is refused with the list.
    t.type_line("/model nope");
    t.wait_text("unknown model 'nope'").await;
    let s = t.wait_text("other-model:7b").await;
    assert!(status_line(&s).contains("test-model"), "{s}");
    t.type_line("/model");
    let s = t.wait_text("Choose a model").await;
    assert!(
        s.contains("test-model · 32k context · tools, thinking"),
        "{s}"
    );
    assert!(s.contains("other-model:7b · 8k context"), "{s}");
    t.keys(&["Down"]);
    t.keys(&["Enter"]);
    t.wait("the status line on the new model", |s| {
        status_line(s).contains("other-model:7b")
    })
    .await;

    // Idle: Ctrl-C twice quits, and the shell gets its terminal back.
    t.keys(&["C-c"]);
    t.wait_text("press Ctrl-C again to quit").await;
    t.keys(&["C-c"]);
    let s = t.wait_text("NAVI-EXIT:0").await;
    assert!(
        !s.contains("Ask Navi anything"),
        "alternate screen left: {s}"
    );
    // The last answer and the way back stay in the scrollback.
    let resume = s
        .lines()
        .find_map(|l| l.trim().strip_prefix("resume with: navi --session "))
        .unwrap_or_else(|| panic!("no resume hint: {s}"))
        .trim()
        .to_string();
    let answer = s
        .find("Steered as asked.")
        .expect("last answer in the scrollback");
    assert!(answer < s.find("resume with:").unwrap(), "{s}");
    // The empty session of `/session new` was not kept; the resume id works.
    let out = Command::new(env!("CARGO_BIN_EXE_navi"))
        .args(["sessions", "list"])
        .env("HOME", dir.path())
        .env("NAVI_DATA_DIR", dir.path().join("data"))
        .env("NAVI_CONFIG_DIR", &cfg)
        .output()
        .unwrap();
    let list = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{list}");
    let rows = list.lines().filter(|l| l.contains("tester")).count();
    assert_eq!(rows, 1, "only the session with messages is kept:\n{list}");
    assert!(
        list.contains(&resume[..8.min(resume.len())]),
        "{resume} not in {list}"
    );
}

/// The `/model` list from both wire protocols: Ollama's `/api/tags` plus
/// `/api/show` per model, and an OpenAI-compatible `/v1/models`.
#[tokio::test]
async fn model_list_from_api_tags_and_v1_models() {
    use navi::app::fetch_models;
    use navi::llm::LlmBackend;
    use navi::ui::tui::model_picker::describe;
    use std::sync::Arc;
    let fake = FakeLlm::start().await;
    fake.set_models(vec![
        ("llama3.2:3b".into(), Some(131072)),
        ("qwen3:8b".into(), None),
    ]);
    let ollama: Arc<dyn LlmBackend> =
        Arc::new(navi::llm::ollama::OllamaBackend::new(&fake.ollama_url()).unwrap());
    let got: Vec<String> = fetch_models(ollama)
        .await
        .unwrap()
        .iter()
        .map(describe)
        .collect();
    assert_eq!(
        got,
        vec![
            "llama3.2:3b · 128k context · tools, thinking",
            "qwen3:8b · tools, thinking"
        ]
    );
    let paths: Vec<String> = fake.requests().iter().map(|r| r.path.clone()).collect();
    assert!(paths.contains(&"/api/tags".to_string()), "{paths:?}");
    assert_eq!(paths.iter().filter(|p| *p == "/api/show").count(), 2);

    let openai: Arc<dyn LlmBackend> =
        Arc::new(navi::llm::openai::OpenAiBackend::new(&fake.openai_url(), "").unwrap());
    let got: Vec<String> = fetch_models(openai)
        .await
        .unwrap()
        .iter()
        .map(describe)
        .collect();
    assert_eq!(got, vec!["llama3.2:3b · 128k context", "qwen3:8b"]);
    assert!(
        fake.requests()
            .iter()
            .any(|r| r.path.ends_with("/v1/models"))
    );

    // A server that is down: an error naming it, no panic.
    drop(fake);
    let gone: Arc<dyn LlmBackend> =
        Arc::new(navi::llm::ollama::OllamaBackend::new("http://127.0.0.1:9").unwrap());
    let e = fetch_models(gone).await.unwrap_err();
    assert!(e.contains("127.0.0.1:9"), "{e}");
}
