//! Memory in daily use (issue 26): the user's word wins over extraction
//! (item 4), a session open in another navi is not extracted (item 5), and
//! one-shot users get memory without running `navi memory extract` (item 6).
use crate::support::{FakeLlm, Reply};
use serde_json::{Value, json};
use std::process::Stdio;
use std::time::{Duration, Instant};
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
            "model": ["test-model"], "enabled_tools": ["todo"],
            "planning_phase1_enabled": false, "planning_phase3_enabled": false,
            "iteration_budget_enabled": false, "goal_anchoring_enabled": false,
            "think_enabled": false
        });
        std::fs::write(p.join("config.json"), cfg.to_string()).unwrap();
        std::fs::write(p.join("system_prompt.txt"), "TESTER").unwrap();
        Env { dir }
    }

    fn cmd(&self, fake: &FakeLlm, env: &[(&str, &str)]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_navi"));
        c.env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", self.dir.path())
            .env("NAVI_DATA_DIR", self.dir.path().join("data"))
            .env("NAVI_CONFIG_DIR", self.dir.path().join("cfg"))
            .env("OLLAMA_HOST", fake.ollama_url())
            .env("NAVI_MEMORY_IDLE_MINUTES", "0")
            .env("TERM", "dumb")
            .args(["--backend", "ollama"])
            .stdin(Stdio::null())
            .kill_on_drop(true);
        for (k, v) in env {
            c.env(k, v);
        }
        c
    }

    async fn navi(&self, fake: &FakeLlm, env: &[(&str, &str)], args: &[&str]) -> (i32, String) {
        let out = self.cmd(fake, env).args(args).output().await.unwrap();
        let all = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        (out.status.code().unwrap_or(-1), all)
    }

    /// One finished session: the message and "Noted.".
    async fn seed(&self, fake: &FakeLlm, text: &str) {
        fake.push(Reply::text("Noted."));
        let (code, out) = self
            .navi(fake, &[], &["run", "--profile", "tester", text])
            .await;
        assert_eq!(code, 0, "{out}");
    }

    async fn extract(&self, fake: &FakeLlm, answer: &str, env: &[(&str, &str)]) -> String {
        fake.push(Reply::text(answer));
        let (code, out) = self.navi(fake, env, &["memory", "extract"]).await;
        assert_eq!(code, 0, "{out}");
        out
    }

    async fn facts(&self, fake: &FakeLlm) -> Vec<Value> {
        let (code, out) = self.navi(fake, &[], &["memory", "list", "--json"]).await;
        assert_eq!(code, 0, "{out}");
        serde_json::from_str::<Value>(&out)
            .unwrap()
            .as_array()
            .unwrap()
            .clone()
    }
}

fn extraction_requests(fake: &FakeLlm) -> Vec<Value> {
    fake.chat_requests()
        .into_iter()
        .filter(|b| {
            b["messages"][0]["content"]
                .as_str()
                .is_some_and(|s| s.starts_with(EXTRACT_MARK))
        })
        .collect()
}

const AUTO: [(&str, &str); 1] = [("NAVI_MEMORY_AUTO_ACCEPT", "true")];

#[tokio::test]
async fn a_fact_the_user_edited_is_never_overwritten_by_extraction() {
    let env = Env::new();
    let fake = FakeLlm::start().await;
    env.seed(&fake, "my shell is fish").await;
    env.extract(&fake, "environment: shell = fish", &[]).await;
    let id = env.facts(&fake).await[0]["id"].as_i64().unwrap();
    let (code, out) = env
        .navi(
            &fake,
            &[],
            &["memory", "review", "--edit", &format!("{id}=zsh")],
        )
        .await;
    assert_eq!(code, 0, "{out}");
    env.seed(&fake, "I opened a bash prompt today").await;
    for extra in [&[][..], &AUTO[..]] {
        env.extract(&fake, "environment: shell = bash", extra).await;
        let facts = env.facts(&fake).await;
        assert_eq!(facts.len(), 1, "{facts:?}");
        assert_eq!(facts[0]["value"], "zsh", "{facts:?}");
        assert_eq!(facts[0]["status"], "active", "not demoted: {facts:?}");
        env.seed(&fake, "another day").await;
    }
}

