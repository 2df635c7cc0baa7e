//! Applying a [`Policy`] to a child: the Landlock ruleset, the mount plan
//! and the seccomp program are built in navi (they allocate and open files),
//! and only installed in the child between fork and exec, in this order:
//! the mount namespace ([`super::mounts`]), `no_new_privs`, Landlock, the
//! seccomp program ([`super::seccomp`]), and last the capabilities
//! ([`super::caps`]) — no allocation on the success path.
//!
//! With the mount namespace, the writable roots are granted whole and the
//! carve-outs are read-only mounts. Without it (a kernel older than 5.12, a
//! container that refuses namespaces), Landlock alone keeps writes inside
//! the roots: it can only add rights down a hierarchy, never take them
//! back, so a writable root that holds a carve-out is granted entry by entry
//! around it (existing files and subdirectories stay writable, but no new
//! entry can be made in a directory on the way to a carve-out); metadata
//! changes are then refused everywhere by seccomp. Symbolic links on the way
//! are never granted (they could point anywhere). Device nodes can be made
//! nowhere (no Landlock right for them, seccomp, no CAP_MKNOD, nodev mounts).
#![allow(unsafe_code)]

use super::Policy;
use landlock::{
    ABI, Access, AccessFs, BitFlags, PathBeneath, PathFd, Ruleset, RulesetAttr, RulesetCreated,
    RulesetCreatedAttr, RulesetStatus, Scope,
};
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use tokio::process::Command;

/// The Landlock ABI the rules are written for (newer kernels enforce all of
/// it, older ones what they know: best effort).
const TARGET_ABI: ABI = ABI::V6;

/// Device files every program expects to write or to use as a terminal
/// (`/dev/pts` is added in the child, and only when it is the sandbox's own
/// instance: the user's terminals must stay out of reach).
const DEVICES: [&str; 6] = [
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/tty",
    "/dev/ptmx",
    "/dev/urandom",
];

/// Most directory levels walked around a carve-out.
const MAX_DEPTH: usize = 8;

/// Makes navi's own process non-dumpable, so a process of the same user
/// (every tool child) can no longer read `/proc/<navi>/environ`, `mem` or
/// attach with ptrace: navi's API keys stay in navi. Children are dumpable
/// again after their `exec`. Core dumps of navi itself are off as a result.
pub(crate) fn keep_environ_private() {
    // SAFETY: PR_SET_DUMPABLE only changes a flag of this process.
    unsafe {
        libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0);
    }
}

/// The kernel's Landlock ABI version, 0 when it has none.
pub(crate) fn landlock_abi() -> i32 {
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
    // SAFETY: with a null attribute pointer, size 0 and the VERSION flag the
    // call only returns the ABI number (or -1 with errno); nothing is written.
    let v = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    i32::try_from(v).unwrap_or(0).max(0)
}

fn add(
    rs: RulesetCreated,
    path: &Path,
    access: BitFlags<AccessFs>,
) -> Result<RulesetCreated, String> {
    let fd = match PathFd::new(path) {
        Ok(fd) => fd,
        // A path that vanished meanwhile simply gets no rule.
        Err(_) => return Ok(rs),
    };
    rs.add_rule(PathBeneath::new(fd, access))
        .map_err(|e| format!("sandbox rule for {}: {e}", path.display()))
}

/// What a writable root grants: everything but making device nodes.
fn writable_access() -> BitFlags<AccessFs> {
    let mut all = AccessFs::from_all(TARGET_ABI);
    all.remove(AccessFs::MakeChar | AccessFs::MakeBlock);
    all
}

/// Grants `root` fully, or entry by entry around the carve-outs under it.
fn grant(
    mut rs: RulesetCreated,
    root: &Path,
    carve: &[PathBuf],
    depth: usize,
) -> Result<RulesetCreated, String> {
    if carve.iter().any(|c| c == root) {
        return Ok(rs);
    }
    if !carve.iter().any(|c| c.starts_with(root)) {
        return add(rs, root, writable_access());
    }
    if depth >= MAX_DEPTH {
        return Ok(rs);
    }
    let Ok(entries) = std::fs::read_dir(root) else {
        return Ok(rs);
    };
    for entry in entries.flatten() {
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let path = entry.path();
        if kind.is_dir() {
            rs = grant(rs, &path, carve, depth + 1)?;
        } else if kind.is_file() && !carve.contains(&path) {
            rs = add(rs, &path, AccessFs::from_file(TARGET_ABI))?;
        }
    }
    Ok(rs)
}

