//! Running the sandbox probe (`probe.py`) through every kind of process
//! navi starts for a tool — `terminal`, `code_exec`, a user tool and a
//! stdio MCP server (`probe_server.py`, which probes its own process) —
//! with the real binary, as root or as an ordinary user (`nobody` through
//! `setpriv`), with fd 77 opened on a file outside the workspace by the
//! shell that starts navi.
#![allow(dead_code)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::mcp_support::env::{Env, tool_results};
use crate::support::{FakeLlm, Reply};
use serde_json::{Value, json};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// Where a probe runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Front {
    Terminal,
    CodeExec,
    UserTool,
    Mcp,
}

pub const FRONTS: [Front; 4] = [
    Front::Terminal,
    Front::CodeExec,
    Front::UserTool,
    Front::Mcp,
];

/// Who runs navi.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum User {
    Root,
    Nobody,
}

pub const NOBODY: u32 = 65534;

/// PATH for navi run as `user` (root's own tool dirs are closed to others).
pub fn path_for(user: User) -> String {
    match user {
        User::Root => std::env::var("PATH").unwrap_or_default(),
        User::Nobody => "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin".into(),
    }
}

pub fn support_file(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/sandbox_support")
        .join(name)
}

/// The probe's call for `front`, with `args` (JSON text) for probe.py.
fn call(front: Front, args: &str) -> Reply {
    let probe = support_file("probe.py").display().to_string();
    match front {
        Front::Terminal => Reply::tool_call(
            "terminal",
            json!({"command": format!("python3 {probe} '{args}'")}),
        ),
        Front::CodeExec => Reply::tool_call(
            "code_exec",
            json!({"code": format!(
                "import sys\nsys.argv = ['probe', {args:?}]\nexec(compile(open({probe:?}).read(), {probe:?}, 'exec'))\n"
            )}),
        ),
        Front::UserTool => Reply::tool_call("probe", json!({ "args": args })),
        Front::Mcp => Reply::tool_call("p__probe", json!({ "args": args })),
    }
}

/// A config dir with the tester profile (terminal, code_exec, the `probe`
/// user tool, the `p` MCP server) and `config` prepended to config.toml.
pub fn env_with(config: &str) -> Env {
    let env = Env::new("", &["terminal", "code_exec", "probe", "p__*"]);
    let tools = env.path("cfg/tools");
    std::fs::create_dir_all(&tools).unwrap();
    let manifest = json!({
        "name": "probe", "description": "the sandbox probe",
        "parameters": {"type": "object", "properties": {"args": {"type": "string"}}},
        "command": ["python3", support_file("probe.py")], "timeout_secs": 30
    });
    std::fs::write(tools.join("probe.json"), manifest.to_string()).unwrap();
    std::fs::write(tools.join("enabled.json"), "[\"probe\"]").unwrap();
    let server = format!(
        "{config}\n[mcp_servers.p]\ncommand = \"python3\"\nargs = [{:?}]\n",
        support_file("probe_server.py").display().to_string()
    );
    std::fs::write(env.path("cfg/config.toml"), server).unwrap();
    env
}

/// Makes everything under the env readable and writable for `nobody`
/// (what an ordinary user's own home would be), and `files` theirs.
pub fn open_up_for(env: &Env, files: &[&Path]) {
    for entry in walk(&env.path("")) {
        let mode = if entry.is_dir() { 0o777 } else { 0o666 };
        let _ = std::fs::set_permissions(&entry, std::fs::Permissions::from_mode(mode));
    }
    for f in files {
        std::process::Command::new("chown")
            .args(["-R", &format!("{NOBODY}:{NOBODY}")])
            .arg(f)
            .status()
            .unwrap();
    }
}

fn walk(root: &Path) -> Vec<PathBuf> {
    let mut out = vec![root.to_path_buf()];
    let mut i = 0;
    while i < out.len() {
        if out[i].is_dir()
            && !out[i].is_symlink()
            && let Ok(rd) = std::fs::read_dir(&out[i])
        {
            out.extend(rd.flatten().map(|e| e.path()));
        }
        i += 1;
    }
    out
}

/// The outcome of one navi run with probes.
pub struct Probed {
    pub code: i32,
    pub stderr: String,
    /// One probe report per front, in order (`Value::Null` when the result
    /// held none; `raw` says what it was).
    pub reports: Vec<Value>,
    pub raw: Vec<String>,
}

/// Runs `navi run` in `cwd` as `user` with one probe per front. `vars`:
/// more environment (e.g. NAVI_CONFIG); `fd77`: the file the starting
/// shell opens as fd 77.
pub async fn run_probes(
    env: &Env,
    user: User,
    cwd: &Path,
    vars: &[(&str, String)],
    fronts: &[Front],
    args: &Value,
    fd77: &Path,
) -> Probed {
    let fake = FakeLlm::start().await;
    let text = args.to_string();
    for f in fronts {
        fake.push(call(*f, &text));
    }
    fake.push(Reply::text("done"));
    let navi = env!("CARGO_BIN_EXE_navi");
    // The shell opens fd 77 (not close-on-exec) and execs navi with it.
    let mut script = String::from("exec \"$@\" 77>>\"$NAVI_TEST_FD77\"");
    // bash: dash reads only one-digit descriptors in redirections.
    let mut c = tokio::process::Command::new("bash");
    if user == User::Nobody {
        script = format!(
            "exec setpriv --reuid={NOBODY} --regid={NOBODY} --clear-groups \"$@\" 77>>\"$NAVI_TEST_FD77\""
        );
    }
    c.args(["-c", &script, "sh", navi])
        .args([
            "--backend",
            "ollama",
            "run",
            "--profile",
            "tester",
            "--approve-all",
            "go",
        ])
        .current_dir(cwd)
        .env_clear()
        .env("PATH", path_for(user))
        .env("HOME", env.path(""))
        .env("NAVI_DATA_DIR", env.path("data"))
        .env("NAVI_CONFIG_DIR", env.path("cfg"))
        .env("OLLAMA_HOST", fake.ollama_url())
        .env("LLM_STREAM_FIRST_CHUNK_TIMEOUT", "20")
        .env("NAVI_TEST_FD77", fd77)
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true);
    for (k, v) in vars {
        c.env(k, v);
    }
    let out = c.output().await.unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let n = fronts.len();
    let raw = if fake.chat_requests().len() > n {
        tool_results(&fake, n)
    } else {
        Vec::new()
    };
    let reports = raw
        .iter()
        .map(|r| {
            r.lines()
                .find_map(|l| l.trim().strip_prefix("PROBE="))
                .and_then(|j| serde_json::from_str(j).ok())
                .unwrap_or(Value::Null)
        })
        .collect();
    Probed {
        code: out.status.code().unwrap_or(-1),
        stderr,
        reports,
        raw,
    }
}

/// The probes in `report` that worked although they must not have.
pub fn escapes(report: &Value, must_fail: &[&str]) -> Vec<String> {
    must_fail
        .iter()
        .filter(|k| report[**k] == "ok")
        .map(|k| k.to_string())
        .collect()
}
