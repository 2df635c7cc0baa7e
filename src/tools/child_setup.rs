//! What every process navi starts for a tool gets between fork and exec,
//! sandboxed or not (`terminal`, `code_exec`, `ssh_exec`, user tools, stdio
//! MCP servers), and how such a process tree is ended.
//!
//! Invariants:
//! - the child starts a new session ([`detach`]): it has no controlling
//!   terminal, so `/dev/tty` cannot be opened and no terminal signal or
//!   input of navi's terminal reaches it; it also leads its own process group
//!   (pgid = sid = pid), which [`kill_tree`] ends;
//! - no file descriptor above 2 survives its `exec`: everything navi
//!   inherited from its own parent or opened itself is marked close-on-exec
//!   in the child; fds 0–2 are the pipes (or /dev/null) navi set up;
//! - as root, even an unsandboxed child cannot push input into a terminal
//!   (TIOCSTI and friends are refused by a seccomp filter; without
//!   CAP_SYS_ADMIN the kernel already refuses them on a terminal that is not
//!   the caller's controlling one);
//! - [`kill_tree`] SIGKILLs the child's process group and every process still
//!   in its session. Sandboxed children cannot call `setsid` (the sandbox's
//!   seccomp filter refuses it), so nothing they start escapes that;
//! - the child announces its session to the watchdog ([`super::watchdog`])
//!   before it executes anything, so the tree dies with navi even when navi
//!   is SIGKILLed.
#![allow(unsafe_code)]

use std::io;
use tokio::process::Command;

/// Highest fd marked close-on-exec where `close_range` is missing.
const FALLBACK_FD_LIMIT: u64 = 1 << 16;

/// Marks every fd from 3 up close-on-exec (in the child; no allocation).
fn cloexec_from_3() -> io::Result<()> {
    // SAFETY: close_range with CLOSE_RANGE_CLOEXEC only sets a flag on this
    // process's descriptors; no memory is passed.
    let r = unsafe {
        libc::syscall(
            libc::SYS_close_range,
            3u32,
            u32::MAX,
            libc::CLOSE_RANGE_CLOEXEC,
        )
    };
    if r == 0 {
        return Ok(());
    }
    // Older kernels (< 5.11): walk the descriptor table.
    // SAFETY: getrlimit fills a zeroed struct; fcntl on any number is safe
    // (EBADF for closed ones).
    unsafe {
        let mut lim: libc::rlimit = std::mem::zeroed();
        let max = if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) == 0 {
            (lim.rlim_cur as u64).min(FALLBACK_FD_LIMIT)
        } else {
            FALLBACK_FD_LIMIT
        };
        for fd in 3..max as libc::c_int {
            let flags = libc::fcntl(fd, libc::F_GETFD);
            if flags >= 0 && flags & libc::FD_CLOEXEC == 0 {
                libc::fcntl(fd, libc::F_SETFD, flags | libc::FD_CLOEXEC);
            }
        }
    }
    Ok(())
}

/// Starts the child in a new session with no controlling terminal and no
/// inherited descriptors above 2, announced to the watchdog (which ends the
/// session if navi dies); as root, with the terminal filter. Use
/// instead of `process_group(0)` (a group leader cannot start a session).
/// Must be the first `pre_exec` step registered.
pub(crate) fn detach(cmd: &mut Command) {
    // SAFETY: geteuid cannot fail.
    let root = unsafe { libc::geteuid() } == 0;
    let filter = if root {
        crate::sandbox::seccomp::terminal_only().ok()
    } else {
        None
    };
    let watchdog = super::watchdog::link();
    let set = move || -> io::Result<()> {
        // SAFETY: setsid only changes this forked, single-threaded process.
        if unsafe { libc::setsid() } < 0 {
            return Err(io::Error::last_os_error());
        }
        // Announced before anything it runs exists (see `watchdog`).
        if let Some(fd) = watchdog {
            super::watchdog::announce_self(fd);
        }
        cloexec_from_3()?;
        if let Some(prog) = &filter {
            // Best effort: without CAP_SYS_ADMIN (a container's root) the
            // kernel refuses TIOCSTI on other terminals by itself.
            let _ = crate::sandbox::seccomp::install_privileged(prog);
        }
        Ok(())
    };
    // SAFETY: runs in the forked child before exec: setsid, getpid and send
    // on a stack buffer, close_range / fcntl and the seccomp system call on a
    // program built before the fork; no allocation, no locks.
    unsafe {
        cmd.pre_exec(set);
    }
}

/// Sends SIGKILL to the process group led by `pid`. Never signals our own
/// group: pids 0 and 1 are ignored.
pub(crate) fn kill_group(pid: u32) {
    let Ok(pgid) = libc::pid_t::try_from(pid) else {
        return;
    };
    // SAFETY: getpgrp has no preconditions; killpg only sends a signal, and
    // never to our own group (0 or ours) or to every process (-1 is not
    // reachable). ESRCH (group already gone) is fine and ignored.
    unsafe {
        if pgid <= 1 || pgid == libc::getpgrp() {
            return;
        }
        libc::killpg(pgid, libc::SIGKILL);
    }
}

