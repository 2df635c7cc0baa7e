//! Child processes for tools (`terminal`, `code_exec`, `ssh_exec`).
//!
//! Invariants:
//! - every child started by [`run`] starts a session of its own with no
//!   controlling terminal and no inherited descriptor above 2
//!   ([`super::child_setup::detach`]); it leads its process group and
//!   session (pgid = sid = pid), so a kill reaches its whole tree (shell,
//!   pipelines, grandchildren, and processes that moved to a group of their
//!   own);
//! - on timeout or cancel the WHOLE tree gets SIGKILL and the child is reaped
//!   before [`run`] returns — nothing keeps running after a tool call ended;
//!   if the future is dropped instead, a guard kills the tree;
//! - both pipes are read concurrently, so a chatty child never blocks; each
//!   stream keeps its first and last bytes up to the cap, the middle is counted
//!   and dropped, so memory stays bounded whatever the child prints;
//! - children never inherit secret-looking environment variables
//!   ([`super::child_env`]; `RunSpec::env_passthrough` lets named ones through);
//! - after the child exits, pipes still held open by background jobs are read
//!   for at most [`EXIT_DRAIN`], then abandoned;
//! - every child announces its session to the watchdog
//!   ([`super::watchdog`]): if navi dies without killing the tree (SIGKILL,
//!   crash), the watchdog does; it also has `PR_SET_PDEATHSIG` = SIGKILL.
//!
//! - a child with a `RunSpec::sandbox` policy starts under the kernel
//!   sandbox ([`crate::sandbox`]), installed last, after the rlimits; once
//!   its tree is gone, git metadata it created is neutralised
//!   ([`crate::sandbox::git_sweep`]) and what was done is reported in
//!   [`RunOutcome::sandbox_notes`].

use std::io;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::Command;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

pub(crate) use super::child_setup::Limits;
use super::child_setup::{apply_limits, detach, die_with_parent, kill_tree};

/// How long output is still read after the main child has exited.
pub(crate) const EXIT_DRAIN: Duration = Duration::from_millis(500);

/// How to run a child.
#[derive(Clone, Debug)]
pub(crate) struct RunSpec {
    pub(crate) timeout: Duration,
    /// Bytes kept per stream (head + tail).
    pub(crate) output_limit: usize,
    /// Kill what is left of the process group once the child exits
    /// (background jobs started by a shell command).
    pub(crate) kill_group_on_exit: bool,
    pub(crate) limits: Option<Limits>,
    /// Secret-looking variables still passed to the child
    /// (`[security].env_passthrough`); every other one is scrubbed.
    pub(crate) env_passthrough: Vec<String>,
    /// The kernel sandbox the child starts in (`None`: unsandboxed).
    pub(crate) sandbox: Option<crate::sandbox::Policy>,
}

/// Why the child stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ending {
    Exited(i32),
    Signaled(i32),
    TimedOut,
    Cancelled,
}

/// Captured bytes of one stream: the head, the tail and the total seen.
#[derive(Clone, Debug, Default)]
pub(crate) struct Captured {
    head: Vec<u8>,
    tail: Vec<u8>,
    total: u64,
    limit: usize,
}

impl Captured {
    fn new(limit: usize) -> Self {
        Captured {
            limit: limit.max(2),
            ..Default::default()
        }
    }

    /// A stream whose bytes came whole from elsewhere (an editor's terminal).
    pub(crate) fn of(data: &[u8], limit: usize) -> Self {
        let mut c = Captured::new(limit);
        c.push(data);
        c
    }

    fn push(&mut self, data: &[u8]) {
        self.total += data.len() as u64;
        let head_cap = self.limit * 2 / 3;
        let room = head_cap.saturating_sub(self.head.len());
        let (to_head, rest) = data.split_at(room.min(data.len()));
        self.head.extend_from_slice(to_head);
        if rest.is_empty() {
            return;
        }
        let tail_cap = self.limit - head_cap;
        self.tail.extend_from_slice(rest);
        if self.tail.len() > tail_cap * 2 {
            let cut = self.tail.len() - tail_cap;
            self.tail.drain(..cut);
        }
    }

