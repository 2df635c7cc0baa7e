//! What one sandboxed child may write: the policy, built in navi before the
//! child is forked.
//!
//! Invariants: every path is absolute and canonical (Landlock and the
//! comparisons below see the same names); the read-only carve-outs (`.git`,
//! the directory a `.git` file's `gitdir:` names and its common dir, navi's
//! config and data directories) win over the writable roots that contain
//! them; the session's own dirs, although under the data directory, stay
//! writable.
use super::{SandboxConfig, SandboxMode};
use crate::tools::ToolEnv;
use std::path::{Path, PathBuf};

/// The rules for one child.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Policy {
    /// Directories (and everything below) the child may change.
    pub(crate) writable: Vec<PathBuf>,
    /// Paths inside `writable` that stay read-only.
    pub(crate) read_only: Vec<PathBuf>,
    /// Whether the child may open network sockets.
    pub(crate) network: bool,
    /// The private temporary directory (also in `writable`), for `TMPDIR`.
    pub(crate) tmp_dir: Option<PathBuf>,
    /// Refuse to start the child when the kernel cannot enforce this.
    pub(crate) required: bool,
}

/// What a tool call asks of the sandbox beyond its defaults.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Escalation {
    /// The configured sandbox.
    #[default]
    None,
    /// The configured sandbox, with the network (approved by the user).
    Network,
    /// No sandbox at all (approved by the user).
    Unsandboxed,
}

fn canonical(p: &Path) -> Option<PathBuf> {
    p.canonicalize().ok()
}

fn push_unique(v: &mut Vec<PathBuf>, p: PathBuf) {
    if !v.contains(&p) {
        v.push(p);
    }
}

/// The read-only parts of a writable root: its `.git`, and where a `.git`
/// file (worktree, submodule) points, with that repository's common dir.
pub(crate) fn git_carve_outs(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let dot_git = root.join(".git");
    let Ok(meta) = std::fs::symlink_metadata(&dot_git) else {
        return out;
    };
    if let Some(p) = canonical(&dot_git) {
        push_unique(&mut out, p);
    }
    if meta.is_file()
        && let Ok(text) = std::fs::read_to_string(&dot_git)
        && let Some(target) = text.lines().find_map(|l| l.strip_prefix("gitdir:"))
    {
        let target = root.join(target.trim());
        if let Some(gitdir) = canonical(&target) {
            if let Ok(common) = std::fs::read_to_string(gitdir.join("commondir"))
                && let Some(c) = canonical(&gitdir.join(common.trim()))
            {
                push_unique(&mut out, c);
            }
            push_unique(&mut out, gitdir);
        }
    }
    out
}

impl Policy {
    /// The policy for a `terminal`/`code_exec`/user-tool child of `tools`'s
    /// session (writable: its work directory); `None` when it runs
    /// unsandboxed (full access, or an approved escalation).
    pub(crate) fn for_tool(
        env: &ToolEnv,
        tools: &crate::tools::SessionTools,
        escalation: Escalation,
    ) -> Result<Option<Policy>, String> {
        let session = tools.id();
        let cfg = &env.config.sandbox;
        let mode = cfg.mode();
        if mode == SandboxMode::FullAccess || escalation == Escalation::Unsandboxed {
            return Ok(None);
        }
        let mut writable = Vec::new();
        let tmp = env
            .session_dir(session, "tmp")
            .map_err(|e| format!("cannot create the session's temporary directory: {e}"))?;
        if mode == SandboxMode::WorkspaceWrite {
            writable.push(cfg.workspace_dir(tools.work_dir()));
            writable.extend(cfg.writable_roots.iter().map(PathBuf::from));
            let files = crate::attach::FilesPolicy::from_config(&env.config, &env.paths)
                .session_dir(session);
            if crate::private_fs::create_dir_all(&files).is_ok() {
                writable.push(files);
            }
        }
        if let Ok(code) = env.session_dir(session, "code") {
            writable.push(code);
        }
        let network = cfg.network || escalation == Escalation::Network;
        Ok(Some(Policy::build(cfg, &env.paths, writable, tmp, network)))
    }

    /// The policy for a stdio MCP server: it may write only its own list
    /// and a private temporary directory; network as configured.
    pub(crate) fn for_mcp(
        cfg: &SandboxConfig,
        paths: &crate::config::Paths,
        name: &str,
        writable: &[String],
        network: bool,
    ) -> Result<Option<Policy>, String> {
        if cfg.mode() == SandboxMode::FullAccess {
            return Ok(None);
        }
        let tmp = paths.data_dir.join("mcp").join(name).join("tmp");
        crate::private_fs::create_dir_all(&tmp)
            .map_err(|e| format!("cannot create {}: {e}", tmp.display()))?;
        let list = writable.iter().map(PathBuf::from).collect();
        Ok(Some(Policy::build(cfg, paths, list, tmp, network)))
    }

    fn build(
        cfg: &SandboxConfig,
        paths: &crate::config::Paths,
        roots: Vec<PathBuf>,
        tmp: PathBuf,
        network: bool,
    ) -> Policy {
        let mut writable = Vec::new();
        for r in roots.iter().chain(std::iter::once(&tmp)) {
            if let Some(c) = canonical(r) {
                push_unique(&mut writable, c);
            }
        }
        let mut read_only = Vec::new();
        for w in &writable {
            for g in git_carve_outs(w) {
                push_unique(&mut read_only, g);
            }
        }
        for own in [&paths.config_dir, &paths.data_dir] {
            if let Some(c) = canonical(own) {
                push_unique(&mut read_only, c);
            }
        }
        // A carve-out matters only inside a writable root. One that holds
        // a writable session dir (the data dir) keeps that dir writable:
        // Landlock grants it by its own rule.
        read_only.retain(|ro| writable.iter().any(|w| ro.starts_with(w) && ro != w));
        Policy {
            writable,
            read_only,
            network,
            tmp_dir: canonical(&tmp),
            required: cfg.is_required(),
        }
    }
}
