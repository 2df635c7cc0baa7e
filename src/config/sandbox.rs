//! `[sandbox]`: how much the processes tools start may do, as configured,
//! and the checks of those values. What enforces it is `crate::sandbox`.
use super::ConfigError;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

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
    /// Under `navi acp`, run `terminal` commands in the editor's terminal
    /// when it offers one (a sandboxed command runs there under
    /// `navi __sandbox-exec`, in the same sandbox); `false` keeps every
    /// command local.
    pub client_terminals: bool,
}

impl Default for SandboxConfig {
    fn default() -> Self {
        SandboxConfig {
            mode: "workspace-write".into(),
            required: false,
            network: false,
            writable_roots: Vec::new(),
            workspace: String::new(),
            client_terminals: true,
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
            crate::util::paths::absolute(w, cwd)
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