    /// Some of the stream was dropped (more than the limit came).
    pub(crate) fn truncated(&self) -> bool {
        let tail_cap = self.limit - self.limit * 2 / 3;
        (self.head.len() + self.tail.len().min(tail_cap)) as u64 != self.total
    }

    /// Total bytes the stream produced.
    #[cfg(test)]
    pub(crate) fn total(&self) -> u64 {
        self.total
    }

    /// The text, with a marker where the middle was dropped.
    pub(crate) fn text(&self) -> String {
        let tail_cap = self.limit - self.limit * 2 / 3;
        let tail = if self.tail.len() > tail_cap {
            &self.tail[self.tail.len() - tail_cap..]
        } else {
            &self.tail[..]
        };
        let kept = (self.head.len() + tail.len()) as u64;
        let head = String::from_utf8_lossy(&self.head);
        if kept == self.total {
            let mut all = self.head.clone();
            all.extend_from_slice(tail);
            return String::from_utf8_lossy(&all).into_owned();
        }
        format!(
            "{head}\n[... output truncated: {} of {} bytes dropped from the middle ...]\n{}",
            self.total - kept,
            self.total,
            String::from_utf8_lossy(tail)
        )
    }
}

/// What happened to a child.
#[derive(Debug)]
pub(crate) struct RunOutcome {
    pub(crate) pid: u32,
    pub(crate) ending: Ending,
    pub(crate) stdout: Captured,
    pub(crate) stderr: Captured,
    /// Output pipes were still open when reading stopped (background jobs).
    pub(crate) pipes_abandoned: bool,
    /// From start to the end of reading.
    pub(crate) elapsed: Duration,
    /// What the sandbox did after the call (git metadata neutralised).
    pub(crate) sandbox_notes: Vec<String>,
}

/// The real user id of this process.
#[allow(unsafe_code)]
pub fn current_uid() -> u32 {
    // SAFETY: getuid has no preconditions and cannot fail.
    unsafe { libc::getuid() }
}

/// Whether a process with this pid still exists and is not a zombie.
pub fn is_alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            let state = stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.trim_start().chars().next());
            !matches!(state, Some('Z') | Some('X'))
        }
        Err(_) => false,
    }
}

async fn read_some(pipe: &mut Option<impl AsyncRead + Unpin>, buf: &mut [u8]) -> io::Result<usize> {
    match pipe {
        Some(p) => p.read(buf).await,
        None => Ok(0),
    }
}

fn ending_of(status: ExitStatus) -> Ending {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(c), _) => Ending::Exited(c),
        (None, Some(s)) => Ending::Signaled(s),
        (None, None) => Ending::Exited(-1),
    }
}

/// Kills the group when dropped while still armed: if the future running a
/// child is dropped mid-way (the caller gave up on it), the group still dies.
struct GroupGuard {
    pid: u32,
    armed: bool,
}

/// A long-lived child's process group (an MCP server): the whole group is
/// killed when this is dropped, so nothing the child started outlives it.
#[derive(Debug)]
pub(crate) struct OwnedGroup(u32);

impl OwnedGroup {
    /// The tree led by `pid` (spawned after [`super::child_setup::detach`]).
    pub(crate) fn new(pid: u32) -> Self {
        OwnedGroup(pid)
    }
}

impl Drop for OwnedGroup {
    fn drop(&mut self) {
        kill_tree(self.0);
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if self.armed {
            kill_tree(self.pid);
        }
    }
}

/// Spawns `cmd` in its own process group and waits for it under `spec`.
/// `Err` only when the child could not be started.
pub(crate) async fn run(
    cmd: Command,
    spec: &RunSpec,
    cancel: &CancellationToken,
) -> io::Result<RunOutcome> {
    run_with_input(cmd, spec, None, cancel).await
}

