//! SQLite session store (WAL, foreign keys, versioned migrations).
//!
//! Every call is one short statement or transaction. All writes go through
//! one writer thread that owns the read-write connection ([`super::writer`]),
//! in the order they are made; a method returns once its write is committed.
//! Reads run on the caller's thread on a second, read-only connection (WAL
//! readers never wait for the writer), opened on the first read.
use super::lock::{LockError, SessionLock, SessionLocks};
use super::reader::Reader;
use super::writer::Writer;
use super::{
    Buffer, MessageKind, Session, SessionMeta, StoredMessage, now_ms, repair_unpaired, schema,
    title_from,
};
use crate::llm::Role;
pub(crate) use pages::PAGE_ROWS;
use rusqlite::{Connection, OptionalExtension, params};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error(
        "cannot open session database {path}: {source}; check the path (DB_PATH / [storage].db_path) and its permissions"
    )]
    Open {
        path: PathBuf,
        source: rusqlite::Error,
    },
    #[error("cannot create directory {path} for the session database: {source}")]
    Dir {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "cannot create session database {path} (owner-only): {source}; check the path (DB_PATH / [storage].db_path) and its permissions"
    )]
    File {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "session database {path} has schema version {found}, newer than this navi understands ({supported}); upgrade navi"
    )]
    TooNew {
        path: PathBuf,
        found: i64,
        supported: i64,
    },
    #[error("no session matches '{0}'; see `navi sessions list`")]
    NotFound(String),
    #[error("'{0}' matches more than one session; give more characters of the id")]
    Ambiguous(String),
    #[error("session database error: {0}")]
    Sql(#[from] rusqlite::Error),
    #[error("session database is unusable (a previous operation panicked)")]
    Poisoned,
    #[error(
        "the session database writer stopped before answering (an internal error, see the log); nothing after it was saved: restart navi"
    )]
    WriterGone,
    #[error("cannot start the session database writer thread: {0}")]
    Thread(std::io::Error),
    #[error(transparent)]
    Lock(#[from] LockError),
}

pub struct SessionStore {
    writer: Writer,
    reader: Reader,
    locks: SessionLocks,
}

mod images;
pub(crate) mod pages;
mod pending;
mod project;
pub(crate) use pending::new_meta;
pub(crate) mod rows;
mod state;

// `message_count` is kept by triggers (schema migration 9): no count here.
const META_COLS: &str = "s.id, s.profile_id, s.title, s.pinned, s.created_at, s.last_active, s.context_token_count, s.message_count, s.cwd, s.project";

fn meta_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<SessionMeta> {
    Ok(SessionMeta {
        id: r.get(0)?,
        profile_id: r.get(1)?,
        title: r.get(2)?,
        pinned: r.get::<_, i64>(3)? != 0,
        created_at: r.get(4)?,
        last_active: r.get(5)?,
        context_token_count: r.get::<_, i64>(6)?.max(0) as u64,
        message_count: r.get::<_, i64>(7)?.max(0) as u64,
        cwd: r.get(8)?,
        project: r.get(9)?,
    })
}

/// The select list [`message_from_row`] reads, in its order.
pub(super) fn message_select() -> String {
    format!(
        "id, {}, kind, success, created_at, rewound, display",
        rows::MESSAGE_COLS
    )
}

/// A message row read with [`message_select`].
pub(super) fn message_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<StoredMessage> {
    Ok(StoredMessage {
        id: r.get(0)?,
        msg: rows::chat_message(r, 1)?,
        kind: MessageKind::parse(&r.get::<_, String>(9)?),
        success: r.get::<_, Option<i64>>(10)?.map(|v| v != 0),
        created_at: r.get(11)?,
        rewound: r.get::<_, i64>(12)? != 0,
        // A value this build cannot read (a newer navi's) is left out.
        display: r
            .get::<_, Option<String>>(13)?
            .and_then(|s| serde_json::from_str(&s).ok()),
    })
}