/// `carve_by_mounts`: the carve-outs are read-only bind mounts (see
/// [`super::mounts`]), so the writable roots are granted whole. Processes
/// outside the sandbox (navi, the user's programs) cannot be signalled.
fn ruleset(policy: &Policy, carve_by_mounts: bool) -> Result<RulesetCreated, String> {
    let err = |e: landlock::RulesetError| format!("cannot build the Landlock ruleset: {e}");
    let mut rs = Ruleset::default()
        .handle_access(AccessFs::from_all(TARGET_ABI))
        .map_err(err)?
        .scope(Scope::Signal)
        .map_err(err)?
        .create()
        .map_err(err)?;
    rs = add(rs, Path::new("/"), AccessFs::from_read(TARGET_ABI))?;
    for dev in DEVICES {
        rs = add(rs, Path::new(dev), AccessFs::from_file(TARGET_ABI))?;
    }
    let carve: &[PathBuf] = if carve_by_mounts {
        &[]
    } else {
        &policy.read_only
    };
    for root in &policy.writable {
        rs = grant(rs, root, carve, 0)?;
    }
    Ok(rs)
}

/// `struct landlock_path_beneath_attr`.
#[repr(C, packed)]
struct PathBeneathAttr {
    allowed_access: u64,
    parent_fd: i32,
}

/// In the child: grants terminal access under the sandbox's own `/dev/pts`
/// (mounted after the ruleset was built). Best effort; no allocation.
fn grant_private_pts(ruleset_fd: libc::c_int, access: u64) {
    // SAFETY: open/close on a constant path; landlock_add_rule reads a live
    // packed struct of the kernel's layout.
    unsafe {
        let fd = libc::open(c"/dev/pts".as_ptr(), libc::O_PATH | libc::O_CLOEXEC);
        if fd < 0 {
            return;
        }
        let attr = PathBeneathAttr {
            allowed_access: access,
            parent_fd: fd,
        };
        libc::syscall(
            libc::SYS_landlock_add_rule,
            ruleset_fd,
            1 as libc::c_int, // LANDLOCK_RULE_PATH_BENEATH
            &attr as *const PathBeneathAttr,
            0 as libc::c_uint,
        );
        libc::close(fd);
    }
}

/// Whether the mount namespace of [`super::mounts`] works here (probed once
/// with a child that makes a temporary dir writable and a subdir of it
/// read-only).
fn mounts_work() -> bool {
    static WORKS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *WORKS.get_or_init(|| {
        // For tests of machines without mount namespaces only.
        if std::env::var_os("NAVI_SANDBOX_NO_MOUNTS").is_some_and(|v| v == "1") {
            return false;
        }
        let dir = std::env::temp_dir().join(format!("navi-mount-probe-{}", std::process::id()));
        let sub = dir.join("ro");
        if std::fs::create_dir_all(&sub).is_err() {
            return false;
        }
        let probe = Policy {
            writable: vec![dir.clone()],
            read_only: vec![sub],
            ..Default::default()
        };
        let ok = match super::mounts::MountPlan::new(&probe, None) {
            Some(mut plan) => {
                let mut cmd = std::process::Command::new("/bin/sh");
                cmd.args(["-c", "exit 0"])
                    .stdin(std::process::Stdio::null())
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::null());
                // SAFETY: as in `attach`: the closure only makes system
                // calls on data built before the fork.
                unsafe {
                    std::os::unix::process::CommandExt::pre_exec(&mut cmd, move || {
                        super::mounts::apply(&mut plan).map(|_| ())
                    });
                }
                cmd.status().is_ok_and(|s| s.success())
            }
            None => false,
        };
        let _ = std::fs::remove_dir_all(&dir);
        if !ok {
            tracing::warn!(
                "sandbox: mount namespaces are not available here; Landlock alone keeps writes inside the workspace and metadata changes are refused everywhere"
            );
        }
        ok
    })
}

