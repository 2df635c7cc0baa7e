//! One writer per session, and stop signals, with real `navi run` processes
//! on one database against the fake LLM server: a second navi on a busy
//! session is refused (naming the holder's pid) or waits; a `kill -9`'d
//! holder's lock dies with it and its unpaired call is repaired by the next
//! opener only; SIGTERM / SIGHUP stop the turn, kill the tool's process group
//! and exit 143 / 129 with the session saved.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use crate::support;

use serde_json::{Value, json};
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;
use support::{FakeLlm, Reply};
use tokio::io::{AsyncBufReadExt, BufReader, Lines};
use tokio::process::{Child, ChildStdout, Command};

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
            "model": ["test-model"], "temperature": 0.2,
            "enabled_tools": ["terminal"],
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

    fn cmd(&self, fake: &FakeLlm) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_navi"));
        c.env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", self.dir.path())
            .env("NAVI_DATA_DIR", self.data())
            .env("NAVI_CONFIG_DIR", self.dir.path().join("cfg"))
            .env("OLLAMA_HOST", fake.ollama_url())
            .env("LLM_STREAM_FIRST_CHUNK_TIMEOUT", "20")
            .current_dir(self.dir.path())
            .args(["--backend", "ollama"])
            .stdin(Stdio::null())
            .kill_on_drop(true);
        c
    }

    /// `navi run --json … MESSAGE` in the background, stdout piped.
    fn spawn(&self, fake: &FakeLlm, args: &[&str]) -> (Child, Lines<BufReader<ChildStdout>>) {
        let mut child = self
            .cmd(fake)
            .arg("run")
            .arg("--json")
            .args(["--profile", "tester", "--approve", "terminal"])
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        (child, lines)
    }
}

/// Reads JSON events until one of type `ty` arrives.
async fn wait_event(lines: &mut Lines<BufReader<ChildStdout>>, ty: &str) -> Value {
    loop {
        let line = tokio::time::timeout(Duration::from_secs(20), lines.next_line())
            .await
            .unwrap_or_else(|_| panic!("no {ty} event"))
            .unwrap()
            .unwrap_or_else(|| panic!("navi ended before {ty}"));
        let ev: Value = serde_json::from_str(&line).unwrap();
        if ev["type"] == ty {
            return ev;
        }
    }
}

fn session_json(env: &Env) -> Value {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_navi"))
        .env("NAVI_DATA_DIR", env.data())
        .env("NAVI_CONFIG_DIR", env.data().join("nocfg"))
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

/// Every tool call in `msgs` (display rows or request messages) is followed
/// by exactly one result for its id, before the next assistant message; no
/// result without a call. Returns the call ids in order.
fn check_pairing(msgs: &[Value]) -> Vec<String> {
    let mut ids = Vec::new();
    let mut open: Vec<String> = Vec::new();
    for m in msgs {
        let role = m["role"].as_str().unwrap_or("");
        if role == "assistant" {
            assert!(open.is_empty(), "calls {open:?} unanswered before {m}");
            if let Some(calls) = m["tool_calls"].as_array() {
                for c in calls {
                    let id = c["id"].as_str().unwrap().to_string();
                    assert!(!ids.contains(&id), "call id {id} used twice");
                    ids.push(id.clone());
                    open.push(id);
                }
            }
        }
        if role == "tool" {
            let id = m["tool_call_id"].as_str().unwrap_or("");
            let pos = open.iter().position(|o| o == id);
            assert!(pos.is_some(), "result for {id} has no open call: {msgs:#?}");
            open.remove(pos.unwrap());
        }
    }
    assert!(open.is_empty(), "calls {open:?} never answered");
    ids
}

fn tool_results(msgs: &[Value]) -> Vec<String> {
    msgs.iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or("").to_string())
        .collect()
}

