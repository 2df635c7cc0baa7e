//! Pending sessions: what a front end opens for a new session that stays
//! off the disk until its first message.
//!
//! A pending session has an id and metadata (a profile, maybe a title, a
//! pin) that its open session keeps in memory, but no database row and no
//! lock file until its first turn [materializes](SessionStore::materialize)
//! it. Quitting, `/session new` again or a crash before the first message
//! leaves nothing behind; other processes (`navi sessions list`) never see
//! it.
use super::{SessionStore, StoreError};
use crate::session::lock::SessionLock;
use crate::session::{SessionMeta, now_ms};
use rusqlite::params;

/// The metadata of a new session that is not stored yet.
pub(crate) fn new_meta(profile_id: &str) -> SessionMeta {
    let now = now_ms();
    SessionMeta {
        id: uuid::Uuid::new_v4().to_string(),
        profile_id: profile_id.to_string(),
        title: String::new(),
        pinned: false,
        created_at: now,
        last_active: now,
        context_token_count: 0,
        message_count: 0,
        cwd: None,
        project: None,
    }
}

impl SessionStore {
    /// Stores a pending session: takes its lock (this process becomes its
    /// one writer), then writes its row with the profile, title and pin
    /// chosen so far. When the lock cannot be taken nothing is written and
    /// the error says why.
    pub(crate) fn materialize(&self, meta: &SessionMeta) -> Result<SessionLock, StoreError> {
        let lock = self.lock(&meta.id)?;
        let now = now_ms();
        let row = meta.clone();
        let written = self.with(move |c| {
            let meta = row;
            c.execute(
                "INSERT INTO sessions (id, profile_id, title, pinned, created_at, last_active, cwd, project)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?5, ?6, ?7)",
                params![
                    meta.id,
                    meta.profile_id,
                    meta.title,
                    i64::from(meta.pinned),
                    now,
                    meta.cwd,
                    meta.project
                ],
            )?;
            Ok(())
        });
        match written {
            Ok(()) => Ok(lock),
            Err(e) => {
                lock.remove_file();
                Err(e)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store() -> (tempfile::TempDir, SessionStore) {
        let dir = tempfile::tempdir().unwrap();
        let s = SessionStore::open(&dir.path().join("s.db")).unwrap();
        (dir, s)
    }

    #[test]
    fn a_pending_session_has_no_row_and_no_lock_file_until_materialized() {
        let (dir, s) = store();
        let mut m = new_meta("writer");
        m.title = "My title".into();
        m.pinned = true;
        assert!(s.list().unwrap().is_empty());
        let file = dir.path().join("s.db-locks").join(format!("{}.lock", m.id));
        assert!(!file.exists());
        let lock = s.materialize(&m).unwrap();
        assert_eq!(lock.session(), m.id);
        assert!(file.exists());
        let rows = s.list().unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].id, m.id);
        assert_eq!(rows[0].profile_id, "writer");
        assert_eq!(rows[0].title, "My title");
        assert!(rows[0].pinned);
        assert!(s.locked_elsewhere(&m.id), "held by the lock just taken");
        drop(lock);
        assert!(!s.locked_elsewhere(&m.id));
    }

    #[test]
    fn one_connection_reads_see_its_own_writes_and_other_processes() {
        // `navi run`: reads share the writer's connection.
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("s.db");
        let s = SessionStore::open_with(&db, true).unwrap();
        let m = new_meta("writer");
        let lock = s.materialize(&m).unwrap();
        assert_eq!(s.list().unwrap().len(), 1);
        drop(lock);
        // Committed to the file: another store (another navi) sees it…
        let other = SessionStore::open(&db).unwrap();
        assert_eq!(other.list().unwrap()[0].id, m.id);
        // …and what that one writes is not hidden by a stale read.
        let n = new_meta("developer");
        drop(other.materialize(&n).unwrap());
        let ids: Vec<String> = s.list().unwrap().into_iter().map(|r| r.id).collect();
        assert!(ids.contains(&n.id) && ids.contains(&m.id), "{ids:?}");
    }

    #[test]
    fn materialize_reports_a_lock_it_cannot_take_and_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("s.db");
        let s = SessionStore::open(&db).unwrap();
        let m = new_meta("developer");
        // Another navi (here: another store on the same database) holds it.
        let other = SessionStore::open(&db).unwrap();
        let _held = other.lock(&m.id).unwrap();
        let e = s.materialize(&m).unwrap_err();
        assert!(e.to_string().contains("busy"), "{e}");
        assert!(s.list().unwrap().is_empty());
    }
}
