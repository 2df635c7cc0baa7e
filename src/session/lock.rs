//! One writer per session: an exclusive advisory lock (`flock`) on
//! `<database>-locks/<session id>.lock`, holding the owner's pid as text.
//!
//! Invariants:
//! - the lock belongs to an open file description, so the kernel drops it when
//!   the process ends in any way (exit, crash, `kill -9`); a stale lock file
//!   (its pid long gone) never blocks anybody;
//! - the descriptor is close-on-exec, so tool children never inherit the lock;
//! - within one process the lock is re-entrant: a front end that opened a
//!   session for writing and the turns it starts share one lock;
//! - a session's unpaired tool calls are repaired only by the holder (see
//!   [`SessionStore::load`](super::SessionStore::load)), so a call another
//!   live navi is still running is never answered "interrupted".
use std::collections::HashMap;
use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

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

/// The locks this process holds, by session id.
pub(crate) struct SessionLocks {
    /// None for an in-memory database: nobody else can see it.
    dir: Option<PathBuf>,
    held: Mutex<HashMap<String, File>>,
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
        SessionLocks {
            dir,
            held: Mutex::new(HashMap::new()),
        }
    }

    /// True when this process holds the session's lock (always for an
    /// in-memory database).
    pub(crate) fn holds(&self, session: &str) -> bool {
        self.dir.is_none() || self.held.lock().is_ok_and(|h| h.contains_key(session))
    }

    /// Takes the session's lock without waiting. Re-entrant in one process.
    pub(crate) fn try_lock(&self, session: &str) -> Result<(), LockError> {
        let Some(dir) = &self.dir else {
            return Ok(());
        };
        let mut held = self.held.lock().map_err(|_| LockError::Busy {
            session: session.to_string(),
            pid: None,
        })?;
        if held.contains_key(session) {
            return Ok(());
        }
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
                held.insert(session.to_string(), file);
                Ok(())
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

    /// True when another process (or another store in this one) holds the
    /// session's lock right now: it is open there. Looks without taking it
    /// for longer than the test itself.
    pub(crate) fn locked_elsewhere(&self, session: &str) -> bool {
        let Some(dir) = &self.dir else {
            return false;
        };
        if self.held.lock().is_ok_and(|h| h.contains_key(session)) {
            return false;
        }
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

    /// Releases the session's lock (no-op when not held).
    pub(crate) fn unlock(&self, session: &str) {
        if let Ok(mut held) = self.held.lock()
            && let Some(file) = held.remove(session)
        {
            let _ = file.unlock();
        }
    }

    /// Forgets the lock file of a deleted session (call while holding it).
    pub(crate) fn remove(&self, session: &str) {
        if let Some(dir) = &self.dir {
            let _ = std::fs::remove_file(dir.join(file_name(session)));
        }
        self.unlock(session);
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
    fn reentrant_in_one_process_and_released_on_unlock() {
        let dir = tempfile::tempdir().unwrap();
        let locks = SessionLocks::for_database(&dir.path().join("navi.db"));
        assert!(!locks.holds("abc"));
        locks.try_lock("abc").unwrap();
        locks.try_lock("abc").unwrap();
        assert!(locks.holds("abc"));
        let text = std::fs::read_to_string(dir.path().join("navi.db-locks/abc.lock")).unwrap();
        assert_eq!(text, std::process::id().to_string());
        // A second holder in the same process (another store on the same
        // database) is refused with our pid, like another process would be.
        let other = SessionLocks::for_database(&dir.path().join("navi.db"));
        match other.try_lock("abc") {
            Err(LockError::Busy { pid, .. }) => assert_eq!(pid, Some(std::process::id())),
            other => panic!("expected busy, got {other:?}"),
        }
        assert!(other.locked_elsewhere("abc"));
        assert!(!locks.locked_elsewhere("abc"), "our own lock");
        locks.unlock("abc");
        assert!(!other.locked_elsewhere("abc"));
        other.try_lock("abc").unwrap();
        assert!(other.holds("abc"));
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
        assert!(locks.holds("x"));
        locks.try_lock("x").unwrap();
    }
}
