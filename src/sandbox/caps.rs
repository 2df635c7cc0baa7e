//! Root is not stronger than the user inside the sandbox: a sandboxed child
//! ends its setup by giving up every capability — effective, permitted,
//! inheritable, ambient and the bounding set — after `no_new_privs` is set.
//! Nothing it executes can get one back (a set-uid-root program or a file
//! with capabilities gains nothing; uid 0 executing a program gets the empty
//! bounding set). What is left of root is owning root's files.
//!
//! In a user namespace (an ordinary user's sandbox) the capabilities are
//! those of the namespace, which are dropped the same way.
#![allow(unsafe_code)]

use std::io;

/// `_LINUX_CAPABILITY_VERSION_3`.
const CAP_VERSION_3: u32 = 0x2008_0522;

#[repr(C)]
struct CapHeader {
    version: u32,
    pid: libc::c_int,
}

#[repr(C)]
#[derive(Clone, Copy)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

/// The highest capability number this kernel knows (read before the fork).
pub(crate) fn last_cap() -> u32 {
    static LAST: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    *LAST.get_or_init(|| {
        std::fs::read_to_string("/proc/sys/kernel/cap_last_cap")
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(63)
    })
}

/// Drops every capability of this (forked) process. In the child; no
/// allocation. `no_new_privs` must already be set.
pub(crate) fn drop_all(last: u32) -> io::Result<()> {
    // SAFETY: prctl and capset only change this process's credentials; the
    // structs passed to capset are live and have the kernel's layout.
    unsafe {
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL as libc::c_ulong,
            0,
            0,
            0,
        );
        for cap in 0..=last {
            // EPERM without CAP_SETPCAP (an ordinary user outside a user
            // namespace has nothing to drop); EINVAL past the last one.
            if libc::prctl(libc::PR_CAPBSET_DROP, cap as libc::c_ulong, 0, 0, 0) != 0 {
                let e = io::Error::last_os_error().raw_os_error();
                if e == Some(libc::EINVAL) {
                    break;
                }
            }
        }
        let mut header = CapHeader {
            version: CAP_VERSION_3,
            pid: 0,
        };
        let data = [CapData {
            effective: 0,
            permitted: 0,
            inheritable: 0,
        }; 2];
        if libc::syscall(
            libc::SYS_capset,
            &mut header as *mut CapHeader,
            data.as_ptr(),
        ) != 0
        {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}
