//! The kernel sandbox around the processes tools start (`terminal`,
//! `code_exec`, user tools, stdio MCP servers).
//!
//! Invariants:
//! - the policy is applied in the child between fork and exec
//!   ([`enforce::attach`]): a private mount namespace where everything but
//!   the writable roots is read-only ([`mounts`]), Landlock limiting where
//!   it may write, a seccomp program ([`seccomp`]: no network sockets but
//!   `AF_UNIX`, no terminal input injection, no device nodes, no new
//!   session), and no capabilities ([`caps`]); all inherited by everything
//!   it starts;
//! - `workspace-write` (the default) allows writes only under the workspace,
//!   `[sandbox].writable_roots`, the session's files directory and a private
//!   per-session temporary directory (exported as `TMPDIR`); all git metadata
//!   at any depth ([`git_scan`]) and everything navi reads as configuration
//!   or keeps as state ([`protected`]) stay read-only even inside those
//!   ([`policy`]); git metadata a call creates is neutralised after it
//!   ([`git_sweep`]);
//! - `read-only` allows writes only to the private temporary directory;
//!   `full-access` starts children as before (no Landlock, no filter);
//! - where the kernel cannot (no Landlock, or `NAVI_SANDBOX_FAKE_ABI=0`, a
//!   switch for tests only), navi warns once at start and tools run behind
//!   the allow-list and approvals; with `required` they refuse to run.
//!
//! The allow-list and the approvals stay in front as a second wall.

pub(crate) mod caps;
pub(crate) mod denial;
pub(crate) mod enforce;
pub(crate) mod git_config;
pub(crate) mod git_scan;
pub(crate) mod git_sweep;
pub(crate) mod mounts;
pub(crate) mod policy;
pub(crate) mod protected;
pub(crate) mod seccomp;

use crate::config::ConfigError;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

pub(crate) use policy::Policy;

/// How much a tool process may do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SandboxMode {
    /// Writes only to the private temporary directory; no network.
    ReadOnly,
    /// Writes under the workspace and the session's dirs; no network.
    WorkspaceWrite,
    /// No sandbox (the allow-list and approvals still apply).
    FullAccess,
}

impl SandboxMode {
    pub fn as_str(self) -> &'static str {
        match self {
            SandboxMode::ReadOnly => "read-only",
            SandboxMode::WorkspaceWrite => "workspace-write",
            SandboxMode::FullAccess => "full-access",
        }
    }

    /// A mode name (`required` is `workspace-write` that refuses to run tools
    /// without kernel support). `None` for anything else.
    pub fn parse(s: &str) -> Option<(SandboxMode, bool)> {
        match s.trim().to_ascii_lowercase().replace('_', "-").as_str() {
            "read-only" | "readonly" => Some((SandboxMode::ReadOnly, false)),
            "workspace-write" | "" => Some((SandboxMode::WorkspaceWrite, false)),
            "full-access" | "danger-full-access" | "off" => Some((SandboxMode::FullAccess, false)),
            "required" => Some((SandboxMode::WorkspaceWrite, true)),
            _ => None,
        }
    }
}

/// The names `--sandbox` and `[sandbox].mode` accept, for messages.
pub const MODE_CHOICES: &str =
    "\"read-only\", \"workspace-write\", \"full-access\" or \"required\"";

/// `[sandbox]` in the config.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SandboxConfig {
    /// `read-only` | `workspace-write` (default) | `full-access` | `required`.
    pub mode: String,
    /// Refuse to run tools when the kernel cannot sandbox them.
    pub required: bool,
    /// Let sandboxed `terminal`/`code_exec` processes use the network.
    pub network: bool,
    /// More directories sandboxed tools may write to.
    pub writable_roots: Vec<String>,
    /// The workspace; empty = the directory navi was started in.
    pub workspace: String,
}

impl Default for SandboxConfig {
    fn default() -> Self {
        SandboxConfig {
            mode: "workspace-write".into(),
            required: false,
            network: false,
            writable_roots: Vec::new(),
            workspace: String::new(),
        }
    }
}