#[tokio::test]
async fn second_navi_on_a_busy_session_is_refused_or_waits_and_history_stays_paired() {
    let env = Env::new();
    let fake = FakeLlm::start().await;
    let marker = env.dir.path().join("a-may-finish");
    // A: a tool that runs until the test lets it finish.
    fake.push(Reply::tool_call(
        "terminal",
        json!({"command": format!("while [ ! -e {} ]; do sleep 0.05; done; echo A-done", marker.display())}),
    ));
    fake.push(Reply::text("A finished"));
    // B (after A): a tool of its own.
    fake.push(Reply::tool_call(
        "terminal",
        json!({"command": "echo B-done"}),
    ));
    fake.push(Reply::text("B finished"));

    let (mut a, mut a_lines) = env.spawn(&fake, &["first"]);
    wait_event(&mut a_lines, "tool_started").await;
    let a_pid = a.id().unwrap();

    // A second writer is refused with the holder's pid; nothing is written.
    let out = env
        .cmd(&fake)
        .args(["run", "--profile", "tester", "--approve", "terminal"])
        .args(["--continue", "second"])
        .output()
        .await
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!("is busy in another navi (pid {a_pid})")),
        "{err}"
    );
    // Reading the session meanwhile never "repairs" A's running call.
    let s = session_json(&env);
    let msgs = s["messages"].as_array().unwrap();
    assert_eq!(msgs.last().unwrap()["role"], "assistant", "{msgs:#?}");
    assert!(tool_results(msgs).is_empty(), "{msgs:#?}");
    assert!(!msgs.iter().any(|m| m["content"] == "second"));

    // With --wait, B waits for A, then runs on the whole history.
    let (mut b, mut b_lines) = env.spawn(&fake, &["--continue", "--wait", "second"]);
    let mut b_err = BufReader::new(b.stderr.take().unwrap()).lines();
    let line = tokio::time::timeout(Duration::from_secs(20), b_err.next_line())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert!(
        line.contains(&format!("(pid {a_pid})")) && line.contains("waiting"),
        "{line}"
    );
    assert_eq!(
        fake.chat_requests().len(),
        1,
        "B must not call the model yet"
    );
    std::fs::write(&marker, "").unwrap();
    assert_eq!(a.wait().await.unwrap().code(), Some(0));
    wait_event(&mut b_lines, "stream_end").await;
    assert_eq!(b.wait().await.unwrap().code(), Some(0));

    let s = session_json(&env);
    let msgs = s["messages"].as_array().unwrap();
    let ids = check_pairing(msgs);
    assert_eq!(ids.len(), 2);
    let results = tool_results(msgs);
    assert!(
        results[0].contains("A-done") && results[1].contains("B-done"),
        "{results:?}"
    );
    assert!(
        !results.iter().any(|r| r.contains("interrupted")),
        "{results:?}"
    );
    let users: Vec<&str> = msgs
        .iter()
        .filter(|m| m["role"] == "user")
        .filter_map(|m| m["content"].as_str())
        .collect();
    assert_eq!(users, ["first", "second"]);
    // The model saw the same valid history.
    let last = fake.chat_requests().pop().unwrap();
    let sent = last["messages"].as_array().unwrap();
    assert_eq!(check_pairing(sent).len(), 2, "{sent:#?}");
}

fn group_members(pgid: u32) -> Vec<u32> {
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let Some((_, rest)) = stat.rsplit_once(')') else {
            continue;
        };
        let f: Vec<&str> = rest.split_whitespace().collect();
        // f[0] = state, f[2] = pgrp
        if f.len() > 2 && f[0] != "Z" && f[2] == pgid.to_string() {
            found.push(pid);
        }
    }
    found
}

