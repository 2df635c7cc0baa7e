//! MCP servers in daily use (issue 26): processes that outlive navi
//! (item 2), a restart after a cancel (item 8), tools navi cannot call and a
//! server that is down (item 9).
use super::terminal::gone_within;
use crate::mcp_support::env::{Env, test_server_entry, tool_results};
use crate::mcp_support::test_server;
use crate::plain_support::{Home, Pty};
use crate::support::{FakeLlm, Reply};
use serde_json::json;
use std::path::Path;
use std::time::{Duration, Instant};

fn pids(file: &Path) -> Vec<u32> {
    std::fs::read_to_string(file)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect()
}

fn wait_pids(file: &Path, n: usize) -> Vec<u32> {
    let start = Instant::now();
    loop {
        let p = pids(file);
        if p.len() >= n {
            return p;
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "{n} pid(s) never written"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A stdio server whose start-up fails (no handshake in time) is killed
/// with what it started; a working server's children end with navi too.
#[tokio::test]
async fn children_of_mcp_servers_end_with_navi() {
    let dir = tempfile::tempdir().unwrap();
    let bg = dir.path().join("bg.pid");
    // `sh` that never answers, with a `sleep` in its process group.
    let config = format!(
        "[mcp_servers.stuck]\ncommand = \"sh\"\nargs = [\"-c\", \"sleep 60 & echo $! >> {}; echo starting >&2; wait\"]\nstartup_timeout_secs = 1\nwritable = [{:?}]\n",
        bg.display(),
        dir.path().display().to_string()
    );
    let env = Env::new(&config, &[]);
    let (code, out, err) = env.navi(None, &["mcp", "check"]).await;
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("stuck: failed"), "{out}");
    let sleep = wait_pids(&bg, 1)[0];
    gone_within(sleep, Duration::from_secs(3), "the failed server's child");

    // A server that works and starts a background child: `navi run` ends
    // both when it is done.
    let _ = std::fs::remove_file(&bg);
    let config = format!(
        "[mcp_servers.t]\ncommand = \"sh\"\nargs = [\"-c\", \"sleep 60 & echo $! >> {}; exec python3 {} normal\"]\nwritable = [{:?}]\n",
        bg.display(),
        test_server().display(),
        dir.path().display().to_string()
    );
    let env = Env::new(&config, &["t__*"]);
    let fake = FakeLlm::start().await;
    fake.push(Reply::tool_call("t__echo", json!({"text": "hi"})));
    fake.push(Reply::text("done"));
    let (code, _, err) = env.run(&fake, &["--approve-all"]).await;
    assert_eq!(code, 0, "{err}");
    assert_eq!(tool_results(&fake, 1), vec!["echo: hi".to_string()]);
    let sleep = wait_pids(&bg, 1)[0];
    gone_within(
        sleep,
        Duration::from_secs(3),
        "the server's background child",
    );
}

/// Ctrl-C during a call, then the server dies: the next call restarts it
/// at once (a cancel is not a failure, so no back-off), even after an
/// earlier crash.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_dies_after_a_cancelled_call_is_restarted_on_the_next_call() {
    let fake = FakeLlm::start().await;
    let home = Home::new(&fake.ollama_url());
    let cfg = home.dir.path().join("cfg");
    let p = cfg.join("profiles/tester/config.json");
    let mut prof: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
    prof["enabled_tools"] = json!(["t__*"]);
    std::fs::write(&p, prof.to_string()).unwrap();
    // The server writes its pid and log in the test's directory.
    let writable = format!("writable = [{:?}]", home.dir.path().display().to_string());
    std::fs::write(
        cfg.join("config.toml"),
        test_server_entry("t", "normal", &writable),
    )
    .unwrap();
    let pidfile = home.dir.path().join("server.pids");
    let log = home.dir.path().join("server.log");
    fake.push(Reply::tool_call("t__crash", json!({})));
    fake.push(Reply::text("it crashed"));
    fake.push(Reply::tool_call("t__slow", json!({})));
    fake.push(Reply::tool_call("t__echo", json!({"text": "back again"})));
    fake.push(Reply::text("all good"));
    let pidfile_s = pidfile.display().to_string();
    let log_s = log.display().to_string();
    let mut pty = Pty::spawn(home.command(
        "xterm-256color",
        &[
            ("NO_COLOR", "1"),
            ("MCP_TEST_PIDFILE", &pidfile_s),
            ("MCP_TEST_LOG", &log_s),
        ],
    ));
    pty.wait_prompt();
    wait_pids(&pidfile, 1);
    pty.send("crash it\r");
    pty.wait_for("[y]es/[s]ession/[N]o");
    pty.send("y\r");
    pty.wait_for("it crashed");
    pty.wait_prompt();
    pty.send("be slow\r");
    pty.wait_for("[y]es/[s]ession/[N]o");
    pty.send("y\r");
    // The restarted server has the slow call: stop the turn with Ctrl-C.
    let start = Instant::now();
    while std::fs::read_to_string(&log)
        .unwrap_or_default()
        .matches("\"slow\"")
        .count()
        == 0
    {
        assert!(start.elapsed() < Duration::from_secs(20), "no slow call");
        std::thread::sleep(Duration::from_millis(50));
    }
    pty.send("\x03");
    pty.wait_for("stopped");
    pty.wait_prompt();
    // Then the server dies on its own.
    let second = wait_pids(&pidfile, 2)[1];
    std::process::Command::new("kill")
        .args(["-KILL", &second.to_string()])
        .status()
        .unwrap();
    gone_within(second, Duration::from_secs(5), "the killed server");
    pty.send("echo please\r");
    pty.wait_for("[y]es/[s]ession/[N]o");
    pty.send("y\r");
    pty.wait_for("all good");
    pty.wait_prompt();
    let reqs = fake.chat_requests();
    let last = reqs.last().unwrap();
    let results: Vec<String> = last["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or("").to_string())
        .collect();
    assert_eq!(
        results.last().map(String::as_str),
        Some("echo: back again"),
        "{results:?}"
    );
    pty.send("/quit\r");
    assert_eq!(pty.exit_code(), 0);
    for pid in pids(&pidfile) {
        gone_within(pid, Duration::from_secs(3), "an MCP server after /quit");
    }
}

/// A tool that must run as an MCP task is not offered to the model; it is
/// skipped with a warning naming it, as a tool with a bad schema is.
#[tokio::test]
async fn tools_that_need_mcp_tasks_are_skipped_with_a_warning() {
    let env = Env::new(&test_server_entry("t", "normal", ""), &["t__*"]);
    let (code, out, err) = env.navi(None, &["mcp", "tools", "t", "--json"]).await;
    assert_eq!(code, 0, "{err}");
    let tools: serde_json::Value = serde_json::from_str(&out).unwrap();
    let skipped = tools[0]["skipped"].to_string();
    assert!(skipped.contains("needs_task: needs MCP tasks"), "{skipped}");
    let fake = FakeLlm::start().await;
    fake.push(Reply::text("ok"));
    let (code, events, err) = env.run(&fake, &[]).await;
    assert_eq!(code, 0, "{err}");
    // Offered in full or named in `load_tools` (tools on demand): echo is
    // there, the task-only and broken tools nowhere.
    let tools = fake.chat_requests()[0]["tools"].to_string();
    assert!(tools.contains("echo"), "{tools}");
    assert!(
        !tools.contains("needs_task") && !tools.contains("broken"),
        "{tools}"
    );
    let task_warning = |events: &[serde_json::Value]| {
        warnings(events)
            .iter()
            .any(|w| w.contains("'t'") && w.contains("needs_task") && w.contains("skipped"))
    };
    assert!(task_warning(&events), "{events:?}");
    // The user can do nothing about it: once per server version, not on
    // every run.
    fake.push(Reply::text("ok"));
    let (code, events, err) = env.run(&fake, &[]).await;
    assert_eq!(code, 0, "{err}");
    assert!(!task_warning(&events), "shown again: {events:?}");
    let config = test_server_entry("t", "normal", "env = { MCP_TEST_VERSION = \"2.0\" }");
    std::fs::write(env.path("cfg/config.toml"), config).unwrap();
    fake.push(Reply::text("ok"));
    let (code, events, err) = env.run(&fake, &[]).await;
    assert_eq!(code, 0, "{err}");
    assert!(task_warning(&events), "a new version: {events:?}");
}

/// An HTTP server that is down: "connection refused" and which server,
/// not the transport's raw error.
#[tokio::test]
async fn an_http_server_that_is_down_says_connection_refused_and_which() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let config = format!("[mcp_servers.web]\nurl = \"http://127.0.0.1:{port}/mcp\"\n");
    let env = Env::new(&config, &["web__*"]);
    let (code, out, _) = env.navi(None, &["mcp", "check"]).await;
    assert_eq!(code, 1);
    let line = out.lines().find(|l| l.starts_with("web:")).unwrap_or("");
    assert!(line.contains("connection refused"), "{out}");
    assert!(line.contains(&format!("127.0.0.1:{port}")), "{out}");
    assert!(!line.contains("Transport"), "raw transport error: {out}");
    let fake = FakeLlm::start().await;
    fake.push(Reply::text("ok"));
    let (code, events, err) = env.run(&fake, &[]).await;
    assert_eq!(code, 0, "{err}");
    assert!(
        warnings(&events)
            .iter()
            .any(|w| w.contains("MCP server 'web'") && w.contains("connection refused")),
        "{events:?}"
    );
}

fn warnings(events: &[serde_json::Value]) -> Vec<String> {
    events
        .iter()
        .filter(|e| e["type"] == "warning")
        .map(|e| e["message"].as_str().unwrap_or("").to_string())
        .collect()
}

/// A long MCP call reports progress: the request carries a progress token,
/// each `notifications/progress` becomes a `tool_progress` event (JSON) and
/// a progress line (`navi run` without --json, as in plain mode).
#[tokio::test]
async fn a_long_call_reports_progress_as_events_and_lines() {
    let env = Env::new(&test_server_entry("t", "normal", ""), &["t__progress"]);
    let fake = FakeLlm::start().await;
    fake.push(Reply::tool_call("t__progress", json!({})));
    fake.push(Reply::text("done"));
    let (code, events, err) = env.run(&fake, &["--approve-all"]).await;
    assert_eq!(code, 0, "{err}");
    let r = tool_results(&fake, 1);
    assert!(
        r[0].starts_with("progress done (token ") && !r[0].contains("null"),
        "no progress token sent: {r:?}"
    );
    let started = events.iter().find(|e| e["type"] == "tool_started").unwrap();
    let progress: Vec<&serde_json::Value> = events
        .iter()
        .filter(|e| e["type"] == "tool_progress")
        .collect();
    // (The last one may arrive with the answer, after the call ended.)
    assert!(progress.len() >= 2, "{events:?}");
    for (i, p) in progress.iter().enumerate() {
        assert_eq!(p["id"], started["id"]);
        assert_eq!(p["tool"], "t__progress");
        assert_eq!(p["progress"], json!((i + 1) as f64));
        assert_eq!(p["total"], json!(3.0));
        assert_eq!(p["message"], format!("step {} of 3", i + 1));
        assert!(p["elapsed_ms"].as_u64().unwrap() >= 300);
    }
    // Each comes before the call's end.
    let pos = |t: &str| events.iter().position(|e| e["type"] == t).unwrap();
    assert!(pos("tool_progress") < pos("tool_call"));

    // Without --json: one progress line each, on stderr.
    let fake = FakeLlm::start().await;
    fake.push(Reply::tool_call("t__progress", json!({})));
    fake.push(Reply::text("done"));
    let (code, _, err) = env
        .navi(
            Some(&fake),
            &["run", "--profile", "tester", "--approve-all", "go"],
        )
        .await;
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("… t__progress: step 1 of 3 · 1/3 (33%) · 0s"),
        "{err}"
    );
}

/// The TUI tool card shows the reported progress while the call runs, and
/// drops it when the call ends.
#[test]
fn the_tui_tool_card_shows_progress_while_running() {
    use crate::tui_support::{ev, feed, screen, state};
    let mut st = state();
    st.begin_turn("go");
    feed(
        &mut st,
        vec![
            json!({"type": "stream_start", "session_id": "0123456789abcdef"}),
            json!({"type": "tool_started", "id": "c1", "tool": "t__progress", "args": {}, "is_subagent": false}),
        ],
    );
    st.apply(&ev(
        json!({"type": "tool_progress", "id": "c1", "tool": "t__progress",
        "elapsed_ms": 2400, "progress": 2.0, "total": 3.0, "message": "step 2 of 3"}),
    ));
    let s = screen(&mut st, 100, 12);
    assert!(s.contains("t__progress · step 2 of 3 · 2/3 (67%)"), "{s}");
    feed(
        &mut st,
        vec![
            json!({"type": "tool_call", "id": "c1", "tool": "t__progress", "args": {},
                   "result": "progress done", "success": true, "is_subagent": false}),
        ],
    );
    let s = screen(&mut st, 100, 12);
    assert!(!s.contains("step 2 of 3"), "{s}");
}
