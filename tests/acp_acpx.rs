//! A real ACP client end to end: acpx (npm, a headless ACP client; the
//! version pinned in tests/acp/sdk.env, installed by tests/setup.sh into
//! target/acpx) runs `navi acp` against the fake LLM server: a prompt whose
//! edit it shows as a diff against the file's old text, then the session
//! listed for its directory only. Skips when acpx cannot be installed.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use crate::acp_support::Home;
use crate::support::{FakeLlm, Reply};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

static INSTALL: Mutex<()> = Mutex::new(());

fn pinned() -> String {
    include_str!("acp/sdk.env")
        .lines()
        .find_map(|l| l.strip_prefix("ACPX_PKG="))
        .unwrap_or_default()
        .trim()
        .to_string()
}

/// acpx, installed on first use like the SDK client; `Err` says why not.
fn acpx() -> Result<PathBuf, String> {
    let _guard = INSTALL.lock().unwrap_or_else(|p| p.into_inner());
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/acpx");
    let bin = dir.join("node_modules/.bin/acpx");
    if !bin.exists() {
        let out = Command::new("npm")
            .args(["install", "--no-audit", "--no-fund", "--prefix"])
            .arg(&dir)
            .arg(pinned())
            .output()
            .map_err(|e| format!("npm: cannot run: {e}"))?;
        if !out.status.success() || !bin.exists() {
            return Err(format!(
                "npm install {} failed: {}",
                pinned(),
                String::from_utf8_lossy(&out.stderr)
                    .lines()
                    .rev()
                    .take(3)
                    .collect::<Vec<_>>()
                    .join(" | ")
            ));
        }
    }
    Ok(bin)
}

/// acpx's JSON lines (the ACP messages it saw) and how it ended.
fn run(home: &Home, acpx: &Path, args: &[&str]) -> (Vec<Value>, String, Option<i32>) {
    let agent = format!("{} --backend ollama acp", env!("CARGO_BIN_EXE_navi"));
    let out = home
        .command(acpx)
        .args(["--agent", &agent, "--format", "json", "--timeout", "60"])
        .args(args)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let lines = stdout
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let all = format!("{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    (lines, all, out.status.code())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acpx_runs_navi_an_edit_is_a_one_line_diff_and_the_session_is_listed() {
    let acpx = match acpx() {
        Ok(b) => b,
        Err(e) => {
            println!("SKIP acpx_runs_navi: acpx is not available: {e}");
            return;
        }
    };
    let fake = FakeLlm::start().await;
    fake.push(Reply::tool_call(
        "filesystem",
        json!({"action": "write", "path": "a.txt", "content": "one\nTWO\nthree\n"}),
    ));
    fake.push(Reply::text("Changed line two."));
    let home = Home::new(&fake);
    let work = home.work();
    std::fs::write(work.join("a.txt"), "one\ntwo\nthree\n").unwrap();
    let other = home.path("other");
    std::fs::create_dir_all(&other).unwrap();
    let (w, o) = (
        work.to_string_lossy().into_owned(),
        other.to_string_lossy().into_owned(),
    );
    let t = tokio::task::spawn_blocking(move || {
        let (msgs, all, code) = run(
            &home,
            &acpx,
            &[
                "--approve-all",
                "--cwd",
                &w,
                "exec",
                "--config-option",
                "mode=tester",
                "edit a.txt",
            ],
        );
        assert_eq!(code, Some(0), "{all}");
        let updates: Vec<&Value> = msgs
            .iter()
            .filter(|m| m["method"] == "session/update")
            .map(|m| &m["params"]["update"])
            .collect();
        let abs = format!("{w}/a.txt");
        let done = updates
            .iter()
            .find(|u| u["sessionUpdate"] == "tool_call_update" && u["status"] == "completed")
            .unwrap_or_else(|| panic!("no completed call: {all}"));
        let diff = &done["content"][0];
        assert_eq!(diff["type"], "diff", "{all}");
        assert_eq!(diff["path"], abs.as_str(), "{all}");
        assert_eq!(diff["oldText"], "one\ntwo\nthree\n", "{all}");
        assert_eq!(diff["newText"], "one\nTWO\nthree\n", "{all}");
        let said: String = updates
            .iter()
            .filter(|u| u["sessionUpdate"] == "agent_message_chunk")
            .filter_map(|u| u["content"]["text"].as_str())
            .collect();
        assert_eq!(said, "Changed line two.", "{all}");
        assert!(
            msgs.iter().any(|m| m["result"]["stopReason"] == "end_turn"),
            "{all}"
        );
        assert_eq!(
            std::fs::read_to_string(format!("{w}/a.txt")).unwrap(),
            "one\nTWO\nthree\n"
        );
        let sid = msgs
            .iter()
            .find_map(|m| m["result"]["sessionId"].as_str())
            .unwrap_or_else(|| panic!("no session: {all}"))
            .to_string();

        // Listed for its directory, with its title and date; not for another.
        let (msgs, all, code) = run(
            &home,
            &acpx,
            &["--cwd", &w, "sessions", "list", "--filter-cwd", &w],
        );
        assert_eq!(code, Some(0), "{all}");
        let listed: Vec<&Value> = msgs
            .iter()
            .filter_map(|m| m["sessions"].as_array())
            .flatten()
            .collect();
        assert_eq!(listed.len(), 1, "{all}");
        assert_eq!(listed[0]["sessionId"], sid.as_str(), "{all}");
        assert_eq!(listed[0]["title"], "edit a.txt", "{all}");
        assert!(listed[0]["updatedAt"].is_string(), "{all}");
        let (msgs, all, code) = run(
            &home,
            &acpx,
            &["--cwd", &o, "sessions", "list", "--filter-cwd", &o],
        );
        assert_eq!(code, Some(0), "{all}");
        let listed: usize = msgs
            .iter()
            .filter_map(|m| m["sessions"].as_array())
            .map(|a| a.len())
            .sum();
        assert_eq!(listed, 0, "{all}");
    });
    t.await.unwrap();
    assert_eq!(fake.chat_requests().len(), 2);
}