impl SessionStore {
    /// Opens (creating if needed) the database at `path` and migrates it.
    pub fn open(path: &Path) -> Result<Self, StoreError> {
        Self::open_with(path, false)
    }

    /// [`open`](Self::open); with `one_connection`, reads run on the
    /// writer's connection (between its jobs) instead of a read-only one of
    /// their own.
    pub fn open_with(path: &Path, one_connection: bool) -> Result<Self, StoreError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            crate::private_fs::create_dir_all(dir).map_err(|source| StoreError::Dir {
                path: dir.to_path_buf(),
                source,
            })?;
        }
        // Owner-only whatever the umask: SQLite gives the -wal and -shm files
        // the database file's mode, and they are tightened again after open.
        crate::private_fs::ensure_private_file(path).map_err(|source| StoreError::File {
            path: path.to_path_buf(),
            source,
        })?;
        // Many processes opening a new database at once: setting WAL mode
        // can find the database busy without waiting for it; try again.
        let mut attempt = 0;
        let store = loop {
            let conn = Connection::open(path).map_err(|source| StoreError::Open {
                path: path.to_path_buf(),
                source,
            })?;
            match Self::init(conn, path, one_connection) {
                Err(StoreError::Open { source, .. }) if busy(&source) && attempt < 50 => {
                    attempt += 1;
                    std::thread::sleep(std::time::Duration::from_millis(100));
                }
                other => break other?,
            }
        };
        for suffix in ["-wal", "-shm", "-journal"] {
            let mut side = path.as_os_str().to_owned();
            side.push(suffix);
            crate::private_fs::tighten_if_exists(Path::new(&side));
        }
        Ok(store)
    }

    /// A private in-memory database (unit tests, `navi run --no-save`).
    pub fn open_in_memory() -> Result<Self, StoreError> {
        let conn = Connection::open_in_memory()?;
        Self::init(conn, Path::new(":memory:"), true)
    }

    fn init(mut conn: Connection, path: &Path, one_connection: bool) -> Result<Self, StoreError> {
        let open_err = |source| StoreError::Open {
            path: path.to_path_buf(),
            source,
        };
        conn.busy_timeout(std::time::Duration::from_secs(5))
            .map_err(open_err)?;
        // WAL + NORMAL: every commit survives a process crash (kill -9);
        // only an OS crash can lose the last commits.
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(open_err)?;
        conn.pragma_update(None, "synchronous", "NORMAL")
            .map_err(open_err)?;
        conn.pragma_update(None, "foreign_keys", "ON")
            .map_err(open_err)?;
        // Don't checkpoint (two fsyncs, ~8 ms here) every time a short-lived
        // `navi run` closes the database; auto-checkpoint folds the WAL in as
        // it grows. Durability is unchanged: committed frames are in the WAL.
        let _ = conn.set_db_config(
            rusqlite::config::DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE,
            true,
        );
        // …but keep the WAL short: the next process to open the database
        // re-reads all of it (recovery), so 256 pages (~1 MB) bounds that.
        let _ = conn.pragma_update(None, "wal_autocheckpoint", 256);
        let found = schema::migrate(&mut conn).map_err(open_err)?;
        if found > schema::CURRENT {
            return Err(StoreError::TooNew {
                path: path.to_path_buf(),
                found,
                supported: schema::CURRENT,
            });
        }
        let conn = Arc::new(Mutex::new(conn));
        let reader = if one_connection {
            Reader::Shared(conn.clone())
        } else {
            Reader::file(path)
        };
        Ok(SessionStore {
            writer: Writer::spawn(conn)?,
            reader,
            locks: SessionLocks::for_database(path),
        })
    }

    /// Makes this process the session's one writer for as long as the
    /// returned lock lives; `Err` names the pid of the navi that holds it
    /// (this one too, when the session is already open here). The lock dies
    /// with the process.
    pub fn lock(&self, id: &str) -> Result<SessionLock, StoreError> {
        Ok(self.locks.try_lock(id)?)
    }

    /// Whether the session is open (locked) somewhere right now, in another
    /// navi or in an open session of this one.
    pub(crate) fn locked_elsewhere(&self, id: &str) -> bool {
        self.locks.locked_elsewhere(id)
    }

    /// Runs `f` on the writer thread and waits for it (one short statement
    /// or transaction; the memory store shares this database and writer).
    pub(crate) fn with<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Connection) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        self.writer.call(f)
    }

    /// [`with`](Self::with) for async callers: awaits the writer's answer
    /// instead of blocking a runtime thread.
    pub(crate) async fn with_async<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Connection) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        self.writer.call_async(f).await
    }

    /// Runs the read `f` on this thread, on the read-only connection. It sees
    /// every write that returned before it.
    pub(crate) fn read<T>(
        &self,
        f: impl FnOnce(&Connection) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        self.reader.read(f)
    }

    pub fn create(&self, profile_id: &str) -> Result<SessionMeta, StoreError> {
        let id = uuid::Uuid::new_v4().to_string();
        let now = now_ms();
        let (sid, profile) = (id.clone(), profile_id.to_string());
        self.with(move |c| {
            c.execute(
                "INSERT INTO sessions (id, profile_id, created_at, last_active) VALUES (?1, ?2, ?3, ?3)",
                params![sid, profile, now],
            )?;
            Ok(())
        })?;
        self.meta(&id)?.ok_or(StoreError::NotFound(id))
    }

    pub fn meta(&self, id: &str) -> Result<Option<SessionMeta>, StoreError> {
        self.read(|c| {
            Ok(c.query_row(
                &format!("SELECT {META_COLS} FROM sessions s WHERE s.id = ?1"),
                [id],
                meta_from_row,
            )
            .optional()?)
        })
    }

    /// Finds a session by full id, unique id prefix, or 1-based position in
    /// [`list`](Self::list).
    pub fn resolve(&self, key: &str) -> Result<SessionMeta, StoreError> {
        let key = key.trim();
        if let Some(m) = self.meta(key)? {
            return Ok(m);
        }
        let all = self.list()?;
        if let Ok(n) = key.parse::<usize>()
            && n >= 1
            && n <= all.len()
            && key.len() <= 4
        {
            return Ok(all[n - 1].clone());
        }
        let mut hits = all
            .into_iter()
            .filter(|m| !key.is_empty() && m.id.starts_with(key));
        match (hits.next(), hits.next()) {
            (Some(m), None) => Ok(m),
            (Some(_), Some(_)) => Err(StoreError::Ambiguous(key.to_string())),
            _ => Err(StoreError::NotFound(key.to_string())),
        }
    }

    /// Pinned first, then most recently active.
    pub fn list(&self) -> Result<Vec<SessionMeta>, StoreError> {
        self.read(|c| {
            let mut st = c.prepare(&format!(
                "SELECT {META_COLS} FROM sessions s ORDER BY s.pinned DESC, s.last_active DESC, s.rowid DESC"
            ))?;
            let rows = st.query_map([], meta_from_row)?.collect::<Result<Vec<_>, _>>()?;
            Ok(rows)
        })
    }

    pub(super) fn messages(
        c: &Connection,
        id: &str,
        buffer: Buffer,
    ) -> Result<Vec<StoredMessage>, StoreError> {
        let mut st = c.prepare_cached(&format!(
            "SELECT id, {}, kind, success, created_at, rewound, display
             FROM messages WHERE session_id = ?1 AND buffer = ?2 AND (?2 = 0 OR rewound = 0) ORDER BY id",
            rows::MESSAGE_COLS
        ))?;
        let rows = st
            .query_map(params![id, buffer.code()], message_from_row)?
            .collect::<Result<Vec<_>, _>>()?;
        Ok(rows)
    }

    /// Loads a whole session as it is stored, for a reader: an unpaired tool
    /// call may still be running in the navi that holds the session, and
    /// only that navi may answer it (see [`load_held`](Self::load_held)).
    pub fn load(&self, id: &str) -> Result<Option<Session>, StoreError> {
        let Some(meta) = self.meta(id)? else {
            return Ok(None);
        };
        let read = self.read_buffers(id)?;
        Ok(Some(Session {
            meta,
            display: read.display,
            context: read.context,
        }))
    }

    /// Loads a whole session for its writer (the holder of `lock`): tool
    /// calls left without a result by a crash get an "interrupted" result,
    /// and deltas of a stream cut short are folded in, written back so the
    /// repair happens once.
    pub fn load_held(&self, lock: &SessionLock) -> Result<Option<Session>, StoreError> {
        let id = lock.session();
        let Some(meta) = self.meta(id)? else {
            return Ok(None);
        };
        let read = self.read_buffers(id)?;
        let (mut display, mut context) = (read.display, read.context);
        if read.had_deltas {
            // A stream cut short (crash) left deltas: fold them in for good.
            self.fold_deltas(id)?;
        }
        if repair_unpaired(&mut display) {
            // Repairs land at the tail in practice (the crash was mid-tool); the
            // display buffer is append-only, so the repaired rows are appended.
            let added: Vec<StoredMessage> = display.iter().filter(|m| m.id == 0).cloned().collect();
            for m in &added {
                self.append(id, Buffer::Display, m)?;
            }
            display = self.read(|c| Self::messages(c, id, Buffer::Display))?;
        }
        if repair_unpaired(&mut context) {
            self.replace_context(id, &context)?;
            context = self.read(|c| Self::messages(c, id, Buffer::Context))?;
        }
        Ok(Some(Session {
            meta,
            display,
            context,
        }))
    }

    fn insert(
        c: &Connection,
        id: &str,
        buffer: Buffer,
        m: &StoredMessage,
    ) -> Result<i64, StoreError> {
        let v = rows::columns(&m.msg);
        // Display data is for showing, so only display rows keep it.
        let display = m
            .display
            .as_ref()
            .filter(|_| buffer == Buffer::Display)
            .and_then(|d| serde_json::to_string(d).ok());
        let mut st = c.prepare_cached(
            "INSERT INTO messages (session_id, buffer, role, content, thinking, tool_calls, tool_call_id, tool_name, images, kind, success, created_at, display, blocks)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
        )?;
        st.execute(params![
            id,
            buffer.code(),
            m.msg.role.as_str(),
            v.content,
            v.thinking,
            v.tool_calls,
            v.tool_call_id,
            v.tool_name,
            v.images,
            m.kind.as_str(),
            m.success.map(i64::from),
            m.created_at,
            display,
            v.blocks
        ])?;
        Ok(c.last_insert_rowid())
    }

    fn touch_after_insert(c: &Connection, id: &str, m: &StoredMessage) -> Result<(), StoreError> {
        c.prepare_cached("UPDATE sessions SET last_active = ?2 WHERE id = ?1")?
            .execute(params![id, now_ms()])?;
        if m.msg.role == Role::User && m.kind == MessageKind::Message {
            c.prepare_cached("UPDATE sessions SET title = ?2 WHERE id = ?1 AND title = ''")?
                .execute(params![id, title_from(&m.msg.text())])?;
        }
        Ok(())
    }

    /// Appends one message to one buffer, durably. Returns its row id.
    pub fn append(&self, id: &str, buffer: Buffer, m: &StoredMessage) -> Result<i64, StoreError> {
        let (id, m) = (id.to_string(), m.clone());
        self.with(move |c| {
            let tx = c.transaction()?;
            let row = Self::insert(&tx, &id, buffer, &m)?;
            Self::touch_after_insert(&tx, &id, &m)?;
            tx.commit()?;
            Ok(row)
        })
    }

    /// Appends one message to both buffers in one transaction; returns the
    /// (display, context) row ids.
    pub fn append_both(&self, id: &str, m: &StoredMessage) -> Result<(i64, i64), StoreError> {
        let (id, m) = (id.to_string(), m.clone());
        self.with(move |c| Self::insert_both(c, &id, &m))
    }

    /// [`append_both`](Self::append_both) for async callers.
    pub async fn append_both_async(
        &self,
        id: &str,
        m: &StoredMessage,
    ) -> Result<(i64, i64), StoreError> {
        let (id, m) = (id.to_string(), m.clone());
        self.with_async(move |c| Self::insert_both(c, &id, &m))
            .await
    }

    fn insert_both(
        c: &mut Connection,
        id: &str,
        m: &StoredMessage,
    ) -> Result<(i64, i64), StoreError> {
        let tx = c.transaction()?;
        let d = Self::insert(&tx, id, Buffer::Display, m)?;
        let x = Self::insert(&tx, id, Buffer::Context, m)?;
        Self::touch_after_insert(&tx, id, m)?;
        tx.commit()?;
        Ok((d, x))
    }

    /// Replaces the whole context buffer (compression, repair) atomically.
    pub(crate) fn replace_context(
        &self,
        id: &str,
        messages: &[StoredMessage],
    ) -> Result<(), StoreError> {
        let (id, messages) = (id.to_string(), messages.to_vec());
        self.with(move |c| {
            let tx = c.transaction()?;
            tx.execute(
                "DELETE FROM messages WHERE session_id = ?1 AND buffer = 1 AND rewound = 0",
                [&id],
            )?;
            for m in &messages {
                Self::insert(&tx, &id, Buffer::Context, m)?;
            }
            tx.commit()?;
            Ok(())
        })
    }

    fn update_one(
        &self,
        sql: &'static str,
        id: &str,
        value: impl rusqlite::ToSql + Send + 'static,
    ) -> Result<(), StoreError> {
        let sid = id.to_string();
        let n = self.with(move |c| Ok(c.execute(sql, params![sid, value])?))?;
        if n == 0 {
            return Err(StoreError::NotFound(id.to_string()));
        }
        Ok(())
    }

    pub fn set_pinned(&self, id: &str, pinned: bool) -> Result<(), StoreError> {
        self.update_one(
            "UPDATE sessions SET pinned = ?2 WHERE id = ?1",
            id,
            i64::from(pinned),
        )
    }

    pub fn rename(&self, id: &str, title: &str) -> Result<(), StoreError> {
        self.update_one(
            "UPDATE sessions SET title = ?2 WHERE id = ?1",
            id,
            title.trim().to_string(),
        )
    }

    pub(crate) fn set_profile(&self, id: &str, profile_id: &str) -> Result<(), StoreError> {
        self.update_one(
            "UPDATE sessions SET profile_id = ?2 WHERE id = ?1",
            id,
            profile_id.to_string(),
        )
    }

    pub fn set_context_tokens(&self, id: &str, tokens: u64) -> Result<(), StoreError> {
        self.update_one(
            "UPDATE sessions SET context_token_count = ?2 WHERE id = ?1",
            id,
            tokens as i64,
        )
    }

    /// Deletes a session and its messages; refused while it is open (in
    /// another navi, or in an open session of this one: delete that through
    /// its lock with [`delete_held`](Self::delete_held)). False when there
    /// was none.
    pub fn delete(&self, id: &str) -> Result<bool, StoreError> {
        let lock = self.lock(id)?;
        self.delete_held(lock)
    }

    /// Deletes the session `lock` holds, and its lock file.
    pub fn delete_held(&self, lock: SessionLock) -> Result<bool, StoreError> {
        let sid = lock.session().to_string();
        let deleted =
            self.with(move |c| Ok(c.execute("DELETE FROM sessions WHERE id = ?1", [sid])? > 0))?;
        lock.remove_file();
        Ok(deleted)
    }
}

/// SQLite said the database is busy or locked.
fn busy(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
    )
}
