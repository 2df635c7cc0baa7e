//! The watchdog: a small helper process that ends every tool process tree
//! navi started once navi is gone, however it went (SIGKILL, a crash, an
//! editor that kills its agent, or a normal exit that skipped a cleanup).
//!
//! Why a separate process: the kernel's parent-death signal
//! (`PR_SET_PDEATHSIG`) is tied to the *thread* that forked the child (tokio's
//! blocking threads come and go) and reaches only that child, never the
//! `sleep` or the dev server a shell started under it; and a process that is
//! SIGKILLed runs no code at all. So the cleanup has to live outside navi.
//!
//! How it works:
//! - the first time a tool child is started, navi makes a `SOCK_SEQPACKET`
//!   socket pair and starts its own binary again as `navi-watchdog` in a
//!   session of its own, with one end as its stdin, an empty environment and
//!   no other descriptor; navi keeps the other end (close-on-exec) for life;
//! - every tool child ([`super::child_setup::detach`]) leads a session of its
//!   own, and announces it itself between fork and exec (`+<pid>`), before
//!   anything it runs can start — so there is no moment where a tree exists
//!   that the watchdog does not know about; navi says `-<pid>` once it has
//!   ended a tree itself;
//! - when the socket reads end-of-file, navi is gone (the kernel closes a
//!   dead process's descriptors whatever killed it): the watchdog SIGKILLs
//!   every process of every session still announced, then exits;
//! - a session whose leader's pid now belongs to another process (pid reuse,
//!   checked through the start time in `/proc/<pid>/stat`) is left alone.
//!
//! It covers every kind of child that goes through `detach`: `terminal`,
//! `code_exec`, user tools, `ssh_exec`'s local `ssh`, stdio MCP servers
//! (sandboxed or not), in every front end, subagents included. What it cannot
//! reach: an *unsandboxed* process that starts a session of its own
//! (`setsid`, a daemon) — it left the tree on purpose; sandboxed children
//! cannot (seccomp refuses `setsid`).
#![allow(unsafe_code)]

use std::collections::HashMap;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::process::{ExitCode, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

/// The argument that makes the navi binary run as the watchdog.
const FLAG: &str = "--navi-internal-watchdog";

/// The watchdog's `argv[0]` (what `ps` shows).
const NAME: &str = "navi-watchdog";

/// Only the navi binary starts a watchdog (a unit-test binary re-executed
/// would run its tests instead).
static ENABLED: AtomicBool = AtomicBool::new(false);

/// navi's end of the socket; `None` when the watchdog could not start.
static LINK: OnceLock<Option<OwnedFd>> = OnceLock::new();

/// Lets this process start a watchdog when it first needs one. Called by the
/// navi binary's `main`.
pub(crate) fn enable() {
    ENABLED.store(true, Ordering::SeqCst);
}

/// The socket a child announces itself on, starting the watchdog the first
/// time. `None` when watchdogs are not enabled or it could not start (then
/// tools still run; only the parent-death signal is left).
pub(crate) fn link() -> Option<RawFd> {
    if !ENABLED.load(Ordering::SeqCst) {
        return None;
    }
    LINK.get_or_init(|| match start() {
        Ok(fd) => Some(fd),
        Err(e) => {
            tracing::warn!(
                "cannot start the watchdog ({e}): tool processes may outlive navi if it is killed"
            );
            None
        }
    })
    .as_ref()
    .map(AsRawFd::as_raw_fd)
}

fn start() -> std::io::Result<OwnedFd> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: socketpair fills the two-element array on success.
    let r = unsafe {
        libc::socketpair(
            libc::AF_UNIX,
            libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC,
            0,
            fds.as_mut_ptr(),
        )
    };
    if r != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: both descriptors are fresh and owned by nobody else.
    let (ours, theirs) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    let mut cmd = std::process::Command::new("/proc/self/exe");
    std::os::unix::process::CommandExt::arg0(&mut cmd, NAME);
    cmd.arg(FLAG)
        .arg(std::process::id().to_string())
        .env_clear()
        .current_dir("/")
        .stdin(Stdio::from(theirs))
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let set = || -> std::io::Result<()> {
        // SAFETY: setsid only changes this forked, single-threaded process:
        // a session of its own, so a signal to navi's group or a hangup of
        // navi's terminal does not take the watchdog with navi.
        if unsafe { libc::setsid() } < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    };
    // SAFETY: the closure only calls setsid (async-signal-safe, no
    // allocation on the success path).
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut cmd, set);
    }
    // Not waited for: it lives as long as navi; init reaps it after.
    let child = cmd.spawn()?;
    tracing::debug!("watchdog started (pid {})", child.id());
    Ok(ours)
}

