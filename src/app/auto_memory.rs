//! Memory for one-shot users: after `navi run` has answered, stale sessions
//! are extracted by a detached `navi memory extract --auto` (the way
//! `git gc --auto` works), so the command itself is not slower.
//!
//! Invariants:
//! - nothing is started unless it is due: memory is on and some session
//!   other than the one just used is stale (one read of the database);
//! - at most one auto extraction runs at a time (an exclusive `flock` on
//!   `<data dir>/memory-auto.lock`, held by the child for its whole run and
//!   looked at by the parent before it spawns);
//! - the child has no terminal streams and its own process group, so the
//!   caller's pipe closes when `navi run` exits and a Ctrl-C in the
//!   caller's shell does not reach it; it logs to the log file only.
use super::App;
use crate::app::launch::GlobalArgs;
use std::fs::{File, OpenOptions, TryLockError};
use std::path::Path;
use std::process::Stdio;

const LOCK_FILE: &str = "memory-auto.lock";

/// Takes the auto-extraction lock; `None` when another one holds it (or it
/// cannot be opened). The lock lasts as long as the returned file.
pub(crate) fn take_lock(data_dir: &Path) -> Option<File> {
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(data_dir.join(LOCK_FILE))
        .ok()?;
    match file.try_lock() {
        Ok(()) => Some(file),
        Err(TryLockError::WouldBlock) | Err(TryLockError::Error(_)) => None,
    }
}

/// The global flags again, for the child (`--backend`, `--provider`, `--model`,
/// `--config`, `--log-level`).
fn global_args(g: &GlobalArgs) -> Vec<std::ffi::OsString> {
    let mut a: Vec<std::ffi::OsString> = Vec::new();
    if let Some(b) = g.backend
        && let Some(v) = clap::ValueEnum::to_possible_value(&b)
    {
        a.push("--backend".into());
        a.push(v.get_name().into());
    }
    if let Some(p) = &g.provider {
        a.push("--provider".into());
        a.push(p.into());
    }
    if let Some(m) = &g.model {
        a.push("--model".into());
        a.push(m.into());
    }
    if let Some(c) = &g.config {
        a.push("--config".into());
        a.push(c.into());
    }
    if let Some(l) = &g.log_level {
        a.push("--log-level".into());
        a.push(l.into());
    }
    a
}

impl App {
    /// Starts `navi memory extract --auto` in the background when it is
    /// due (see the module doc). Never waits for it; never fails the caller.
    pub(crate) fn spawn_auto_extraction(&self, g: &GlobalArgs, just_used: &str) {
        let Some(memory) = &self.memory else {
            return;
        };
        let idle = (self.config.memory.idle_minutes as i64).saturating_mul(60_000);
        let due = memory
            .stale_sessions(idle, &[just_used])
            .is_ok_and(|s| s.iter().any(|id| !memory.open_elsewhere(id)));
        if !due {
            return;
        }
        // One at a time: a running extraction holds the lock.
        match take_lock(&self.paths.data_dir) {
            Some(lock) => drop(lock),
            None => return,
        }
        let Ok(exe) = std::env::current_exe() else {
            return;
        };
        let mut cmd = std::process::Command::new(exe);
        cmd.args(global_args(g))
            .args(["memory", "extract", "--auto", "--except", just_used])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        match cmd.spawn() {
            // Not waited for: when navi exits, init reaps it.
            Ok(child) => tracing::info!("memory: auto extraction started (pid {})", child.id()),
            Err(e) => tracing::warn!("memory: cannot start the auto extraction: {e}"),
        }
    }
}
