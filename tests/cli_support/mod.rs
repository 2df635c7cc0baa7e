//! Helpers for the `navi` command-line tests: a temp home with a test
//! profile, the binary pointed at the fake LLM server, captured output.
#![allow(dead_code)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};
use std::path::PathBuf;
use std::process::Stdio;
use tokio::io::AsyncWriteExt;
use tokio::process::Command;

use crate::support::FakeLlm;

pub struct Env {
    pub dir: tempfile::TempDir,
}

impl Env {
    pub fn new() -> Env {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("cfg/profiles/tester");
        std::fs::create_dir_all(&p).unwrap();
        let cfg = json!({
            "id": "tester", "name": "Tester", "description": "test profile",
            "model": ["test-model"], "temperature": 0.2,
            "enabled_tools": ["todo", "scratchpad"],
            "planning_phase1_enabled": false, "planning_phase3_enabled": false,
            "iteration_budget_enabled": false, "goal_anchoring_enabled": false
        });
        std::fs::write(p.join("config.json"), cfg.to_string()).unwrap();
        std::fs::write(p.join("system_prompt.txt"), "TESTER-PROMPT").unwrap();
        std::fs::write(dir.path().join("cfg/persona.txt"), "TEST-PERSONA").unwrap();
        Env { dir }
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    pub fn std_cmd(&self, url: &str, backend: &str) -> std::process::Command {
        let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_navi"));
        c.env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", self.dir.path())
            .env("NAVI_DATA_DIR", self.path("data"))
            .env("NAVI_CONFIG_DIR", self.path("cfg"))
            .env("OLLAMA_HOST", url)
            .env("OPENAI_BASE_URL", format!("{url}/v1"))
            .env("LLM_STREAM_FIRST_CHUNK_TIMEOUT", "20")
            .args(["--backend", backend])
            .current_dir(self.dir.path())
            .stdin(Stdio::null());
        c
    }

    pub fn cmd(&self, fake: &FakeLlm, backend: &str) -> Command {
        let url = if backend == "openai" {
            fake.openai_url().trim_end_matches("/v1").to_string()
        } else {
            fake.ollama_url()
        };
        let mut c = Command::from(self.std_cmd(&url, backend));
        if backend == "openai" {
            c.env("OPENAI_BASE_URL", fake.openai_url());
        }
        c.kill_on_drop(true);
        c
    }

    pub async fn run(&self, fake: &FakeLlm, backend: &str, args: &[&str]) -> Out {
        let o = self.cmd(fake, backend).args(args).output().await.unwrap();
        Out::from(o)
    }

    pub async fn run_stdin(&self, fake: &FakeLlm, args: &[&str], input: &[u8]) -> Out {
        let mut child = self
            .cmd(fake, "ollama")
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(input).await.unwrap();
        drop(stdin);
        Out::from(child.wait_with_output().await.unwrap())
    }
}

pub struct Out {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl From<std::process::Output> for Out {
    fn from(o: std::process::Output) -> Out {
        Out {
            code: o.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }
}

pub fn last_user(req: &Value) -> &Value {
    req["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .unwrap()
}