/// Writes `<sign><pid>` into `buf`; the length used. No allocation.
fn encode(sign: u8, pid: u32, buf: &mut [u8; 16]) -> usize {
    let mut digits = [0u8; 10];
    let mut n = pid;
    let mut len = 0;
    loop {
        digits[len] = b'0' + (n % 10) as u8;
        len += 1;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    buf[0] = sign;
    for i in 0..len {
        buf[1 + i] = digits[len - 1 - i];
    }
    1 + len
}

fn send(fd: RawFd, sign: u8, pid: u32) {
    let mut buf = [0u8; 16];
    let len = encode(sign, pid, &mut buf);
    // SAFETY: send reads `len` bytes of a live stack buffer; MSG_NOSIGNAL
    // turns a gone watchdog into EPIPE (ignored) instead of SIGPIPE.
    unsafe {
        libc::send(fd, buf.as_ptr().cast(), len, libc::MSG_NOSIGNAL);
    }
}

/// In a forked child, after `setsid`: announces its session. Only `getpid`
/// and `send` (async-signal-safe, no allocation).
pub(crate) fn announce_self(fd: RawFd) {
    // SAFETY: getpid cannot fail.
    let pid = unsafe { libc::getpid() };
    if let Ok(pid) = u32::try_from(pid) {
        send(fd, b'+', pid);
    }
}

/// Navi ended the tree led by `sid` itself: the watchdog forgets it (its
/// pid may be reused by an unrelated process later).
pub(crate) fn forget(sid: u32) {
    if let Some(Some(fd)) = LINK.get() {
        send(fd.as_raw_fd(), b'-', sid);
    }
}

/// Runs the watchdog when the arguments ask for it: `Some(exit code)` then.
pub(crate) fn serve_if_asked() -> Option<ExitCode> {
    let mut args = std::env::args_os().skip(1);
    if args.next().is_none_or(|a| a != FLAG) {
        return None;
    }
    serve(0);
    Some(ExitCode::SUCCESS)
}

/// The start time (field 22 of `/proc/<pid>/stat`), in clock ticks.
fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = stat.rsplit_once(')')?.1;
    rest.split_whitespace().nth(19)?.parse().ok()
}

/// What one message asks: `(true, pid)` to add, `(false, pid)` to forget.
fn decode(msg: &[u8]) -> Option<(bool, u32)> {
    let (sign, digits) = msg.split_first()?;
    let pid = std::str::from_utf8(digits).ok()?.parse().ok()?;
    match sign {
        b'+' => Some((true, pid)),
        b'-' => Some((false, pid)),
        _ => None,
    }
}

/// Reads announcements from `fd` until navi is gone, then ends every tree
/// still announced.
fn serve(fd: RawFd) {
    let mut trees: HashMap<u32, Option<u64>> = HashMap::new();
    let mut buf = [0u8; 64];
    loop {
        // SAFETY: recv writes at most buf.len() bytes into the buffer.
        let n = unsafe { libc::recv(fd, buf.as_mut_ptr().cast(), buf.len(), 0) };
        if n < 0 {
            if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            break;
        }
        if n == 0 {
            break;
        }
        match decode(&buf[..n as usize]) {
            Some((true, pid)) => {
                trees.insert(pid, start_time(pid));
            }
            Some((false, pid)) => {
                trees.remove(&pid);
            }
            None => {}
        }
    }
    for (sid, started) in trees {
        let now = start_time(sid);
        // The leader is still the process that announced itself, or gone
        // (its session may still hold processes); a different process with
        // that pid is not ours.
        if now.is_none() || now == started {
            super::child_setup::kill_tree(sid);
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn messages_round_trip() {
        let mut buf = [0u8; 16];
        for pid in [0, 7, 10, 4_194_304, u32::MAX] {
            let n = encode(b'+', pid, &mut buf);
            assert_eq!(decode(&buf[..n]), Some((true, pid)));
            let n = encode(b'-', pid, &mut buf);
            assert_eq!(decode(&buf[..n]), Some((false, pid)));
        }
        assert_eq!(decode(b""), None);
        assert_eq!(decode(b"+"), None);
        assert_eq!(decode(b"*12"), None);
        assert_eq!(decode(b"+12x"), None);
    }

    #[test]
    fn the_start_time_is_read_after_the_command_name() {
        let own = start_time(std::process::id());
        assert!(own.is_some());
        assert_eq!(start_time(0), None);
    }

    /// The whole session of an announced tree dies once the other end of
    /// the socket is closed (navi gone), background jobs included.
    #[test]
    fn a_closed_link_ends_every_announced_session() {
        let mut fds = [0 as libc::c_int; 2];
        // SAFETY: socketpair fills the array.
        let r = unsafe {
            libc::socketpair(
                libc::AF_UNIX,
                libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC,
                0,
                fds.as_mut_ptr(),
            )
        };
        assert_eq!(r, 0);
        // SAFETY: fresh descriptors.
        let (navi, dog) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        let mut cmd = std::process::Command::new("sh");
        cmd.args(["-c", "sleep 30 & sleep 30"])
            .stdin(Stdio::null())
            .stdout(Stdio::null());
        let link = navi.as_raw_fd();
        // SAFETY: setsid, getpid and send only.
        unsafe {
            std::os::unix::process::CommandExt::pre_exec(&mut cmd, move || {
                libc::setsid();
                announce_self(link);
                Ok(())
            });
        }
        let mut child = cmd.spawn().unwrap();
        let sid = child.id();
        let in_session = || {
            std::fs::read_dir("/proc")
                .unwrap()
                .flatten()
                .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
                .filter(|p| super::super::process::is_alive(*p))
                .filter(|p| {
                    std::fs::read_to_string(format!("/proc/{p}/stat"))
                        .ok()
                        .and_then(|s| super::super::child_setup::session_of(&s))
                        == Some(sid)
                })
                .count()
        };
        let t0 = std::time::Instant::now();
        while in_session() < 3 && t0.elapsed().as_secs() < 20 {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert_eq!(in_session(), 3, "sh and two sleeps");
        drop(navi);
        serve(dog.as_raw_fd());
        let status = child.wait().unwrap();
        assert_eq!(
            std::os::unix::process::ExitStatusExt::signal(&status),
            Some(libc::SIGKILL)
        );
        let t0 = std::time::Instant::now();
        while in_session() > 0 && t0.elapsed().as_secs() < 20 {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert_eq!(in_session(), 0, "the background sleep survived");
    }

    #[test]
    fn disabled_means_no_link() {
        // Unit tests never enable the watchdog (the test binary is not navi).
        assert_eq!(link(), None);
    }
}
