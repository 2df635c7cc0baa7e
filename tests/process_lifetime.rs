//! No process outlives navi (issue 33 item 6): a SIGKILLed navi — `navi run`,
//! `navi acp` over raw JSON-RPC, `navi --plain` on a pty — leaves none of
//! the processes its tools started: the shell of a `terminal` call, a
//! `sleep` under it, one it put in the background, a `code_exec` script's
//! subprocess, a stdio MCP server and what that server started. Processes
//! are found through /proc by a marker in their command line (a `sleep` of
//! an unusual length); the only timing is a generous poll deadline.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use crate::acp_support::processes_with;
use crate::plain_support::{self, Pty};
use crate::support::{FakeLlm, Reply};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long processes may take to appear, or to be gone.
const DEADLINE: Duration = Duration::from_secs(30);

/// `sleep <this>`: a length no other test uses, unique to this test process.
pub(crate) fn marker(tag: u32) -> String {
    // Fixed width: one test run's marker is never part of another's.
    format!("7{tag}.{:07}", std::process::id())
}

/// Polls until `ok` or the deadline; false when the deadline passed.
fn eventually(mut ok: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < DEADLINE {
        if ok() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    ok()
}

pub(crate) fn sigkill(pid: u32) {
    let ok = Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status()
        .unwrap();
    assert!(ok.success(), "cannot SIGKILL navi (pid {pid})");
}

/// A process other than the `sh -c` that started it holds `m` in its
/// command line.
fn started(m: &str) -> bool {
    processes_with(m)
        .iter()
        .any(|c| !c.starts_with("sh ") && !c.starts_with("bash "))
}

/// Waits until every marker is in a running process (not just in the shell
/// line naming it), then runs `kill` (which stops navi and reaps it) and
/// asserts that no process with any marker is left, nor navi's watchdog.
pub(crate) fn kill_and_check(pid: u32, markers: &[&str], kill: impl FnOnce()) {
    for m in markers {
        assert!(
            eventually(|| started(m)),
            "the tool never started `sleep {m}`; running: {:?}",
            processes_with(m)
        );
    }
    kill();
    for m in markers {
        assert!(
            eventually(|| processes_with(m).is_empty()),
            "left running after navi ended: {:?}",
            processes_with(m)
        );
    }
    // The watchdog itself is gone too (its arguments name navi's pid).
    let dog = format!("--navi-internal-watchdog {pid}");
    assert!(
        eventually(|| processes_with(&dog).is_empty()),
        "the watchdog outlived its work: {:?}",
        processes_with(&dog)
    );
}

/// A temp home: profile `tester` with `tools`, `config.toml`, a workspace.
struct Home {
    dir: tempfile::TempDir,
}

impl Home {
    fn new(tools: &[&str], config: &str) -> Home {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("cfg/profiles/tester");
        std::fs::create_dir_all(&p).unwrap();
        let cfg = json!({
            "id": "tester", "name": "Tester", "description": "test profile",
            "model": ["test-model"], "enabled_tools": tools,
            "planning_phase1_enabled": false, "planning_phase3_enabled": false,
            "iteration_budget_enabled": false, "goal_anchoring_enabled": false
        });
        std::fs::write(p.join("config.json"), cfg.to_string()).unwrap();
        std::fs::write(p.join("system_prompt.txt"), "TESTER").unwrap();
        std::fs::write(dir.path().join("cfg/config.toml"), config).unwrap();
        std::fs::create_dir_all(dir.path().join("work")).unwrap();
        Home { dir }
    }

    fn work(&self) -> PathBuf {
        std::fs::canonicalize(self.dir.path().join("work")).unwrap()
    }

    fn navi(&self, fake: &FakeLlm, args: &[&str]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_navi"));
        c.env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", self.dir.path())
            .env("NAVI_DATA_DIR", self.dir.path().join("data"))
            .env("NAVI_CONFIG_DIR", self.dir.path().join("cfg"))
            .env("OLLAMA_HOST", fake.ollama_url())
            .env("LLM_STREAM_FIRST_CHUNK_TIMEOUT", "20")
            .current_dir(self.work())
            .args(["--backend", "ollama"])
            .args(args);
        c
    }
}

/// An MCP server entry: `sh` that leaves `sleep <bg>` running in the
/// background and becomes the test MCP server (`fg` an extra argument it
/// ignores, to find it by).
fn mcp_entry(fg: &str, bg: &str) -> String {
    let server = crate::mcp_support::test_server();
    let line = format!("sleep {bg} & exec python3 {} normal {fg}", server.display());
    format!("[mcp_servers.helper]\ncommand = \"sh\"\nargs = [\"-c\", {line:?}]\n")
}

fn spawn_run(home: &Home, fake: &FakeLlm) -> std::process::Child {
    home.navi(fake, &["run", "--approve-all", "--profile", "tester", "go"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(home.dir.path().join("stderr")).unwrap())
        .spawn()
        .unwrap()
}

/// `navi run`: a terminal command in the foreground and one it put in the
/// background both die with navi.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkilled_navi_run_leaves_no_terminal_process() {
    let fake = FakeLlm::start().await;
    let (fg, bg) = (marker(1), marker(2));
    fake.push(Reply::tool_call(
        "terminal",
        json!({"command": format!("sleep {bg} & sleep {fg}; echo done")}),
    ));
    let home = Home::new(&["terminal"], "");
    let mut child = spawn_run(&home, &fake);
    let pid = child.id();
    kill_and_check(pid, &[&fg, &bg], move || {
        sigkill(pid);
        let _ = child.wait();
    });
}

/// `navi run`: a `code_exec` script and the subprocess it started die with
/// navi, and so does a stdio MCP server with what it started.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkilled_navi_run_leaves_no_code_exec_or_mcp_process() {
    let fake = FakeLlm::start().await;
    let (script, mcp_fg, mcp_bg) = (marker(3), marker(4), marker(5));
    let code = format!(
        "import subprocess, time\nsubprocess.Popen(['sleep', '{script}'])\ntime.sleep(600)\n"
    );
    fake.push(Reply::tool_call("code_exec", json!({"code": code})));
    let home = Home::new(&["code_exec"], &mcp_entry(&mcp_fg, &mcp_bg));
    let mut child = spawn_run(&home, &fake);
    let pid = child.id();
    kill_and_check(pid, &[&script, &mcp_fg, &mcp_bg], move || {
        sigkill(pid);
        let _ = child.wait();
    });
}

