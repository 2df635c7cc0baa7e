//! The sandbox's own view of the file system: a private mount namespace in
//! which every mount is read-only except the writable roots, the read-only
//! carve-outs inside those roots (git metadata, navi's configuration and
//! data) are read-only bind mounts, and `/dev/pts` is a fresh instance.
//!
//! Why mounts and not only Landlock: Landlock decides who may write or make
//! files, but not who may change metadata (`chmod`, `chown`, `utime`,
//! extended attributes, `chattr`); a read-only mount refuses all of those to
//! everyone, root included, while the writable roots stay what they were. A
//! bind mount also carves a read-only hole at any depth of a writable root,
//! which Landlock (rules only add rights) cannot.
//!
//! Steps in the child ([`apply`]), all before Landlock:
//! 1. a new mount namespace (root: `CLONE_NEWNS`; an ordinary user: with a
//!    user namespace mapping the user to itself), mounts made private;
//! 2. a detached copy of each writable root (`open_tree`), marked nodev and
//!    nosuid (no device node or set-uid file there works);
//! 3. every mount made read-only (`mount_setattr(AT_RECURSIVE)`);
//! 4. the copies attached over their roots, parents first;
//! 5. the directories between a root and a protected path of navi's
//!    ([`super::protected`]) bound onto themselves, so they are mount points
//!    that cannot be renamed or removed (a parent swapped away would let a
//!    new config take the old one's place; a `.git` put in the place of a
//!    moved one is new, and neutralised after the call);
//! 6. each carve-out bound onto itself and made read-only (writable roots
//!    inside a carve-out, attached in 4, stay writable);
//! 7. a new `devpts` instance on `/dev/pts` (the user's terminals vanish;
//!    ptys made in the sandbox work);
//! 8. the working directory entered again through the new mounts.
//!
//! Needs Linux 5.12 (`mount_setattr`). Where any step but 7 is refused,
//! [`super::enforce`] falls back to Landlock alone, granting rights entry by
//! entry around the carve-outs, with metadata changes refused by seccomp.
#![allow(unsafe_code)]

use std::ffi::{CStr, CString};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

const OPEN_TREE_CLONE: libc::c_uint = 1;
const AT_RECURSIVE: libc::c_uint = 0x8000;
const MOVE_MOUNT_F_EMPTY_PATH: libc::c_uint = 0x4;
const MOUNT_ATTR_RDONLY: u64 = 0x1;
const MOUNT_ATTR_NOSUID: u64 = 0x2;
const MOUNT_ATTR_NODEV: u64 = 0x4;

/// `struct mount_attr` (MOUNT_ATTR_SIZE_VER0).
#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

/// What the child does before Landlock, prepared in navi (no allocation in
/// the child).
pub(crate) struct MountPlan {
    /// Writable roots, parents before children.
    writable: Vec<CString>,
    /// One slot per writable root for its detached copy.
    fds: Vec<libc::c_int>,
    /// Directories between a writable root and a protected path.
    pinned: Vec<CString>,
    /// Carve-outs, bound read-only.
    read_only: Vec<CString>,
    /// `uid_map` / `gid_map` lines for a user namespace (not root).
    maps: Option<(CString, CString)>,
    /// The child's working directory, entered again through the new mounts.
    cwd: Option<CString>,
}

/// What [`apply`] managed beyond the required steps.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Applied {
    /// `/dev/pts` is the sandbox's own instance.
    pub(crate) private_pts: bool,
}

fn c_path(p: &Path) -> Option<CString> {
    CString::new(p.as_os_str().as_bytes()).ok()
}

