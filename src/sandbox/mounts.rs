//! Read-only carve-outs by bind mounts: in a private mount namespace the
//! child gets each carve-out (`.git`, navi's dirs) bind-mounted read-only
//! over itself, so the rest of its writable root stays fully writable —
//! new files at the top of a repository included. Root (CI, containers)
//! needs only `CLONE_NEWNS`; an ordinary user gets it through a user
//! namespace that maps the user to itself. Where the kernel or a container
//! refuses, [`super::enforce`] falls back to granting Landlock rights entry
//! by entry around the carve-outs.
#![allow(unsafe_code)]

use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// What the child does before Landlock, prepared in navi (no allocation in
/// the child).
pub(crate) struct MountPlan {
    /// Writable dirs inside a carve-out, bound first so they stay writable.
    keep_writable: Vec<CString>,
    /// Carve-outs, bound read-only.
    read_only: Vec<CString>,
    /// `uid_map` / `gid_map` lines for a user namespace (not root).
    maps: Option<(CString, CString)>,
    /// The child's working directory, entered again through the new mounts.
    cwd: Option<CString>,
}

fn c_path(p: &Path) -> Option<CString> {
    CString::new(p.as_os_str().as_bytes()).ok()
}

impl MountPlan {
    pub(crate) fn new(policy: &super::Policy, cwd: Option<&Path>) -> Option<MountPlan> {
        if policy.read_only.is_empty() {
            return None;
        }
        let keep_writable = policy
            .writable
            .iter()
            .filter(|w| policy.read_only.iter().any(|ro| w.starts_with(ro)))
            .filter_map(|w| c_path(w))
            .collect();
        // SAFETY: geteuid/getegid have no preconditions and cannot fail.
        let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
        let maps = (uid != 0).then(|| {
            (
                CString::new(format!("{uid} {uid} 1")).unwrap_or_default(),
                CString::new(format!("{gid} {gid} 1")).unwrap_or_default(),
            )
        });
        Some(MountPlan {
            keep_writable,
            read_only: policy.read_only.iter().filter_map(|p| c_path(p)).collect(),
            maps,
            cwd: cwd.and_then(c_path),
        })
    }
}

fn check(r: libc::c_int) -> io::Result<()> {
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Writes `data` to a /proc file (in the child; no allocation).
fn write_proc(path: &std::ffi::CStr, data: &[u8]) -> io::Result<()> {
    // SAFETY: open/write/close on a NUL-terminated path and a live buffer.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        let n = libc::write(fd, data.as_ptr().cast(), data.len());
        libc::close(fd);
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// The flags a read-only remount must keep (a user namespace may not clear
/// locked ones such as nosuid/nodev).
fn kept_flags(path: &CString) -> libc::c_ulong {
    // SAFETY: statvfs fills the zeroed struct for a NUL-terminated path.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(path.as_ptr(), &mut st) } != 0 {
        return 0;
    }
    let pairs = [
        (libc::ST_NOSUID, libc::MS_NOSUID),
        (libc::ST_NODEV, libc::MS_NODEV),
        (libc::ST_NOEXEC, libc::MS_NOEXEC),
        (libc::ST_NOATIME, libc::MS_NOATIME),
        (libc::ST_NODIRATIME, libc::MS_NODIRATIME),
        (libc::ST_RELATIME, libc::MS_RELATIME),
    ];
    pairs
        .iter()
        .filter(|(st_flag, _)| st.f_flag & st_flag != 0)
        .fold(0, |acc, (_, ms)| acc | ms)
}

fn bind(path: &CString) -> io::Result<()> {
    // SAFETY: mount with NUL-terminated paths and null fs type/data.
    check(unsafe {
        libc::mount(
            path.as_ptr(),
            path.as_ptr(),
            std::ptr::null(),
            libc::MS_BIND | libc::MS_REC,
            std::ptr::null(),
        )
    })
}

/// Runs in the child: the namespace and the mounts. `Err` when any step is
/// refused; the caller then uses the entry-by-entry Landlock rules.
pub(crate) fn apply(plan: &MountPlan) -> io::Result<()> {
    // SAFETY: unshare/prctl/mount/chdir only change this (forked,
    // single-threaded) process; all pointers are NUL-terminated strings
    // built before the fork.
    unsafe {
        match &plan.maps {
            Some((uid_map, gid_map)) => {
                // navi is non-dumpable, which would make /proc/self/*_map
                // root's; the child may make itself dumpable again.
                libc::prctl(libc::PR_SET_DUMPABLE, 1, 0, 0, 0);
                check(libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNS))?;
                let _ = write_proc(c"/proc/self/setgroups", b"deny");
                write_proc(c"/proc/self/uid_map", uid_map.as_bytes())?;
                write_proc(c"/proc/self/gid_map", gid_map.as_bytes())?;
            }
            None => check(libc::unshare(libc::CLONE_NEWNS))?,
        }
        check(libc::mount(
            std::ptr::null(),
            c"/".as_ptr(),
            std::ptr::null(),
            libc::MS_REC | libc::MS_PRIVATE,
            std::ptr::null(),
        ))?;
        for p in &plan.keep_writable {
            bind(p)?;
        }
        for p in &plan.read_only {
            bind(p)?;
            check(libc::mount(
                std::ptr::null(),
                p.as_ptr(),
                std::ptr::null(),
                libc::MS_BIND | libc::MS_REMOUNT | libc::MS_RDONLY | kept_flags(p),
                std::ptr::null(),
            ))?;
        }
        if let Some(cwd) = &plan.cwd {
            check(libc::chdir(cwd.as_ptr()))?;
        }
    }
    Ok(())
}