/// `navi acp` driven with raw JSON-RPC lines, the permission request
/// answered "allow once": the editor SIGKILLs navi mid-command.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkilled_navi_acp_leaves_no_process() {
    let fake = FakeLlm::start().await;
    let (fg, bg) = (marker(6), marker(7));
    fake.push(Reply::tool_call(
        "terminal",
        json!({"command": format!("sleep {bg} & sleep {fg}; echo done")}),
    ));
    let home = Home::new(&["terminal"], "");
    let mut child = home
        .navi(&fake, &["acp"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut send = |v: Value| {
        writeln!(stdin, "{v}").unwrap();
        stdin.flush().unwrap();
    };
    let mut next = move || -> Value {
        let line = lines.next().expect("navi acp closed stdout").unwrap();
        serde_json::from_str(&line).unwrap()
    };
    send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": 1, "clientCapabilities": {}}}),
    );
    while next()["id"] != 1 {}
    let cwd = home.work();
    send(
        json!({"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {
        "cwd": cwd, "mcpServers": []}}),
    );
    let session = loop {
        let v = next();
        if v["id"] == 2 {
            break v["result"]["sessionId"].as_str().unwrap().to_string();
        }
    };
    send(
        json!({"jsonrpc": "2.0", "id": 3, "method": "session/set_mode", "params": {
        "sessionId": session, "modeId": "tester"}}),
    );
    loop {
        let v = next();
        if v["id"] == 3 {
            assert!(v.get("error").is_none(), "{v}");
            break;
        }
    }
    send(
        json!({"jsonrpc": "2.0", "id": 4, "method": "session/prompt", "params": {
        "sessionId": session, "prompt": [{"type": "text", "text": "go"}]}}),
    );
    loop {
        let v = next();
        if v["method"] == "session/request_permission" {
            send(json!({"jsonrpc": "2.0", "id": v["id"], "result": {
                "outcome": {"outcome": "selected", "optionId": "allow_once"}}}));
            break;
        }
        assert!(v["id"] != 4, "the prompt ended without asking: {v}");
    }
    kill_and_check(pid, &[&fg, &bg], move || {
        sigkill(pid);
        let _ = child.wait();
    });
}

/// `navi --plain` on a pty, the command approved with "y", then SIGKILL.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkilled_plain_navi_leaves_no_process() {
    let fake = FakeLlm::start().await;
    let (fg, bg) = (marker(8), marker(9));
    fake.push(Reply::tool_call(
        "terminal",
        json!({"command": format!("sleep {bg} & sleep {fg}; echo done")}),
    ));
    let home = plain_support::Home::new(&fake.ollama_url());
    let mut pty = Pty::spawn(home.command("xterm-256color", &[("NO_COLOR", "1")]));
    pty.wait_prompt();
    pty.send("sleep a while\r");
    pty.wait_for("[y]es/[s]ession/[N]o");
    pty.send("y\r");
    let pid = u32::try_from(pty.pid()).unwrap();
    kill_and_check(pid, &[&fg, &bg], || pty.kill9());
}

/// The ordinary ways out stop the tools too: `navi run` gets `signal`
/// mid-command, exits with `code`, and neither the command (foreground and
/// background) nor the MCP server and its background job is left.
async fn a_signal_mid_command_leaves_nothing(signal: &str, code: i32, tag: u32) {
    let fake = FakeLlm::start().await;
    let (fg, bg, mcp_fg, mcp_bg) = (
        marker(tag),
        marker(tag + 1),
        marker(tag + 2),
        marker(tag + 3),
    );
    fake.push(Reply::tool_call(
        "terminal",
        json!({"command": format!("sleep {bg} & sleep {fg}; echo done")}),
    ));
    let home = Home::new(&["terminal"], &mcp_entry(&mcp_fg, &mcp_bg));
    let mut child = spawn_run(&home, &fake);
    let pid = child.id();
    let markers = [fg.as_str(), bg.as_str(), mcp_fg.as_str(), mcp_bg.as_str()];
    let status = tokio::task::block_in_place(|| {
        let mut status = None;
        kill_and_check(pid, &markers, || {
            let ok = Command::new("kill")
                .args([&format!("-{signal}"), &pid.to_string()])
                .status()
                .unwrap();
            assert!(ok.success());
            status = Some(child.wait().unwrap());
        });
        status.unwrap()
    });
    let stderr = std::fs::read_to_string(home.dir.path().join("stderr")).unwrap_or_default();
    assert_eq!(status.code(), Some(code), "{status:?}\n{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_mid_command_exits_143_and_leaves_nothing() {
    a_signal_mid_command_leaves_nothing("TERM", 143, 20).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sighup_mid_command_exits_129_and_leaves_nothing() {
    a_signal_mid_command_leaves_nothing("HUP", 129, 30).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigint_mid_command_exits_130_and_leaves_nothing() {
    a_signal_mid_command_leaves_nothing("INT", 130, 40).await;
}