/// Why tools refuse to run under a required sandbox the kernel lacks.
fn refusal() -> io::Error {
    io::Error::new(
        io::ErrorKind::PermissionDenied,
        "the sandbox is required ([sandbox] required / --sandbox required) but this kernel has no Landlock, so no tool process is started; run navi where Landlock works, or choose another --sandbox mode",
    )
}

/// The child's working directory as navi will set it.
fn child_cwd(cmd: &Command) -> Option<PathBuf> {
    cmd.as_std()
        .get_current_dir()
        .map(|d| {
            crate::tools::paths::absolute(
                &d.to_string_lossy(),
                &std::env::current_dir().unwrap_or_default(),
            )
        })
        .or_else(|| std::env::current_dir().ok())
}

/// Prepares `cmd` to start under `policy`: `TMPDIR` points at the private
/// temporary directory, and the mounts, Landlock, seccomp and the dropped
/// capabilities are installed in the child just before it executes (see
/// the module doc). Without kernel support the child starts unsandboxed
/// (navi warned at start), or not at all when the policy is required.
/// Register it after every other `pre_exec` step.
pub(crate) fn attach(cmd: &mut Command, policy: &Policy) -> io::Result<()> {
    if let Some(tmp) = &policy.tmp_dir {
        for k in ["TMPDIR", "TMP", "TEMP"] {
            cmd.env(k, tmp);
        }
    }
    if !super::support().available() {
        return if policy.required {
            Err(refusal())
        } else {
            Ok(())
        };
    }
    let cwd = child_cwd(cmd);
    let mut plan = if mounts_work() {
        super::mounts::MountPlan::new(policy, cwd.as_deref())
    } else {
        None
    };
    let by_mounts = plan.is_some();
    let rules = ruleset(policy, by_mounts).map_err(io::Error::other)?;
    let second: Option<OwnedFd> = rules.try_clone()?.into();
    let pts_access = (AccessFs::from_file(ABI::from(super::support().landlock_abi))
        & AccessFs::from_file(TARGET_ABI))
    .bits();
    let mut rules = Some(rules);
    let filter = super::seccomp::sandbox(super::seccomp::Spec {
        network: policy.network,
        metadata: !by_mounts,
    })
    .map_err(io::Error::other)?;
    let last_cap = super::caps::last_cap();
    let required = policy.required;
    let install = move || -> io::Result<()> {
        if let Some(plan) = plan.as_mut() {
            let applied = super::mounts::apply(plan)?;
            if applied.private_pts
                && let Some(fd) = &second
            {
                grant_private_pts(fd.as_raw_fd(), pts_access);
            }
        }
        if let Some(rs) = rules.take() {
            let status = rs
                .restrict_self()
                .map_err(|e| io::Error::other(format!("Landlock: {e}")))?;
            if required && status.ruleset == RulesetStatus::NotEnforced {
                return Err(refusal());
            }
        }
        // SAFETY: PR_SET_NO_NEW_PRIVS only sets a flag on this process
        // (Landlock set it already; seccomp needs it without CAP_SYS_ADMIN).
        if unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } != 0 {
            return Err(io::Error::last_os_error());
        }
        seccompiler::apply_filter(&filter)
            .map_err(|e| io::Error::other(format!("seccomp: {e}")))?;
        super::caps::drop_all(last_cap)
    };
    // SAFETY: runs in the forked child before exec. On the success path it
    // makes only system calls (unshare, mount, open_tree, landlock, prctl,
    // seccomp, capset) on data built before the fork (no allocation, no
    // locks); it allocates only to report an error, after which the child
    // exits.
    unsafe {
        cmd.pre_exec(install);
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn a_ruleset_builds_around_carve_outs() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join(".git/hooks")).unwrap();
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::write(root.join("README"), "x").unwrap();
        let policy = Policy {
            writable: vec![root.clone()],
            read_only: vec![root.join(".git")],
            ..Default::default()
        };
        if super::super::support().available() {
            ruleset(&policy, false).unwrap();
            ruleset(&policy, true).unwrap();
        }
        assert!(!writable_access().contains(AccessFs::MakeBlock));
        assert!(writable_access().contains(AccessFs::MakeFifo));
    }
}
