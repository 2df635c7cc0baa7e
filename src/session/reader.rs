//! Where the session store's reads run: on the caller's thread, on a
//! read-only connection of their own (a file database, WAL: readers never
//! wait for the writer and see every committed write), or on the one
//! connection of an in-memory database, between the writer's jobs.
use super::store::StoreError;
use super::writer::blocking;
use rusqlite::{Connection, OpenFlags};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

pub(crate) enum Reader {
    /// A file database: its read-only connection, opened on the first read.
    File {
        path: PathBuf,
        conn: Mutex<Option<Connection>>,
    },
    /// An in-memory database has one connection, shared with the writer.
    Shared(Arc<Mutex<Connection>>),
}

impl Reader {
    pub(crate) fn file(path: &Path) -> Self {
        Reader::File {
            path: path.to_path_buf(),
            conn: Mutex::new(None),
        }
    }

    /// Runs `f` on this thread (inside `block_in_place` on a multi-thread
    /// runtime's worker).
    pub(crate) fn read<T>(
        &self,
        f: impl FnOnce(&Connection) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        blocking(|| match self {
            Reader::Shared(conn) => {
                let c = conn.lock().map_err(|_| StoreError::Poisoned)?;
                f(&c)
            }
            Reader::File { path, conn } => {
                let mut slot = conn.lock().map_err(|_| StoreError::Poisoned)?;
                if slot.is_none() {
                    *slot = Some(open(path)?);
                }
                match slot.as_ref() {
                    Some(c) => f(c),
                    None => Err(StoreError::Poisoned),
                }
            }
        })
    }
}

fn open(path: &Path) -> Result<Connection, StoreError> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let open_err = |source| StoreError::Open {
        path: path.to_path_buf(),
        source,
    };
    let c = Connection::open_with_flags(path, flags).map_err(open_err)?;
    c.busy_timeout(std::time::Duration::from_secs(5))
        .map_err(open_err)?;
    Ok(c)
}