/// Sends `sig` to the process group led by `pid` (never ours, never 0/1).
pub(crate) fn signal_group(pid: u32, sig: i32) {
    let Ok(pgid) = libc::pid_t::try_from(pid) else {
        return;
    };
    // SAFETY: getpgrp has no preconditions; killpg only sends a signal, to
    // a group other than ours and never to every process.
    unsafe {
        if pgid > 1 && pgid != libc::getpgrp() {
            libc::killpg(pgid, sig);
        }
    }
}

/// The session id in a `/proc/<pid>/stat` line (field 6).
pub(crate) fn session_of(stat: &str) -> Option<u32> {
    let rest = stat.rsplit_once(')')?.1;
    rest.split_whitespace().nth(3)?.parse().ok()
}

/// SIGKILLs the process group led by `sid` and every process left in the
/// session `sid` (processes that moved to a group of their own). Never
/// touches navi's own session.
pub(crate) fn kill_tree(sid: u32) {
    // SAFETY: getsid(0) and getpgrp() have no preconditions.
    let (own_sid, own_group) = unsafe { (libc::getsid(0), libc::getpgrp()) };
    if sid <= 1 || libc::pid_t::try_from(sid).is_ok_and(|s| s == own_sid || s == own_group) {
        return;
    }
    kill_group(sid);
    super::watchdog::forget(sid);
    for _ in 0..4 {
        let Ok(dir) = std::fs::read_dir("/proc") else {
            return;
        };
        let mut found = false;
        for entry in dir.flatten() {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<libc::pid_t>().ok())
            else {
                continue;
            };
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
                continue;
            };
            if session_of(&stat) == Some(sid) && pid > 1 {
                // SAFETY: kill only sends a signal to one process (pid > 1).
                unsafe {
                    libc::kill(pid, libc::SIGKILL);
                }
                found = true;
            }
        }
        if !found {
            return;
        }
    }
}

/// The last line of defence: the child gets SIGKILL from the kernel when the
/// thread that started it dies (navi killed with SIGKILL, or crashed), even
/// though navi had no chance to kill its group. If navi is already gone by
/// the time the child runs this, the child ends itself.
pub(crate) fn die_with_parent(cmd: &mut Command) {
    let parent = std::process::id();
    let set = move || -> io::Result<()> {
        // SAFETY: prctl(PR_SET_PDEATHSIG) only sets a flag on the calling
        // process; getppid cannot fail. Both are async-signal-safe.
        unsafe {
            if libc::prctl(
                libc::PR_SET_PDEATHSIG,
                libc::SIGKILL as libc::c_ulong,
                0,
                0,
                0,
            ) != 0
            {
                return Err(io::Error::last_os_error());
            }
            if u32::try_from(libc::getppid()).ok() != Some(parent) {
                return Err(io::Error::other("navi exited before the tool started"));
            }
        }
        Ok(())
    };
    // SAFETY: runs in the forked child before exec; only prctl and getppid
    // are called (no allocation on the success path, no locks).
    unsafe {
        cmd.pre_exec(set);
    }
}

/// Resource limits applied in the child before `exec`.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Limits {
    /// RLIMIT_AS in bytes.
    pub(crate) address_space: Option<u64>,
    /// RLIMIT_CPU in seconds.
    pub(crate) cpu_secs: Option<u64>,
    /// RLIMIT_FSIZE in bytes (largest file the child may write).
    pub(crate) file_size: Option<u64>,
}

pub(crate) fn apply_limits(cmd: &mut Command, limits: Limits) {
    let set = move || -> io::Result<()> {
        let pairs = [
            (libc::RLIMIT_AS, limits.address_space),
            (libc::RLIMIT_CPU, limits.cpu_secs),
            (libc::RLIMIT_FSIZE, limits.file_size),
        ];
        for (resource, value) in pairs {
            if let Some(v) = value {
                let lim = libc::rlimit {
                    rlim_cur: v as libc::rlim_t,
                    rlim_max: v as libc::rlim_t,
                };
                // SAFETY: setrlimit is async-signal-safe and `lim` is a valid,
                // initialised struct that outlives the call.
                if unsafe { libc::setrlimit(resource, &lim) } != 0 {
                    return Err(io::Error::last_os_error());
                }
            }
        }
        Ok(())
    };
    // SAFETY: the closure runs in the forked child before exec; it only calls
    // setrlimit and reads errno (no allocation, no locks), which is
    // async-signal-safe as `pre_exec` requires.
    unsafe {
        cmd.pre_exec(set);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_session_field_is_read_after_the_command_name() {
        let stat = "4242 (a) b (c) S 1 4242 4240 0 -1 4194560";
        assert_eq!(session_of(stat), Some(4240));
        assert_eq!(session_of("garbage"), None);
    }

    #[test]
    fn killing_never_reaches_our_own_session() {
        // SAFETY: getsid(0) has no preconditions.
        let own = unsafe { libc::getsid(0) };
        kill_tree(u32::try_from(own).unwrap_or(0));
        kill_tree(0);
        kill_tree(1);
        assert!(super::super::process::is_alive(std::process::id()));
    }
}
