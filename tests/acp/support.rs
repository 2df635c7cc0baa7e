//! Helpers for the `navi acp` tests: a temp home with two profiles, the
//! official TypeScript ACP client (tests/acp/client.mjs on the pinned SDK,
//! installed on first use into target/acp-client), and raw stdin for the
//! frames no SDK would send.
#![allow(dead_code)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::FakeLlm;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;

fn pinned() -> String {
    include_str!("sdk.env")
        .lines()
        .find_map(|l| l.strip_prefix("ACP_SDK_PKG="))
        .unwrap_or_default()
        .trim()
        .to_string()
}

static INSTALL: Mutex<()> = Mutex::new(());

fn client_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("target/acp-client")
}

/// The client script next to the installed SDK, installing the SDK when it
/// is missing. `Err` says why it is not available.
fn client() -> Result<PathBuf, String> {
    let _guard = INSTALL.lock().unwrap_or_else(|p| p.into_inner());
    let dir = client_dir();
    let sdk = dir.join("node_modules/@agentclientprotocol/sdk/package.json");
    if !sdk.is_file() {
        let out = Command::new("npm")
            .args(["install", "--no-audit", "--no-fund", "--prefix"])
            .arg(&dir)
            .arg(pinned())
            .output()
            .map_err(|e| format!("npm: cannot run: {e}"))?;
        if !out.status.success() {
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
    // Beside node_modules, so the script's import resolves there.
    let script = dir.join("client.mjs");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/acp/client.mjs");
    let text = std::fs::read(&src).map_err(|e| format!("{}: {e}", src.display()))?;
    if std::fs::read(&script).ok().as_deref() != Some(&text[..]) {
        let tmp = dir.join(format!("client.{}.tmp", std::process::id()));
        std::fs::write(&tmp, &text).map_err(|e| e.to_string())?;
        std::fs::rename(&tmp, &script).map_err(|e| e.to_string())?;
    }
    Ok(script)
}

/// The client, or `None` after saying why the test skips.
pub fn client_or_skip(test: &str) -> Option<PathBuf> {
    match client() {
        Ok(c) => Some(c),
        Err(e) => {
            println!("SKIP {test}: the ACP client SDK is not available: {e}");
            eprintln!("SKIP {test}: the ACP client SDK is not available: {e}");
            None
        }
    }
}

pub struct Home {
    pub dir: tempfile::TempDir,
    pub url: String,
}

impl Home {
    /// Profiles `tester` (filesystem, terminal, todo) and `second` (todo),
    /// and a workspace directory `work`.
    pub fn new(fake: &FakeLlm) -> Home {
        let dir = tempfile::tempdir().unwrap();
        for (id, name, tools, prompt) in [
            (
                "tester",
                "Tester",
                json!(["filesystem", "terminal", "todo"]),
                "TESTER-PROMPT",
            ),
            ("second", "Second", json!(["todo"]), "SECOND-PROMPT"),
        ] {
            let p = dir.path().join("cfg/profiles").join(id);
            std::fs::create_dir_all(&p).unwrap();
            let cfg = json!({
                "id": id, "name": name, "description": format!("{name} profile"),
                "model": ["test-model"], "temperature": 0.2,
                "enabled_tools": tools,
                "planning_phase1_enabled": false, "planning_phase3_enabled": false,
                "iteration_budget_enabled": false, "goal_anchoring_enabled": false
            });
            std::fs::write(p.join("config.json"), cfg.to_string()).unwrap();
            std::fs::write(p.join("system_prompt.txt"), prompt).unwrap();
        }
        std::fs::write(dir.path().join("cfg/persona.txt"), "TEST-PERSONA").unwrap();
        std::fs::create_dir_all(dir.path().join("work")).unwrap();
        Home {
            dir,
            url: fake.ollama_url(),
        }
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    pub fn work(&self) -> PathBuf {
        std::fs::canonicalize(self.path("work")).unwrap()
    }

    /// The environment navi runs with.
    fn envs(&self, c: &mut Command) {
        c.env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", self.dir.path())
            .env("NAVI_DATA_DIR", self.path("data"))
            .env("NAVI_CONFIG_DIR", self.path("cfg"))
            .env("OLLAMA_HOST", &self.url)
            .env("LLM_STREAM_FIRST_CHUNK_TIMEOUT", "20")
            .current_dir(self.work());
    }

    /// `program` with the environment navi runs with (a client that
    /// starts navi itself).
    pub fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut c = Command::new(program);
        self.envs(&mut c);
        c
    }

    /// `navi --backend ollama <args>`.
    pub fn navi(&self, args: &[&str]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_navi"));
        self.envs(&mut c);
        c.args(["--backend", "ollama"]).args(args);
        c
    }

    /// Runs the TypeScript client with `steps` against a fresh `navi acp`;
    /// `permission` is how it answers permission requests.
    pub async fn drive(&self, client: &Path, steps: Value, permission: &str) -> Drive {
        self.drive_env(client, steps, permission, &[]).await
    }

    /// [`drive`](Self::drive) with some of navi's environment changed.
    pub async fn drive_env(
        &self,
        client: &Path,
        steps: Value,
        permission: &str,
        env: &[(&str, &str)],
    ) -> Drive {
        let mut c = Command::new("node");
        self.envs(&mut c);
        for (k, v) in env {
            c.env(k, v);
        }
        c.arg(client)
            .arg(steps.to_string())
            .env(
                "NAVI_ACP_CMD",
                json!([env!("CARGO_BIN_EXE_navi"), "--backend", "ollama", "acp"]).to_string(),
            )
            .env("NAVI_ACP_PERMISSION", permission)
            .env("NAVI_ACP_CWD", self.work())
            .stdin(Stdio::null());
        let out = tokio::task::spawn_blocking(move || c.output().unwrap())
            .await
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let v: Value = serde_json::from_str(stdout.trim()).unwrap_or_else(|e| {
            panic!(
                "client output is not JSON ({e}):\n{stdout}\n{}",
                String::from_utf8_lossy(&out.stderr)
            )
        });
        Drive { v }
    }

    pub fn db(&self) -> rusqlite::Connection {
        rusqlite::Connection::open(self.path("data/navi.db")).unwrap()
    }

    /// (role, content, tool_name) of a session's stored messages, in order.
    pub fn rows(&self, session: &str) -> Vec<(String, String, Option<String>)> {
        let db = self.db();
        let mut st = db
            .prepare("SELECT role, content, tool_name FROM messages WHERE session_id = ?1 AND buffer = 0 ORDER BY id")
            .unwrap();
        st.query_map([session], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
    }
}

/// What the client saw.
pub struct Drive {
    pub v: Value,
}

impl Drive {
    pub fn log(&self) -> &Vec<Value> {
        self.v["log"].as_array().unwrap()
    }

    /// The session id the client named `name`.
    pub fn id(&self, name: &str) -> String {
        self.v["names"][name]
            .as_str()
            .unwrap_or_else(|| panic!("no session {name}: {}", self.v))
            .to_string()
    }

    pub fn exit_code(&self) -> i64 {
        self.v["exit"]["code"].as_i64().unwrap_or(-1)
    }

    pub fn stderr(&self) -> &str {
        self.v["stderr"].as_str().unwrap_or("")
    }

    /// The results of the requests of step kind `op`, in order.
    pub fn results(&self, op: &str) -> Vec<&Value> {
        self.log()
            .iter()
            .filter(|e| e["t"] == "result" && e["op"] == op)
            .collect()
    }

    /// The `session/update`s of one session, in order.
    pub fn updates(&self, session: &str) -> Vec<&Value> {
        self.log()
            .iter()
            .filter(|e| e["t"] == "update" && e["session"] == session)
            .map(|e| &e["update"])
            .collect()
    }

    /// The concatenated text of one kind of chunk.
    pub fn text(&self, session: &str, kind: &str) -> String {
        self.updates(session)
            .iter()
            .filter(|u| u["sessionUpdate"] == kind)
            .filter_map(|u| u["content"]["text"].as_str())
            .collect()
    }

    pub fn kinds(&self, session: &str) -> Vec<String> {
        self.updates(session)
            .iter()
            .map(|u| u["sessionUpdate"].as_str().unwrap_or("").to_string())
            .collect()
    }

    pub fn permissions(&self) -> Vec<&Value> {
        self.log()
            .iter()
            .filter(|e| e["t"] == "permission")
            .collect()
    }

    /// A readable dump for assertion messages.
    pub fn dump(&self) -> String {
        serde_json::to_string_pretty(&self.v).unwrap()
    }
}

/// Live processes whose command line contains `marker` (not the test
/// client, whose arguments may quote it).
pub fn processes_with(marker: &str) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        if let Ok(cmd) = std::fs::read(e.path().join("cmdline")) {
            let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
            let zombie = std::fs::read_to_string(e.path().join("stat"))
                .map(|s| {
                    s.rsplit_once(')')
                        .is_some_and(|(_, a)| a.trim_start().starts_with('Z'))
                })
                .unwrap_or(false);
            if cmd.contains(marker) && !cmd.contains("\"op\"") && !zombie {
                out.push(cmd);
            }
        }
    }
    out
}