impl SandboxConfig {
    /// The mode (`workspace-write` for a name [`validate`] would refuse).
    pub fn mode(&self) -> SandboxMode {
        SandboxMode::parse(&self.mode)
            .map(|(m, _)| m)
            .unwrap_or(SandboxMode::WorkspaceWrite)
    }

    /// Whether tools must not run without kernel support.
    pub fn is_required(&self) -> bool {
        self.required || SandboxMode::parse(&self.mode).is_some_and(|(_, r)| r)
    }

    /// The workspace directory: `workspace` when set, else `cwd`.
    pub(crate) fn workspace_dir(&self, cwd: &Path) -> PathBuf {
        let w = self.workspace.trim();
        if w.is_empty() {
            cwd.to_path_buf()
        } else {
            crate::tools::paths::absolute(w, cwd)
        }
    }
}

fn invalid(origin: &str, key: &str, value: &str, why: &str) -> ConfigError {
    ConfigError::Invalid {
        origin: origin.to_string(),
        key: key.to_string(),
        value: value.to_string(),
        why: why.to_string(),
    }
}

/// Checks `[sandbox]` values that need no start directory.
pub(crate) fn validate(c: &SandboxConfig, origin: &str) -> Result<(), ConfigError> {
    if SandboxMode::parse(&c.mode).is_none() {
        return Err(invalid(
            origin,
            "sandbox.mode",
            &c.mode,
            &format!("unknown sandbox mode; use {MODE_CHOICES}"),
        ));
    }
    check_dirs(origin, "sandbox.writable_roots", &c.writable_roots)
}

/// Every entry of a writable list must be an existing absolute directory.
pub(crate) fn check_dirs(origin: &str, key: &str, dirs: &[String]) -> Result<(), ConfigError> {
    for d in dirs {
        let p = Path::new(d.trim());
        if !p.is_absolute() {
            return Err(invalid(origin, key, d, "must be an absolute path"));
        }
        if !p.is_dir() {
            return Err(invalid(
                origin,
                key,
                d,
                "no such directory; create it or remove it from the list",
            ));
        }
        if p.canonicalize().is_ok_and(|c| c == Path::new("/")) {
            return Err(invalid(
                origin,
                key,
                d,
                "/ cannot be writable in the sandbox; name a project directory, or use sandbox.mode = \"full-access\"",
            ));
        }
    }
    Ok(())
}

/// Checks the workspace once the start directory is known: it must exist and
/// must not be `/` (everything would be writable).
pub(crate) fn check_workspace(c: &SandboxConfig, cwd: &Path) -> Result<(), ConfigError> {
    if c.mode() == SandboxMode::FullAccess {
        return Ok(());
    }
    let (key, origin) = if c.workspace.trim().is_empty() {
        ("sandbox.workspace", "the directory navi was started in")
    } else {
        ("sandbox.workspace", "the config")
    };
    let dir = c.workspace_dir(cwd);
    let shown = dir.display().to_string();
    let Ok(real) = dir.canonicalize() else {
        return Err(invalid(origin, key, &shown, "no such directory"));
    };
    if real == Path::new("/") {
        return Err(invalid(
            origin,
            key,
            &shown,
            "the sandbox cannot use / as the workspace (every file would be writable); start navi in a project directory, set sandbox.workspace, or use --sandbox full-access",
        ));
    }
    Ok(())
}

/// What the kernel offers, probed once.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Support {
    /// The Landlock ABI version (0 = none).
    pub(crate) landlock_abi: i32,
    /// The ABI was set by `NAVI_SANDBOX_FAKE_ABI` (tests only).
    pub(crate) faked: bool,
}

impl Support {
    pub(crate) fn available(&self) -> bool {
        self.landlock_abi >= 1
    }
}

/// The kernel's Landlock ABI (cached). `NAVI_SANDBOX_FAKE_ABI=N` makes navi
/// believe it is `N` — for tests of old kernels only.
pub(crate) fn support() -> Support {
    static SUPPORT: OnceLock<Support> = OnceLock::new();
    *SUPPORT.get_or_init(|| {
        if let Some(n) = std::env::var("NAVI_SANDBOX_FAKE_ABI")
            .ok()
            .and_then(|v| v.trim().parse::<i32>().ok())
        {
            return Support {
                landlock_abi: n.max(0),
                faked: true,
            };
        }
        Support {
            landlock_abi: enforce::landlock_abi(),
            faked: false,
        }
    })
}

