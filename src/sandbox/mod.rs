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
pub(crate) mod enforce;
pub(crate) mod git_config;
pub(crate) mod git_scan;
pub(crate) mod git_sweep;
pub(crate) mod mounts;
pub(crate) mod policy;
pub(crate) mod protected;
pub(crate) mod seccomp;

use std::sync::OnceLock;

/// The `[sandbox]` settings and their checks are configuration data, kept
/// in `config` (which must not import the sandbox that enforces them).
pub use crate::config::sandbox::{MODE_CHOICES, SandboxConfig, SandboxMode};
pub(crate) use crate::config::sandbox::{check_workspace, validate};

pub(crate) use policy::Policy;

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
