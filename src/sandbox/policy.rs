//! What one sandboxed child may write: the policy, built in navi before the
//! child is forked.
//!
//! Invariants: every path is absolute and canonical (Landlock, the mounts
//! and the comparisons below see the same names); the read-only carve-outs
//! — all git metadata in the writable roots at any depth
//! ([`super::git_scan`]: every `.git`, the git directories `.git` files and
//! links name, their common dirs) and everything navi reads as
//! configuration or keeps as state ([`super::protected`]) — win over the
//! writable roots that contain them; the session's own dirs, although under
//! the data directory, stay writable.
use super::git_scan::{self, DotGit};
use super::{SandboxConfig, SandboxMode};
use std::path::{Path, PathBuf};

/// The rules for one child.
/// (Serialized for `navi __sandbox-exec`; a field left out of such a file
/// takes its default — nothing more writable, no network.)
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
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
    /// The git metadata found before the child started (trusted: it is
    /// read-only to the child); anything else found after the call was made
    /// by it ([`super::git_sweep`]).
    pub(crate) git: Vec<DotGit>,
    /// Device and inode of every git directory in `git`.
    pub(crate) git_dir_ids: Vec<(u64, u64)>,
    /// Directories the git scan does not walk (navi's own, read-only).
    pub(crate) scan_skip: Vec<PathBuf>,
    /// Carve-outs whose parents must not be renamed either (navi's own
    /// configuration and state).
    pub(crate) keep_in_place: Vec<PathBuf>,
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

/// The directories of one tool call's session, gathered by the caller (the
/// tools layer) so the sandbox needs nothing above the config.
#[derive(Clone, Debug)]
pub(crate) struct ToolDirs {
    /// The directory the call works in.
    pub(crate) work_dir: PathBuf,
    /// The session's private temporary directory (created).
    pub(crate) tmp: PathBuf,
    /// The session's attachment files directory, when it exists.
    pub(crate) files: Option<PathBuf>,
    /// The session's `code_exec` directory, when it exists.
    pub(crate) code: Option<PathBuf>,
    /// The resolved `[tools].dir` (user tools), kept read-only.
    pub(crate) tools_dir: PathBuf,
}

/// What else to keep read-only besides navi's own directories.
struct Protect {
    /// The resolved `[tools].dir` (user tools).
    tools_dir: Option<PathBuf>,
    /// The workspace, for [`super::protected::PROJECT_PATHS`].
    workspace: Option<PathBuf>,
}

impl Policy {
    /// Whether a tool child runs sandboxed at all (not under full access,
    /// nor after an approved escalation out of the sandbox).
    pub(crate) fn sandboxes_tools(cfg: &SandboxConfig, escalation: Escalation) -> bool {
        cfg.mode() != SandboxMode::FullAccess && escalation != Escalation::Unsandboxed
    }

    /// The policy for a `terminal`/`code_exec`/user-tool child of a session
    /// with directories `dirs` (writable: its work directory); `None` when
    /// it runs unsandboxed (full access, or an approved escalation).
    pub(crate) fn for_tool(
        cfg: &SandboxConfig,
        paths: &crate::config::Paths,
        dirs: ToolDirs,
        escalation: Escalation,
    ) -> Option<Policy> {
        if !Policy::sandboxes_tools(cfg, escalation) {
            return None;
        }
        let mode = cfg.mode();
        let mut writable = Vec::new();
        if mode == SandboxMode::WorkspaceWrite {
            writable.push(cfg.workspace_dir(&dirs.work_dir));
            writable.extend(cfg.writable_roots.iter().map(PathBuf::from));
            writable.extend(dirs.files);
        }
        writable.extend(dirs.code);
        let network = cfg.network || escalation == Escalation::Network;
        let protect = Protect {
            tools_dir: Some(dirs.tools_dir),
            workspace: Some(cfg.workspace_dir(&dirs.work_dir)),
        };
        Some(Policy::build(
            cfg, paths, writable, dirs.tmp, network, &protect,
        ))
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
        let protect = Protect {
            tools_dir: None,
            workspace: None,
        };
        Ok(Some(Policy::build(
            cfg, paths, list, tmp, network, &protect,
        )))
    }

    fn build(
        cfg: &SandboxConfig,
        paths: &crate::config::Paths,
        roots: Vec<PathBuf>,
        tmp: PathBuf,
        network: bool,
        protect: &Protect,
    ) -> Policy {
        let mut writable = Vec::new();
        for r in roots.iter().chain(std::iter::once(&tmp)) {
            if let Some(c) = canonical(r) {
                push_unique(&mut writable, c);
            }
        }
        let own = super::protected::sources(
            paths,
            protect.tools_dir.as_deref(),
            protect.workspace.as_deref(),
            super::protected::PROJECT_PATHS,
        );
        let scan_skip: Vec<PathBuf> = own.iter().filter(|p| p.is_dir()).cloned().collect();
        let git = git_scan::scan(&writable, &scan_skip);
        let git_dir_ids = git
            .iter()
            .flat_map(|d| &d.git_dirs)
            .filter_map(|g| git_scan::id_of(g))
            .collect();
        let mut read_only = Vec::new();
        for d in &git {
            let is_link = std::fs::symlink_metadata(&d.path).is_ok_and(|m| m.is_symlink());
            if !is_link {
                push_unique(&mut read_only, d.path.clone());
            }
            for g in &d.git_dirs {
                push_unique(&mut read_only, g.clone());
            }
        }
        for p in &own {
            push_unique(&mut read_only, p.clone());
        }
        // A carve-out matters only inside a writable root. One that holds
        // a writable session dir (the data dir) keeps that dir writable (a
        // mount of its own; Landlock grants it by its own rule).
        let inside = |ro: &PathBuf| writable.iter().any(|w| ro.starts_with(w) && ro != w);
        read_only.retain(inside);
        let keep_in_place = own.into_iter().filter(inside).collect();
        Policy {
            writable,
            read_only,
            network,
            tmp_dir: canonical(&tmp),
            required: cfg.is_required(),
            git,
            git_dir_ids,
            scan_skip,
            keep_in_place,
        }
    }
}
