//! Applying a [`Policy`] to a child: the Landlock ruleset and the seccomp
//! program are built in navi (they allocate and open files), and only
//! installed in the child between fork and exec (two system calls each, no
//! allocation on the success path).
//!
//! Landlock can only add rights down a hierarchy, never take them back, so a
//! writable root that holds a read-only carve-out (`.git`, navi's dirs) is
//! granted entry by entry around the carve-out: its existing files and
//! subdirectories stay writable, but no new entry can be made in a
//! directory on the way to a carve-out (for the workspace: in its top
//! directory when `.git` sits there). Symbolic links on the way are never
//! granted (they could point anywhere).
#![allow(unsafe_code)]

use super::Policy;
use landlock::{
    ABI, Access, AccessFs, BitFlags, PathBeneath, PathFd, Ruleset, RulesetAttr, RulesetCreated,
    RulesetCreatedAttr, RulesetStatus,
};
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};
use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};
use tokio::process::Command;

/// The Landlock ABI the rules are written for (newer kernels enforce all of
/// it, older ones what they know: best effort).
const TARGET_ABI: ABI = ABI::V5;

/// Device files every program expects to write or to use as a terminal.
const DEVICES: [&str; 7] = [
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/tty",
    "/dev/ptmx",
    "/dev/pts",
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

/// Grants `root` fully, or entry by entry around the carve-outs under it.
fn grant(
    mut rs: RulesetCreated,
    root: &Path,
    carve: &[PathBuf],
    depth: usize,
) -> Result<RulesetCreated, String> {
    let all = AccessFs::from_all(TARGET_ABI);
    if carve.iter().any(|c| c == root) {
        return Ok(rs);
    }
    if !carve.iter().any(|c| c.starts_with(root)) {
        return add(rs, root, all);
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
/// [`super::mounts`]), so the writable roots are granted whole.
fn ruleset(policy: &Policy, carve_by_mounts: bool) -> Result<RulesetCreated, String> {
    let err = |e: landlock::RulesetError| format!("cannot build the Landlock ruleset: {e}");
    let mut rs = Ruleset::default()
        .handle_access(AccessFs::from_all(TARGET_ABI))
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

/// The seccomp program that refuses network sockets (every family but
/// `AF_UNIX`) and io_uring (which can open sockets without `socket()`).
fn network_filter() -> Result<BpfProgram, String> {
    let err = |e: seccompiler::BackendError| format!("cannot build the seccomp filter: {e}");
    let arch = TargetArch::try_from(std::env::consts::ARCH)
        .map_err(|e| format!("no seccomp filter for this CPU: {e}"))?;
    let not_unix = SeccompCondition::new(
        0,
        SeccompCmpArgLen::Dword,
        SeccompCmpOp::Ne,
        libc::AF_UNIX as u64,
    )
    .map_err(err)?;
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    rules.insert(
        libc::SYS_socket,
        vec![SeccompRule::new(vec![not_unix]).map_err(err)?],
    );
    rules.insert(libc::SYS_io_uring_setup, Vec::new());
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )
    .map_err(err)?;
    filter
        .try_into()
        .map_err(|e: seccompiler::BackendError| err(e))
}

/// Whether read-only bind mounts in a private mount namespace work here
/// (probed once with a child that makes its own temporary dir read-only).
fn mounts_work() -> bool {
    static WORKS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *WORKS.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("navi-mount-probe-{}", std::process::id()));
        if std::fs::create_dir_all(&dir).is_err() {
            return false;
        }
        let probe = Policy {
            writable: vec![dir.clone()],
            read_only: vec![dir.clone()],
            ..Default::default()
        };
        let Some(plan) = super::mounts::MountPlan::new(&probe, None) else {
            let _ = std::fs::remove_dir(&dir);
            return false;
        };
        let mut cmd = std::process::Command::new("/bin/sh");
        cmd.args(["-c", "exit 0"])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        // SAFETY: as in `attach`: the closure only makes system calls on
        // data built before the fork.
        unsafe {
            std::os::unix::process::CommandExt::pre_exec(&mut cmd, move || {
                super::mounts::apply(&plan)
            });
        }
        let ok = cmd.status().is_ok_and(|s| s.success());
        let _ = std::fs::remove_dir(&dir);
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

/// Prepares `cmd` to start under `policy`: `TMPDIR` points at the private
/// temporary directory, and the Landlock ruleset and the seccomp filter are
/// installed in the child just before it executes. Without kernel support
/// the child starts unsandboxed (navi warned at start), or not at all when
/// the policy is required.
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
    let cwd = cmd
        .as_std()
        .get_current_dir()
        .map(|d| {
            crate::tools::paths::absolute(
                &d.to_string_lossy(),
                &std::env::current_dir().unwrap_or_default(),
            )
        })
        .or_else(|| std::env::current_dir().ok());
    let plan = if mounts_work() {
        super::mounts::MountPlan::new(policy, cwd.as_deref())
    } else {
        None
    };
    let mut rules = Some(ruleset(policy, plan.is_some()).map_err(io::Error::other)?);
    let filter = if policy.network {
        None
    } else {
        Some(network_filter().map_err(io::Error::other)?)
    };
    let required = policy.required;
    let install = move || -> io::Result<()> {
        if let Some(plan) = &plan {
            super::mounts::apply(plan)?;
        }
        if let Some(rs) = rules.take() {
            let status = rs
                .restrict_self()
                .map_err(|e| io::Error::other(format!("Landlock: {e}")))?;
            if required && status.ruleset == RulesetStatus::NotEnforced {
                return Err(refusal());
            }
        }
        if let Some(prog) = &filter {
            // SAFETY: PR_SET_NO_NEW_PRIVS only sets a flag on this process
            // (seccomp needs it without CAP_SYS_ADMIN).
            if unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } != 0 {
                return Err(io::Error::last_os_error());
            }
            seccompiler::apply_filter(prog)
                .map_err(|e| io::Error::other(format!("seccomp: {e}")))?;
        }
        Ok(())
    };
    // SAFETY: runs in the forked child before exec. On the success path it
    // makes only the landlock_restrict_self, prctl and seccomp system calls
    // on data built before the fork (no allocation, no locks); it allocates
    // only to report an error, after which the child exits.
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
    fn the_network_filter_compiles() {
        assert!(!network_filter().unwrap().is_empty());
    }

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
    }
}
