//! Secrets and exposure end to end with the real `navi` binary and the fake
//! LLM server: tool processes do not inherit API keys, files Navi keeps are
//! owner-only under umask 000, bad log levels and env values are config
//! errors naming what the user set, and unknown profile tools are warned about.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use crate::support;

use serde_json::json;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use support::{FakeLlm, Reply};
use tokio::process::Command;

struct Env {
    dir: tempfile::TempDir,
}

impl Env {
    /// A config dir with a `tester` profile that has `tools`.
    fn new(tools: &[&str]) -> Env {
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
        Env { dir }
    }

    fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    fn cfg(&self) -> PathBuf {
        self.dir.path().join("cfg")
    }

    /// `navi` run through `sh` with the given umask.
    fn cmd(&self, fake: &FakeLlm, umask: &str) -> Command {
        let mut c = Command::new("sh");
        c.arg("-c")
            .arg(format!("umask {umask}; exec \"$0\" \"$@\""))
            .arg(env!("CARGO_BIN_EXE_navi"))
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", self.dir.path())
            .env("NAVI_DATA_DIR", self.data())
            .env("NAVI_CONFIG_DIR", self.cfg())
            .env("OLLAMA_HOST", fake.ollama_url())
            .env("LLM_STREAM_FIRST_CHUNK_TIMEOUT", "20")
            .args(["--backend", "ollama"])
            .stdin(Stdio::null())
            .kill_on_drop(true);
        c
    }
}

async fn output(mut c: Command) -> (i32, String, String) {
    let out = c.output().await.unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The text of every tool message the fake server was sent.
fn tool_messages(fake: &FakeLlm) -> Vec<String> {
    fake.chat_requests()
        .iter()
        .flat_map(|r| r["messages"].as_array().cloned().unwrap_or_default())
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or("").to_string())
        .collect()
}

fn contains_bytes(path: &Path, needle: &[u8]) -> bool {
    std::fs::read(path)
        .map(|b| b.windows(needle.len()).any(|w| w == needle))
        .unwrap_or(false)
}

#[tokio::test]
async fn tool_processes_do_not_inherit_secrets() {
    let env = Env::new(&["terminal"]);
    std::fs::write(
        env.cfg().join("config.toml"),
        "[security]\nenv_passthrough = [\"GITHUB_TOKEN\"]\n",
    )
    .unwrap();
    let fake = FakeLlm::start().await;
    fake.push(Reply::tool_call(
        "terminal",
        json!({"command": "echo \"key=[$OPENAI_API_KEY] navi=[$NAVI_SECRET_TOKEN] pw=[$DB_PASSWORD] gh=[$GITHUB_TOKEN] home=[$HOME]\""}),
    ));
    fake.push(Reply::text("done"));
    let mut c = env.cmd(&fake, "022");
    c.env("OPENAI_API_KEY", "sk-test-secret-4242")
        .env("NAVI_SECRET_TOKEN", "navi-secret-77")
        .env("DB_PASSWORD", "hunter2-pw")
        .env("GITHUB_TOKEN", "gh-pass-through")
        .args([
            "run",
            "--profile",
            "tester",
            "--approve",
            "terminal",
            "show env",
        ]);
    let (code, stdout, stderr) = output(c).await;
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let tools = tool_messages(&fake);
    assert_eq!(tools.len(), 1, "{tools:?}");
    let home = env.dir.path().display().to_string();
    assert!(
        tools[0].contains(&format!(
            "key=[] navi=[] pw=[] gh=[gh-pass-through] home=[{home}]"
        )),
        "{}",
        tools[0]
    );
    for r in fake.requests() {
        let body = r.body.to_string();
        for secret in ["sk-test-secret-4242", "navi-secret-77", "hunter2-pw"] {
            assert!(!body.contains(secret), "{secret} reached the model");
        }
    }
    let db = env.data().join("navi.db");
    assert!(db.exists());
    for f in ["navi.db", "navi.db-wal"] {
        assert!(!contains_bytes(&env.data().join(f), b"sk-test-secret-4242"));
    }
}

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).unwrap().permissions().mode() & 0o777
}

/// Every dir under `root` (and itself) is 0700, every file 0600 (or 0400:
/// git's objects in the checkpoint repositories are read-only).
fn assert_private_tree(root: &Path) -> usize {
    assert_eq!(mode(root), 0o700, "{}", root.display());
    let mut n = 1;
    for e in std::fs::read_dir(root).unwrap() {
        let p = e.unwrap().path();
        let ft = std::fs::symlink_metadata(&p).unwrap().file_type();
        if ft.is_dir() {
            n += assert_private_tree(&p);
        } else if ft.is_file() {
            let m = mode(&p);
            assert!(m == 0o600 || m == 0o400, "{} is {m:o}", p.display());
            n += 1;
        }
    }
    n
}

