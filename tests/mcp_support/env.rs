//! The per-test environment of tests/mcp.rs: a config dir with a `tester`
//! profile and `config.toml`, and helpers to run `navi` and read what the fake
//! LLM server received.
use super::test_server;
use crate::support::FakeLlm;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::process::Stdio;
use tokio::process::Command;

pub struct Env {
    dir: tempfile::TempDir,
}

impl Env {
    /// A config dir with `config` as config.toml and a `tester` profile
    /// whose tool list is `tools`.
    pub fn new(config: &str, tools: &[&str]) -> Env {
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
        Env { dir }
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    pub fn cmd(&self, fake: Option<&FakeLlm>) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_navi"));
        c.env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", self.dir.path())
            .env("NAVI_DATA_DIR", self.path("data"))
            .env("NAVI_CONFIG_DIR", self.path("cfg"))
            .env("LLM_STREAM_FIRST_CHUNK_TIMEOUT", "20")
            .stdin(Stdio::null())
            .kill_on_drop(true);
        if let Some(f) = fake {
            c.env("OLLAMA_HOST", f.ollama_url())
                .args(["--backend", "ollama"]);
        }
        c
    }

    pub async fn navi(&self, fake: Option<&FakeLlm>, args: &[&str]) -> (i32, String, String) {
        let out = self.cmd(fake).args(args).output().await.unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    /// `navi run --json` with the tester profile; returns (code, events, stderr).
    pub async fn run(&self, fake: &FakeLlm, extra: &[&str]) -> (i32, Vec<Value>, String) {
        let mut args = vec!["run", "--json", "--profile", "tester"];
        args.extend_from_slice(extra);
        args.push("go");
        let (code, out, err) = self.navi(Some(fake), &args).await;
        let events = out
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        (code, events, err)
    }
}

pub fn test_server_entry(name: &str, mode: &str, extra: &str) -> String {
    format!(
        "[mcp_servers.{name}]\ncommand = \"python3\"\nargs = [{:?}, {mode:?}]\n{extra}\n",
        test_server().display().to_string()
    )
}

/// Tool results the agent sent back in chat request `i`, in order.
pub fn tool_results(fake: &FakeLlm, i: usize) -> Vec<String> {
    fake.chat_requests()[i]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or("").to_string())
        .collect()
}

pub fn offered_tools(req: &Value) -> Vec<String> {
    req["tools"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|t| t["function"]["name"].as_str().unwrap().to_string())
                .collect()
        })
        .unwrap_or_default()
}