/// The one warning to print at start (and in `navi config check`) when the
/// configured sandbox cannot be enforced here.
pub fn startup_warning(c: &SandboxConfig) -> Option<String> {
    if c.mode() == SandboxMode::FullAccess {
        return None;
    }
    let s = support();
    if s.available() {
        return None;
    }
    let fake = if s.faked {
        " (NAVI_SANDBOX_FAKE_ABI is set)"
    } else {
        ""
    };
    Some(if c.is_required() {
        format!(
            "this kernel has no Landlock{fake}: the sandbox is required, so terminal, code_exec, user tools and stdio MCP servers will refuse to run"
        )
    } else {
        format!(
            "this kernel has no Landlock{fake}: the {} sandbox cannot be enforced; tools run behind the allow-list and approvals only (use --sandbox required to refuse instead)",
            c.mode().as_str()
        )
    })
}

/// `sandbox: workspace-write` / `sandbox: off (no kernel support)` for the
/// status line and `/approvals`.
pub fn describe(c: &SandboxConfig) -> String {
    let mode = c.mode();
    if mode == SandboxMode::FullAccess {
        return "full-access (no sandbox)".into();
    }
    if !support().available() {
        return if c.is_required() {
            format!("{} required, unavailable: tools refused", mode.as_str())
        } else {
            format!("{} not enforced (no Landlock)", mode.as_str())
        };
    }
    let net = if c.network { ", network on" } else { "" };
    format!("{}{net}", mode.as_str())
}

/// The `sandbox` argument of `terminal`/`code_exec`: absent = the configured
/// sandbox; `"network"` = sandboxed with the network; `"off"` = outside it.
pub(crate) fn escalation(arg: Option<&str>) -> Result<policy::Escalation, String> {
    match arg.map(|s| s.trim().to_ascii_lowercase()).as_deref() {
        None | Some("") | Some("default") | Some("on") => Ok(policy::Escalation::None),
        Some("network") => Ok(policy::Escalation::Network),
        Some("off") => Ok(policy::Escalation::Unsandboxed),
        Some(other) => Err(format!(
            "sandbox: unknown value {other:?}; leave it out, or use \"network\" or \"off\" after a sandbox denial"
        )),
    }
}

/// The approval question for a call, saying plainly when it asks to leave
/// the sandbox or to use the network.
pub(crate) fn escalation_question(what: &str, arg: Option<&str>) -> String {
    match escalation(arg) {
        Ok(policy::Escalation::Unsandboxed) => {
            format!("OUTSIDE THE SANDBOX (no limit on writes or network): {what}")
        }
        Ok(policy::Escalation::Network) => {
            format!("WITH NETWORK ACCESS (otherwise sandboxed): {what}")
        }
        _ => what.to_string(),
    }
}

/// The approval key of a call that asks to leave the sandbox or use the
/// network (`terminal sandbox=off`), `None` for an ordinary call. Such calls
/// are always asked about, whatever the approval mode.
pub(crate) fn escalation_key(tool: &str, args: &serde_json::Value) -> Option<String> {
    let arg = args.get("sandbox").and_then(|v| v.as_str());
    match escalation(arg) {
        Ok(policy::Escalation::Unsandboxed) => Some(format!("{tool} sandbox=off")),
        Ok(policy::Escalation::Network) => Some(format!("{tool} sandbox=network")),
        _ => None,
    }
}

/// Whether commands run confined to the workspace here: a sandbox mode
/// other than full-access, and a kernel that enforces it.
pub(crate) fn confines_commands(c: &SandboxConfig) -> bool {
    c.mode() != SandboxMode::FullAccess && support().available()
}

/// The mode in a word or two for the status line: `workspace-write`,
/// `read-only`, `full-access`, with `!` when the kernel cannot enforce it.
pub fn short_label(c: &SandboxConfig) -> String {
    let mode = c.mode();
    let mut s = mode.as_str().to_string();
    if mode != SandboxMode::FullAccess {
        if c.network {
            s.push_str("+net");
        }
        if !support().available() {
            s.push_str(" (not enforced)");
        }
    }
    s
}