#[tokio::test]
async fn a_forgotten_or_rejected_fact_does_not_come_back_from_another_session() {
    let env = Env::new();
    let fake = FakeLlm::start().await;
    // Forgotten.
    env.seed(&fake, "I use helix").await;
    env.extract(&fake, "environment: editor = helix", &AUTO)
        .await;
    let (code, out) = env.navi(&fake, &[], &["memory", "forget", "editor"]).await;
    assert_eq!(code, 0, "{out}");
    env.seed(&fake, "helix again, my favourite").await;
    env.extract(&fake, "environment: editor = Helix", &AUTO)
        .await;
    assert!(
        env.facts(&fake).await.is_empty(),
        "forgotten fact came back"
    );
    // Rejected in the inbox.
    env.seed(&fake, "I work at Acme").await;
    env.extract(&fake, "work: employer = Acme", &[]).await;
    let id = env.facts(&fake).await[0]["id"].as_i64().unwrap();
    let (code, out) = env
        .navi(
            &fake,
            &[],
            &["memory", "review", "--reject", &id.to_string()],
        )
        .await;
    assert_eq!(code, 0, "{out}");
    env.seed(&fake, "Acme is busy this week").await;
    env.extract(&fake, "work: employer = Acme", &[]).await;
    assert!(env.facts(&fake).await.is_empty(), "rejected fact came back");
    // Something new the user says after the decision is a new fact.
    env.seed(&fake, "I switched to vim").await;
    env.extract(&fake, "environment: editor = vim", &[]).await;
    let facts = env.facts(&fake).await;
    assert_eq!(facts.len(), 1, "{facts:?}");
    assert_eq!(facts[0]["value"], "vim");
    assert_eq!(facts[0]["status"], "proposed");
}

#[tokio::test]
async fn a_session_open_in_another_navi_is_not_extracted() {
    let env = Env::new();
    let fake = FakeLlm::start().await;
    env.seed(&fake, "I use helix").await;
    // Plain mode continues that session and sits at its prompt (it does not
    // extract itself: a long idle time for it).
    let mut plain = env
        .cmd(&fake, &[("NAVI_MEMORY_IDLE_MINUTES", "600")])
        .args(["--plain", "-c"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let db = env.dir.path().join("data/navi.db-locks");
    let start = Instant::now();
    while std::fs::read_dir(&db).map(|d| d.count()).unwrap_or(0) == 0 {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "plain never locked"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    fake.push(Reply::text("environment: editor = helix"));
    let (code, out) = env.navi(&fake, &[], &["memory", "extract"]).await;
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("extracted 0 session(s)"), "{out}");
    assert!(out.contains("1 session(s) busy in another navi"), "{out}");
    assert!(extraction_requests(&fake).is_empty());
    // Closed: now it is extracted.
    drop(plain.stdin.take());
    let st = tokio::time::timeout(Duration::from_secs(20), plain.wait())
        .await
        .unwrap()
        .unwrap();
    assert!(st.success());
    let (code, out) = env.navi(&fake, &[], &["memory", "extract"]).await;
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("extracted 1 session(s)"), "{out}");
    assert_eq!(extraction_requests(&fake).len(), 1);
}

#[tokio::test]
async fn navi_run_extracts_stale_sessions_in_the_background() {
    let env = Env::new();
    let fake = FakeLlm::start().await;
    // Only the session just used: nothing is due, nothing starts.
    env.seed(&fake, "I use helix as my editor").await;
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert!(extraction_requests(&fake).is_empty());
    // A second one-shot run: the first session is stale now.
    fake.push(Reply::text("hi there"));
    fake.push(Reply::text("environment: editor = helix"));
    let started = Instant::now();
    let (code, out) = env
        .navi(&fake, &[], &["run", "--profile", "tester", "hello"])
        .await;
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("hi there"), "{out}");
    // The command did not wait for the extraction.
    assert!(extraction_requests(&fake).is_empty());
    assert!(started.elapsed() < Duration::from_secs(10));
    let start = Instant::now();
    while env.facts(&fake).await.is_empty() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "no facts from the background extraction"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let facts = env.facts(&fake).await;
    assert_eq!(facts[0]["value"], "helix");
    let reqs = extraction_requests(&fake);
    assert_eq!(reqs.len(), 1);
    // Only the stale session, and with a generation cap.
    let convo = reqs[0]["messages"][1]["content"].as_str().unwrap();
    assert!(convo.contains("I use helix"), "{convo}");
    assert!(!convo.contains("hello"), "{convo}");
    let cap = reqs[0]["options"]["num_predict"].as_u64().unwrap_or(0);
    assert!(cap > 0 && cap <= 2000, "{}", reqs[0]);
}