#[tokio::test]
async fn data_db_logs_and_session_dirs_are_owner_only_under_umask_000() {
    let env = Env::new(&["code_exec"]);
    // A broken user tool manifest is logged as a warning: a log file appears.
    std::fs::create_dir_all(env.cfg().join("tools")).unwrap();
    std::fs::write(env.cfg().join("tools/broken.json"), "{not json").unwrap();
    let fake = FakeLlm::start().await;
    fake.push(Reply::tool_call(
        "code_exec",
        json!({"code": "print('hello from python')"}),
    ));
    fake.push(Reply::text("done"));
    let mut c = env.cmd(&fake, "000");
    c.env("LOG_LEVEL", "debug").args([
        "run",
        "--profile",
        "tester",
        "--approve",
        "code_exec",
        "run code",
    ]);
    let (code, stdout, stderr) = output(c).await;
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(tool_messages(&fake)[0].contains("hello from python"));
    let data = env.data();
    assert!(data.join("navi.db").is_file());
    assert!(
        data.join("sessions").is_dir(),
        "code_exec made a session dir"
    );
    let logs: Vec<_> = std::fs::read_dir(data.join("logs")).unwrap().collect();
    assert!(!logs.is_empty(), "the warning was logged to a file");
    let checked = assert_private_tree(&data);
    assert!(checked >= 5, "{checked}");
}

#[tokio::test]
async fn bad_log_levels_and_env_values_are_config_errors_naming_the_source() {
    let env = Env::new(&["todo"]);
    let fake = FakeLlm::start().await;

    let mut c = env.cmd(&fake, "022");
    c.env("LOG_LEVEL", "verbose").args(["run", "hi"]);
    let (code, _, stderr) = output(c).await;
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("LOG_LEVEL") && stderr.contains("verbose"),
        "{stderr}"
    );

    let file = env.cfg().join("config.toml");
    std::fs::write(&file, "[logging]\nlevel = \"loud\"\n").unwrap();
    let mut c = env.cmd(&fake, "022");
    c.args(["run", "hi"]);
    let (code, _, stderr) = output(c).await;
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains(&file.display().to_string())
            && stderr.contains("logging.level")
            && stderr.contains("loud"),
        "{stderr}"
    );
    std::fs::remove_file(&file).unwrap();

    let mut c = env.cmd(&fake, "022");
    c.args(["--log-level", "chatty", "run", "hi"]);
    let (code, _, stderr) = output(c).await;
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("chatty"), "{stderr}");

    // A value that parses but fails validation names the variable too.
    let mut c = env.cmd(&fake, "022");
    c.env("OLLAMA_HOST", "ftp://example.invalid")
        .args(["run", "hi"]);
    let (code, _, stderr) = output(c).await;
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("environment variable OLLAMA_HOST") && stderr.contains("llm.ollama_host"),
        "{stderr}"
    );
    let mut c = env.cmd(&fake, "022");
    c.env("CONTEXT_COMPRESSION_THRESHOLD", "7")
        .args(["run", "hi"]);
    let (code, _, stderr) = output(c).await;
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("CONTEXT_COMPRESSION_THRESHOLD"), "{stderr}");
    assert!(fake.chat_requests().is_empty());
}

#[tokio::test]
async fn unknown_profile_tools_are_warned_about_once() {
    let env = Env::new(&["todo", "teleport", "github__*", "files__read"]);
    let fake = FakeLlm::start().await;
    fake.push(Reply::text("hello"));
    let mut c = env.cmd(&fake, "022");
    c.args(["run", "--profile", "tester", "hi"]);
    let (code, stdout, stderr) = output(c).await;
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout.trim(), "hello");
    let file = env.cfg().join("profiles/tester/config.json");
    let warnings: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("warning:"))
        .collect();
    assert_eq!(warnings.len(), 1, "{stderr}");
    assert!(
        warnings[0].contains(&file.display().to_string())
            && warnings[0].contains("enabled_tools")
            && warnings[0].contains("\"teleport\""),
        "{stderr}"
    );
    let tools = &fake.chat_requests()[0]["tools"];
    let names: Vec<&str> = tools
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|t| t["function"]["name"].as_str())
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(names, vec!["todo"]);
}