/// Like [`run`], writing `input` to the child's stdin (then closing it).
pub(crate) async fn run_with_input(
    mut cmd: Command,
    spec: &RunSpec,
    input: Option<Vec<u8>>,
    cancel: &CancellationToken,
) -> io::Result<RunOutcome> {
    cmd.stdin(if input.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    })
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .kill_on_drop(true);
    super::child_env::scrub(&mut cmd, &spec.env_passthrough);
    detach(&mut cmd);
    die_with_parent(&mut cmd);
    if let Some(limits) = spec.limits {
        apply_limits(&mut cmd, limits);
    }
    if let Some(policy) = &spec.sandbox {
        crate::sandbox::enforce::attach(&mut cmd, policy)?;
    }
    let mut child = cmd.spawn()?;
    let pid = child.id().unwrap_or(0);
    if let (Some(data), Some(mut stdin)) = (input, child.stdin.take()) {
        // A child that never reads its input must not block us: write on a
        // task; a broken pipe just means the child did not want it.
        tokio::spawn(async move {
            use tokio::io::AsyncWriteExt;
            let _ = stdin.write_all(&data).await;
            let _ = stdin.shutdown().await;
        });
    }
    let mut guard = GroupGuard { pid, armed: true };
    let mut out_pipe = child.stdout.take();
    let mut err_pipe = child.stderr.take();
    let mut stdout = Captured::new(spec.output_limit);
    let mut stderr = Captured::new(spec.output_limit);
    let mut out_buf = vec![0u8; 16 * 1024];
    let mut err_buf = vec![0u8; 16 * 1024];
    let started = Instant::now();
    let deadline = started + spec.timeout;
    let mut forced: Option<Ending> = None;
    let mut status: Option<ExitStatus> = None;
    let mut drain_until: Option<Instant> = None;
    let mut pipes_abandoned = false;

    loop {
        if out_pipe.is_none() && err_pipe.is_none() && status.is_some() {
            break;
        }
        let running = status.is_none() && forced.is_none();
        tokio::select! {
            r = read_some(&mut out_pipe, &mut out_buf), if out_pipe.is_some() => match r {
                Ok(0) | Err(_) => out_pipe = None,
                Ok(n) => stdout.push(&out_buf[..n]),
            },
            r = read_some(&mut err_pipe, &mut err_buf), if err_pipe.is_some() => match r {
                Ok(0) | Err(_) => err_pipe = None,
                Ok(n) => stderr.push(&err_buf[..n]),
            },
            s = child.wait(), if status.is_none() => {
                status = Some(s?);
                drain_until = Some(Instant::now() + EXIT_DRAIN);
            },
            _ = tokio::time::sleep_until(drain_until.unwrap_or(deadline)), if drain_until.is_some() => {
                pipes_abandoned = out_pipe.is_some() || err_pipe.is_some();
                break;
            },
            _ = tokio::time::sleep_until(deadline), if running => {
                kill_tree(pid);
                forced = Some(Ending::TimedOut);
            },
            _ = cancel.cancelled(), if running => {
                kill_tree(pid);
                forced = Some(Ending::Cancelled);
            },
        }
    }
    if forced.is_some() || spec.kill_group_on_exit {
        kill_tree(pid);
    }
    guard.armed = false;
    let sandbox_notes = match &spec.sandbox {
        Some(policy) if forced.is_some() || spec.kill_group_on_exit => {
            crate::sandbox::git_sweep::after_call(policy)
        }
        _ => Vec::new(),
    };
    let ending = match (forced, status) {
        (Some(f), _) => f,
        (None, Some(s)) => ending_of(s),
        (None, None) => Ending::Exited(-1),
    };
    Ok(RunOutcome {
        pid,
        ending,
        stdout,
        stderr,
        pipes_abandoned,
        elapsed: started.elapsed(),
        sandbox_notes,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn captured_keeps_head_and_tail() {
        let mut c = Captured::new(30);
        for i in 0..100u8 {
            c.push(&[b'a' + (i % 26)]);
        }
        let t = c.text();
        assert!(t.starts_with("abcdefghijklmnopqrst"), "{t}");
        assert!(t.contains("70 of 100 bytes dropped"), "{t}");
        assert!(t.ends_with("mnopqrstuv"), "{t}");
        assert!(c.truncated());
    }

    #[test]
    fn captured_small_is_verbatim() {
        let mut c = Captured::new(100);
        assert!(!c.truncated());
        c.push(b"hello ");
        c.push(b"world");
        assert_eq!(c.text(), "hello world");
        assert_eq!(c.total(), 11);
    }

    #[test]
    fn kill_group_ignores_dangerous_pids() {
        super::super::child_setup::kill_group(0);
        super::super::child_setup::kill_group(1);
        assert!(is_alive(std::process::id()));
    }
}
