//! The TUI SIGKILLed during a tool (issue 33 item 6): the command's shell,
//! its `sleep` and the one it put in the background are gone after, and so
//! is the watchdog (the other front ends: tests/process_lifetime.rs).
use super::*;
use crate::process_lifetime::{kill_and_check, marker, sigkill};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkilled_tui_leaves_no_tool_process() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("cfg");
    write_profile_with(&cfg, &["terminal"]);
    let fake = FakeLlm::start().await;
    let (fg, bg) = (marker(10), marker(11));
    let pidfile = dir.path().join("shell-pid");
    fake.push(Reply::tool_call(
        "terminal",
        json!({"command": format!(
            "echo $$ > {}; sleep {bg} & sleep {fg}; echo done",
            pidfile.display()
        )}),
    ));
    let command = format!(
        "cd {home} && env HOME={home} NAVI_DATA_DIR={home}/data NAVI_CONFIG_DIR={cfg} OLLAMA_HOST={url} \
         LLM_STREAM_FIRST_CHUNK_TIMEOUT=20 {bin} --profile tester; echo NAVI-EXIT:$?; sleep 60",
        home = dir.path().display(),
        cfg = cfg.display(),
        url = fake.ollama_url(),
        bin = env!("CARGO_BIN_EXE_navi"),
    );
    let t = Tmux::start(&command);
    t.wait_text("new session with profile tester").await;
    t.type_line("sleep for me");
    t.wait_text("Approval needed").await;
    t.keys(&["y"]);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    let shell: u32 = loop {
        if let Some(n) = std::fs::read_to_string(&pidfile)
            .ok()
            .and_then(|t| t.trim().parse().ok())
        {
            break n;
        }
        assert!(tokio::time::Instant::now() < deadline, "tool never started");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    // The shell's parent is navi.
    let stat = std::fs::read_to_string(format!("/proc/{shell}/stat")).unwrap();
    let navi: u32 = stat
        .rsplit_once(')')
        .unwrap()
        .1
        .split_whitespace()
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let markers = [fg.as_str(), bg.as_str()];
    tokio::task::block_in_place(|| kill_and_check(navi, &markers, || sigkill(navi)));
    t.wait_text("NAVI-EXIT:137").await;
}