/// The directories strictly between a writable root and each of `targets`
/// in it, shallow first (skipping those already under a carve-out).
fn pins(writable: &[PathBuf], read_only: &[PathBuf], targets: &[PathBuf]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for ro in targets {
        let Some(root) = writable
            .iter()
            .filter(|w| ro.starts_with(w) && ro != *w)
            .max_by_key(|w| w.components().count())
        else {
            continue;
        };
        let mut a = ro.parent();
        while let Some(dir) = a {
            if dir == root.as_path() || !dir.starts_with(root) {
                break;
            }
            // Already read-only under a carve-out of the same root.
            let inside_carve = read_only
                .iter()
                .any(|c| dir.starts_with(c) && c.starts_with(root) && c != root);
            if !inside_carve && !out.iter().any(|p| p == dir) {
                out.push(dir.to_path_buf());
            }
            a = dir.parent();
        }
    }
    out.sort_by_key(|p| p.components().count());
    out
}

impl MountPlan {
    pub(crate) fn new(policy: &super::Policy, cwd: Option<&Path>) -> Option<MountPlan> {
        let mut roots = policy.writable.clone();
        roots.sort_by_key(|p| p.components().count());
        let pinned = pins(&roots, &policy.read_only, &policy.keep_in_place);
        let writable: Vec<CString> = roots.iter().filter_map(|p| c_path(p)).collect();
        // SAFETY: geteuid/getegid have no preconditions and cannot fail.
        let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
        let maps = (uid != 0).then(|| {
            (
                CString::new(format!("{uid} {uid} 1")).unwrap_or_default(),
                CString::new(format!("{gid} {gid} 1")).unwrap_or_default(),
            )
        });
        Some(MountPlan {
            fds: vec![-1; writable.len()],
            writable,
            pinned: pinned.iter().filter_map(|p| c_path(p)).collect(),
            read_only: policy.read_only.iter().filter_map(|p| c_path(p)).collect(),
            maps,
            cwd: cwd.and_then(c_path),
        })
    }
}

fn check(r: libc::c_long) -> io::Result<()> {
    if r >= 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Writes `data` to a /proc file (in the child; no allocation).
fn write_proc(path: &CStr, data: &[u8]) -> io::Result<()> {
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

fn bind(path: &CStr) -> io::Result<()> {
    // SAFETY: mount with NUL-terminated paths and null fs type/data.
    check(unsafe {
        libc::mount(
            path.as_ptr(),
            path.as_ptr(),
            std::ptr::null(),
            libc::MS_BIND | libc::MS_REC,
            std::ptr::null(),
        )
    } as libc::c_long)
}

/// `Ok(true)` when done, `Ok(false)` when the path no longer exists.
fn gone_is_fine(r: io::Result<()>) -> io::Result<bool> {
    match r {
        Ok(()) => Ok(true),
        Err(e) if e.raw_os_error() == Some(libc::ENOENT) => Ok(false),
        Err(e) => Err(e),
    }
}

/// `mount_setattr(dirfd, path, flags, {attr_set: set})`.
fn set_attr(dirfd: libc::c_int, path: &CStr, flags: libc::c_uint, set: u64) -> io::Result<()> {
    let attr = MountAttr {
        attr_set: set,
        attr_clr: 0,
        propagation: 0,
        userns_fd: 0,
    };
    // SAFETY: a NUL-terminated path and a live struct of the size passed.
    check(unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            dirfd,
            path.as_ptr(),
            flags,
            &attr as *const MountAttr,
            std::mem::size_of::<MountAttr>(),
        )
    })
}

fn enter_namespace(maps: &Option<(CString, CString)>) -> io::Result<()> {
    // SAFETY: unshare/prctl only change this (forked, single-threaded)
    // process.
    unsafe {
        match maps {
            Some((uid_map, gid_map)) => {
                // navi is non-dumpable, which would make /proc/self/*_map
                // root's; the child may make itself dumpable again.
                libc::prctl(libc::PR_SET_DUMPABLE, 1, 0, 0, 0);
                check(libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNS) as libc::c_long)?;
                let _ = write_proc(c"/proc/self/setgroups", b"deny");
                write_proc(c"/proc/self/uid_map", uid_map.as_bytes())?;
                write_proc(c"/proc/self/gid_map", gid_map.as_bytes())?;
            }
            None => check(libc::unshare(libc::CLONE_NEWNS) as libc::c_long)?,
        }
        check(libc::mount(
            std::ptr::null(),
            c"/".as_ptr(),
            std::ptr::null(),
            libc::MS_REC | libc::MS_PRIVATE,
            std::ptr::null(),
        ) as libc::c_long)
    }
}