async fn wait_gone(pgid: u32) -> Vec<u32> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    loop {
        let left = group_members(pgid);
        if left.is_empty() || tokio::time::Instant::now() > deadline {
            return left;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Starts a turn whose tool records its process group id and sleeps.
async fn start_sleeping_tool(
    env: &Env,
    fake: &FakeLlm,
    args: &[&str],
) -> (Child, Lines<BufReader<ChildStdout>>, u32) {
    let pg = env.dir.path().join("pgid");
    let _ = std::fs::remove_file(&pg);
    fake.push(Reply::tool_call(
        "terminal",
        json!({"command": format!("echo $$ > {}; sleep 30; echo late", pg.display())}),
    ));
    let (child, mut lines) = env.spawn(fake, args);
    wait_event(&mut lines, "tool_started").await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    let pgid = loop {
        if let Ok(t) = std::fs::read_to_string(&pg)
            && let Ok(n) = t.trim().parse::<u32>()
        {
            break n;
        }
        assert!(tokio::time::Instant::now() < deadline, "tool never started");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    // The sleep is running in the group.
    while group_members(pgid).len() < 2 {
        assert!(tokio::time::Instant::now() < deadline, "no sleep in group");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    (child, lines, pgid)
}

async fn signal_stops_turn_kills_group_and_saves(sig: &str, code: i32) {
    let env = Env::new();
    let fake = FakeLlm::start().await;
    let (mut child, _lines, pgid) = start_sleeping_tool(&env, &fake, &["sleep please"]).await;
    std::process::Command::new("kill")
        .args([sig, &child.id().unwrap().to_string()])
        .status()
        .unwrap();
    let status = tokio::time::timeout(Duration::from_secs(10), child.wait())
        .await
        .expect("navi exits promptly")
        .unwrap();
    assert_eq!(status.code(), Some(code));
    assert_eq!(
        wait_gone(pgid).await,
        Vec::<u32>::new(),
        "tool group left running"
    );
    let s = session_json(&env);
    let msgs = s["messages"].as_array().unwrap();
    check_pairing(msgs);
    let results = tool_results(msgs);
    assert_eq!(results.len(), 1, "{msgs:#?}");
    assert!(results[0].contains("cancelled"), "{results:?}");
    // The lock died with the process: the session opens again at once.
    fake.push(Reply::text("back"));
    let out = env
        .cmd(&fake)
        .args(["run", "--continue", "again"])
        .output()
        .await
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[tokio::test]
async fn sigterm_stops_the_turn_kills_the_tool_group_and_exits_143() {
    signal_stops_turn_kills_group_and_saves("-TERM", 143).await;
}

#[tokio::test]
async fn sighup_stops_the_turn_kills_the_tool_group_and_exits_129() {
    signal_stops_turn_kills_group_and_saves("-HUP", 129).await;
}

fn is_alive(pid: u32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    !stat
        .rsplit_once(')')
        .is_some_and(|(_, r)| r.trim_start().starts_with('Z'))
}

#[tokio::test]
async fn kill_9_releases_the_lock_and_the_next_opener_repairs_the_call() {
    let env = Env::new();
    let fake = FakeLlm::start().await;
    let (mut child, _lines, pgid) = start_sleeping_tool(&env, &fake, &["sleep please"]).await;
    std::process::Command::new("kill")
        .args(["-9", &child.id().unwrap().to_string()])
        .status()
        .unwrap();
    let _ = child.wait().await;
    // PR_SET_PDEATHSIG: the tool's shell (the group leader) dies with navi.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while is_alive(pgid) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "tool shell outlived navi"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // Nobody holds the session: reading it shows the call still unanswered
    // (only a writer repairs)…
    let s = session_json(&env);
    assert!(tool_results(s["messages"].as_array().unwrap()).is_empty());
    // …and the next writer gets the lock at once and repairs it.
    fake.push(Reply::text("recovered"));
    let out = env
        .cmd(&fake)
        .args(["run", "--continue", "after the crash"])
        .output()
        .await
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let s = session_json(&env);
    let msgs = s["messages"].as_array().unwrap();
    assert_eq!(check_pairing(msgs).len(), 1);
    let results = tool_results(msgs);
    assert_eq!(results.len(), 1);
    assert!(results[0].contains("interrupted"), "{results:?}");
    let sent = fake.chat_requests().pop().unwrap();
    check_pairing(sent["messages"].as_array().unwrap());
    // The orphaned `sleep` (a grandchild: the parent-death signal reaches
    // only the direct child) is the test's to clean up. Each member is killed
    // by its own (positive) pid: a negative pid handed to kill(1) without
    // `--` is misread by procps-ng as "every process".
    for pid in group_members(pgid) {
        let _ = std::process::Command::new("kill")
            .args(["-9", "--", &pid.to_string()])
            .status();
    }
}
