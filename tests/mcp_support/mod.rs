//! The real third-party MCP servers the tests start, installed on first use
//! into `target/mcp-servers/` (npm `--prefix`, a Python venv) at the versions
//! pinned in `servers.env`. `.ci/run` installs the same ahead of time.
#![allow(dead_code)]
pub mod env;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

pub struct Servers {
    /// `node <this> <root>` runs the filesystem server.
    pub fs_js: PathBuf,
    /// The time server's console script.
    pub time_bin: PathBuf,
}

pub fn test_server() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_support/test_server.py")
}

fn pinned(key: &str) -> String {
    let text = include_str!("servers.env");
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("{key}=")))
        .unwrap_or_default()
        .trim()
        .to_string()
}

fn run(cmd: &mut Command, what: &str) -> Result<(), String> {
    match cmd.output() {
        Ok(o) if o.status.success() => Ok(()),
        Ok(o) => Err(format!(
            "{what} failed: {}",
            String::from_utf8_lossy(&o.stderr)
                .lines()
                .rev()
                .take(3)
                .collect::<Vec<_>>()
                .join(" | ")
        )),
        Err(e) => Err(format!("{what}: cannot run: {e}")),
    }
}

static INSTALL: Mutex<()> = Mutex::new(());

/// The installed servers, installing them if needed. `Err` says why they are
/// not available (registry unreachable, npm or python missing).
pub fn servers() -> Result<Servers, String> {
    let _guard = INSTALL.lock().unwrap_or_else(|p| p.into_inner());
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/mcp-servers");
    let s = Servers {
        fs_js: root.join("node/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"),
        time_bin: root.join("py/bin/mcp-server-time"),
    };
    if !s.fs_js.is_file() {
        run(
            Command::new("npm")
                .args(["install", "--no-audit", "--no-fund", "--prefix"])
                .arg(root.join("node"))
                .arg(pinned("FS_PKG")),
            "npm install of the filesystem MCP server",
        )?;
    }
    if !s.time_bin.is_file() {
        if !root.join("py/bin/pip").is_file() {
            run(
                Command::new("python3")
                    .args(["-m", "venv"])
                    .arg(root.join("py")),
                "python3 -m venv",
            )?;
        }
        run(
            Command::new(root.join("py/bin/pip"))
                .args(["install", "-q"])
                .arg(pinned("TIME_PKG")),
            "pip install of the time MCP server",
        )?;
    }
    Ok(s)
}

/// `server-everything`'s entry point (`node <this> streamableHttp`),
/// installed on first use, or `None` after saying why the test skips.
pub fn everything_or_skip(test: &str) -> Option<PathBuf> {
    let _guard = INSTALL.lock().unwrap_or_else(|p| p.into_inner());
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/mcp-servers/node");
    let js = root.join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    if !js.is_file()
        && let Err(e) = run(
            Command::new("npm")
                .args(["install", "--no-audit", "--no-fund", "--prefix"])
                .arg(&root)
                .arg(pinned("EVERYTHING_PKG")),
            "npm install of server-everything",
        )
    {
        println!("SKIP {test}: server-everything is not available: {e}");
        eprintln!("SKIP {test}: server-everything is not available: {e}");
        return None;
    }
    Some(js)
}

/// Prints why a test is skipped (servers unavailable) and returns `None`.
pub fn servers_or_skip(test: &str) -> Option<Servers> {
    match servers() {
        Ok(s) => Some(s),
        Err(e) => {
            println!("SKIP {test}: the third-party MCP servers are not available: {e}");
            eprintln!("SKIP {test}: the third-party MCP servers are not available: {e}");
            None
        }
    }
}