/// Runs in the child: the namespace and the mounts (see the module doc).
/// `Err` when a required step is refused.
pub(crate) fn apply(plan: &mut MountPlan) -> io::Result<Applied> {
    enter_namespace(&plan.maps)?;
    for (w, slot) in plan.writable.iter().zip(plan.fds.iter_mut()) {
        // SAFETY: open_tree on a NUL-terminated path; the fd is ours.
        let fd = unsafe {
            libc::syscall(
                libc::SYS_open_tree,
                libc::AT_FDCWD,
                w.as_ptr(),
                OPEN_TREE_CLONE | AT_RECURSIVE | libc::O_CLOEXEC as libc::c_uint,
            )
        };
        check(fd)?;
        *slot = fd as libc::c_int;
        set_attr(
            *slot,
            c"",
            libc::AT_EMPTY_PATH as libc::c_uint | AT_RECURSIVE,
            MOUNT_ATTR_NODEV | MOUNT_ATTR_NOSUID,
        )?;
    }
    set_attr(libc::AT_FDCWD, c"/", AT_RECURSIVE, MOUNT_ATTR_RDONLY)?;
    for (w, fd) in plan.writable.iter().zip(plan.fds.iter()) {
        // SAFETY: move_mount of the detached tree `fd` onto a NUL-terminated
        // path; close releases our fd.
        let r = unsafe {
            let r = libc::syscall(
                libc::SYS_move_mount,
                *fd,
                c"".as_ptr(),
                libc::AT_FDCWD,
                w.as_ptr(),
                MOVE_MOUNT_F_EMPTY_PATH,
            );
            libc::close(*fd);
            r
        };
        check(r)?;
    }
    // A path removed since the policy was built has nothing to protect
    // (a new `.git` in its place is neutralised after the call).
    for p in &plan.pinned {
        gone_is_fine(bind(p))?;
    }
    for p in &plan.read_only {
        if gone_is_fine(bind(p))? {
            set_attr(libc::AT_FDCWD, p, 0, MOUNT_ATTR_RDONLY)?;
        }
    }
    // SAFETY: mount of a new devpts instance with constant strings.
    let private_pts = unsafe {
        libc::mount(
            c"devpts".as_ptr(),
            c"/dev/pts".as_ptr(),
            c"devpts".as_ptr(),
            libc::MS_NOSUID | libc::MS_NOEXEC,
            c"newinstance,ptmxmode=0666,mode=0620".as_ptr().cast(),
        ) == 0
    };
    if let Some(cwd) = &plan.cwd {
        // SAFETY: chdir on a NUL-terminated path.
        check(unsafe { libc::chdir(cwd.as_ptr()) } as libc::c_long)?;
    }
    Ok(Applied { private_pts })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn pins_are_the_directories_between_a_root_and_a_carve_out() {
        let w = vec![PathBuf::from("/w"), PathBuf::from("/w/d/s/tmp")];
        let ro = vec![
            PathBuf::from("/w/a/b/.git"),
            PathBuf::from("/w/.git"),
            PathBuf::from("/w/d/s"),
            PathBuf::from("/w/d/s/tmp/x/.git"),
        ];
        assert_eq!(
            pins(&w, &ro, &ro),
            vec![
                PathBuf::from("/w/a"),
                PathBuf::from("/w/d"),
                PathBuf::from("/w/a/b"),
                PathBuf::from("/w/d/s/tmp/x"),
            ]
        );
        assert_eq!(
            pins(&w, &ro, &[PathBuf::from("/w/d/s")]),
            vec![PathBuf::from("/w/d")]
        );
    }
}
