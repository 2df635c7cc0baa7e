//! One writer per session: an exclusive advisory lock (`flock`) on
//! `<database>-locks/<session id>.lock`, holding the owner's pid as text.
//!
//! Invariants:
//! - the lock belongs to an open file description, so the kernel drops it when
//!   the process ends in any way (exit, crash, `kill -9`); a stale lock file
//!   (its pid long gone) never blocks anybody;
//! - the descriptor is close-on-exec, so tool children never inherit the lock;
//! - a lock is a value ([`SessionLock`]) owned by the open session it guards:
//!   dropping it releases the session, and a second open of the same session,
//!   in another process or in this one, is refused as busy;
//! - a session's unpaired tool calls are repaired only by the holder (see
//!   [`SessionStore::load_held`](super::SessionStore::load_held)), so a call
//!   another live navi is still running is never answered "interrupted".
use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// Why a session could not be locked.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error("{}", busy_message(.session, *.pid))]
    Busy { session: String, pid: Option<u32> },
    #[error(
        "cannot lock session {session} ({path}): {source}; check the permissions of the directory next to the database"
    )]
    Io {
        session: String,
        path: PathBuf,
        source: std::io::Error,
    },
}

fn busy_message(session: &str, pid: Option<u32>) -> String {
    let short: String = session.chars().take(8).collect();
    let who = match pid {
        Some(p) => format!("another navi (pid {p})"),
        None => "another navi".to_string(),
    };
    format!(
        "session {short} is busy in {who}; wait for it to finish (navi run --wait), or use another session"
    )
}

/// This process is the session's one writer while this value lives.
#[derive(Debug)]
pub struct SessionLock {
    session: String,
    /// `None` for an in-memory database: nobody else can see it.
    file: Option<File>,
    /// Where the lock file is (to remove it with a deleted session).
    path: Option<PathBuf>,
}

impl SessionLock {
    /// The session this lock guards.
    pub fn session(&self) -> &str {
        &self.session
    }

    /// Gives the session up and removes its lock file (the session was
    /// deleted).
    pub(crate) fn remove_file(self) {
        if let Some(p) = &self.path {
            let _ = std::fs::remove_file(p);
        }
    }
}

impl Drop for SessionLock {
    fn drop(&mut self) {
        if let Some(f) = &self.file {
            let _ = f.unlock();
        }
    }
}

/// Where a database's session locks live.
pub(crate) struct SessionLocks {
    /// None for an in-memory database: nobody else can see it.
    dir: Option<PathBuf>,
}

/// A session id made safe as a file name (ids are UUIDs; anything else is
/// mapped, never trusted as a path).
fn file_name(session: &str) -> String {
    let safe: String = session
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("{safe}.lock")
}

impl SessionLocks {
    pub(crate) fn for_database(db_path: &Path) -> Self {
        let dir = (db_path != Path::new(":memory:")).then(|| {
            let mut name = db_path.as_os_str().to_os_string();
            name.push("-locks");
            PathBuf::from(name)
        });
        SessionLocks { dir }
    }

    /// Takes the session's lock without waiting. Held elsewhere (another
    /// process, or another open of it in this one): [`LockError::Busy`]
    /// with the holder's pid.
    pub(crate) fn try_lock(&self, session: &str) -> Result<SessionLock, LockError> {
        let Some(dir) = &self.dir else {
            return Ok(SessionLock {
                session: session.to_string(),
                file: None,
                path: None,
            });
        };
        let path = dir.join(file_name(session));
        let io_err = |source| LockError::Io {
            session: session.to_string(),
            path: path.clone(),
            source,
        };
        create_private_dir(dir).map_err(io_err)?;
        let mut file = open_lock_file(&path).map_err(io_err)?;
        match file.try_lock() {
            Ok(()) => {
                // Record the owner for the "busy" message of others.
                let pid = std::process::id().to_string();
                let _ = file.set_len(0);
                let _ = file.seek(SeekFrom::Start(0));
                let _ = file.write_all(pid.as_bytes());
                let _ = file.flush();
                Ok(SessionLock {
                    session: session.to_string(),
                    file: Some(file),
                    path: Some(path),
                })
            }
            Err(TryLockError::WouldBlock) => {
                let mut text = String::new();
                let _ = file.read_to_string(&mut text);
                Err(LockError::Busy {
                    session: session.to_string(),
                    pid: text.trim().parse().ok(),
                })
            }
            Err(TryLockError::Error(e)) => Err(io_err(e)),
        }
    }

    /// True when someone holds the session's lock right now (another
    /// process, or an open session of this one): it is open there. Looks
    /// without taking it for longer than the test itself.
    pub(crate) fn locked_elsewhere(&self, session: &str) -> bool {
        let Some(dir) = &self.dir else {
            return false;
        };
        let path = dir.join(file_name(session));
        let Ok(file) = OpenOptions::new().read(true).open(&path) else {
            return false;
        };
        match file.try_lock() {
            Ok(()) => {
                let _ = file.unlock();
                false
            }
            Err(TryLockError::WouldBlock) => true,
            Err(TryLockError::Error(_)) => false,
        }
    }
}

fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    if dir.is_dir() {
        return Ok(());
    }
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

fn open_lock_file(path: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .open(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lock_is_held_while_its_value_lives() {
        let dir = tempfile::tempdir().unwrap();
        let locks = SessionLocks::for_database(&dir.path().join("navi.db"));
        let held = locks.try_lock("abc").unwrap();
        assert_eq!(held.session(), "abc");
        let text = std::fs::read_to_string(dir.path().join("navi.db-locks/abc.lock")).unwrap();
        assert_eq!(text, std::process::id().to_string());
        // A second open in this process is refused with our pid, like
        // another process would be.
        match locks.try_lock("abc") {
            Err(LockError::Busy { pid, .. }) => assert_eq!(pid, Some(std::process::id())),
            other => panic!("expected busy, got {other:?}"),
        }
        let other = SessionLocks::for_database(&dir.path().join("navi.db"));
        assert!(other.locked_elsewhere("abc"));
        drop(held);
        assert!(!other.locked_elsewhere("abc"));
        let again = other.try_lock("abc").unwrap();
        assert!(other.locked_elsewhere("abc"));
        again.remove_file();
        assert!(!dir.path().join("navi.db-locks/abc.lock").exists());
        assert!(!locks.locked_elsewhere("never-opened"));
    }

    #[test]
    fn odd_ids_stay_inside_the_lock_dir() {
        assert_eq!(file_name("../../etc/x"), "______etc_x.lock");
        let msg = busy_message("0123456789", Some(42));
        assert!(
            msg.contains("session 01234567 is busy in another navi (pid 42)"),
            "{msg}"
        );
    }

    #[test]
    fn in_memory_database_needs_no_lock() {
        let locks = SessionLocks::for_database(Path::new(":memory:"));
        let a = locks.try_lock("x").unwrap();
        let b = locks.try_lock("x").unwrap();
        assert!(!locks.locked_elsewhere("x"));
        drop((a, b));
    }
}
