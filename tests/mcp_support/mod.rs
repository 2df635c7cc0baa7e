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

/// What the README-style tests (tests/mcp_readme.rs) start servers with:
/// the filled npx and uvx caches (copied per test, see `fresh_npm_cache`,
/// `fresh_uv_cache`), uv's and the time server venv's `bin` directories,
/// and the pinned package specs.
pub struct Readme {
    pub npm_cache: PathBuf,
    pub uv_cache: PathBuf,
    pub uv_bin: PathBuf,
    pub py_bin: PathBuf,
    pub fs_pkg: String,
    pub everything_pkg: String,
    /// `mcp-server-time@VERSION`, as `uvx` takes it.
    pub time_spec: String,
}

impl Readme {
    /// A copy of npm's cache with the packages and their metadata but
    /// nothing installed (no `_npx`): `npx -y` installs from it, offline.
    pub fn fresh_npm_cache(&self, to: &Path) {
        std::fs::create_dir_all(to).unwrap();
        copy_tree(&self.npm_cache.join("_cacache"), to);
    }

    /// A copy of uv's cache with the wheels and index pages but no
    /// environment built from them.
    pub fn fresh_uv_cache(&self, to: &Path) {
        std::fs::create_dir_all(to).unwrap();
        for entry in std::fs::read_dir(&self.uv_cache).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            if !name.starts_with("environments-") && !name.starts_with("interpreter-") {
                copy_tree(&path, to);
            }
        }
    }
}

fn copy_tree(from: &Path, into: &Path) {
    let ok = Command::new("cp")
        .arg("-a")
        .arg(from)
        .arg(into)
        .status()
        .unwrap()
        .success();
    assert!(ok, "cp -a {} {}", from.display(), into.display());
}

/// The README-style set-up, filling the caches on first use
/// (tests/mcp_support/fill_caches.sh), or `None` after saying why the test
/// skips.
pub fn readme_or_skip(test: &str) -> Option<Readme> {
    let s = servers_or_skip(test)?;
    let _guard = INSTALL.lock().unwrap_or_else(|p| p.into_inner());
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let root = manifest.join("target/mcp-servers");
    let filled = |dir: &str, pkg: &str| {
        root.join(dir)
            .join(format!(".filled-{}", pkg.replace(['/', '@'], "_")))
            .is_file()
    };
    let time = pinned("TIME_PKG");
    let ready = root.join("uv/bin/uvx").is_file()
        && filled("npm-cache", &pinned("FS_PKG"))
        && filled("npm-cache", &pinned("EVERYTHING_PKG"))
        && root.join(format!("uv-cache/.filled-{time}")).is_file();
    if !ready
        && let Err(e) = run(
            Command::new("bash").arg(manifest.join("tests/mcp_support/fill_caches.sh")),
            "tests/mcp_support/fill_caches.sh",
        )
    {
        println!("SKIP {test}: the npx/uvx caches cannot be filled: {e}");
        eprintln!("SKIP {test}: the npx/uvx caches cannot be filled: {e}");
        return None;
    }
    Some(Readme {
        npm_cache: root.join("npm-cache"),
        uv_cache: root.join("uv-cache"),
        uv_bin: root.join("uv/bin"),
        py_bin: s.time_bin.parent().unwrap().to_path_buf(),
        fs_pkg: pinned("FS_PKG"),
        everything_pkg: pinned("EVERYTHING_PKG"),
        time_spec: format!(
            "mcp-server-time@{}",
            time.split_once("==").map(|(_, v)| v).unwrap_or_default()
        ),
    })
}
