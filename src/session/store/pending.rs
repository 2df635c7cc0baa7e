//! Pending sessions: what an interactive front end opens for a new session.
//!
//! A pending session has an id and a profile (and may be renamed, pinned or
//! switched to another profile) but no database row and no lock file until
//! its first turn [materializes](SessionStore::materialize) it. Quitting,
//! `/session new` again or a crash before the first message leaves nothing
//! behind; other processes (`navi sessions list`) never see it.
use super::{SessionStore, StoreError};
use crate::session::{SessionMeta, now_ms};
use rusqlite::params;

impl SessionStore {
    /// A new session that exists only in this process until its first turn.
    pub(crate) fn create_pending(&self, profile_id: &str) -> SessionMeta {
        let now = now_ms();
        let meta = SessionMeta {
            id: uuid::Uuid::new_v4().to_string(),
            profile_id: profile_id.to_string(),
            title: String::new(),
            pinned: false,
            created_at: now,
            last_active: now,
            context_token_count: 0,
            message_count: 0,
        };
        if let Ok(mut p) = self.pending.lock() {
            p.insert(meta.id.clone(), meta.clone());
        }
        meta
    }

    /// Whether `id` is a pending session of this process (no row yet).
    pub(crate) fn is_pending(&self, id: &str) -> bool {
        self.pending.lock().is_ok_and(|p| p.contains_key(id))
    }

    pub(super) fn pending_meta(&self, id: &str) -> Option<SessionMeta> {
        self.pending.lock().ok()?.get(id).cloned()
    }

    /// Applies `edit` to a pending session's metadata; false when `id` is
    /// not pending (the caller then updates the row).
    pub(super) fn edit_pending(&self, id: &str, edit: impl FnOnce(&mut SessionMeta)) -> bool {
        match self.pending.lock() {
            Ok(mut p) => p.get_mut(id).map(edit).is_some(),
            Err(_) => false,
        }
    }

    /// Forgets a pending session; true when `id` was one.
    pub(crate) fn discard_pending(&self, id: &str) -> bool {
        self.pending
            .lock()
            .is_ok_and(|mut p| p.remove(id).is_some())
    }

    /// Turns a pending session into a real one: takes its lock (this process
    /// becomes its one writer), then writes its row with the profile, title
    /// and pin chosen so far. A session that is not pending is left as is.
    /// When the lock cannot be taken the session stays pending and the
    /// error says why.
    pub(crate) fn materialize(&self, id: &str) -> Result<(), StoreError> {
        let Some(meta) = self.pending_meta(id) else {
            return Ok(());
        };
        self.locks.try_lock(id)?;
        let now = now_ms();
        let row = meta.clone();
        let written = self.with(move |c| {
            let meta = row;
            c.execute(
                "INSERT INTO sessions (id, profile_id, title, pinned, created_at, last_active)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?5)",
                params![
                    meta.id,
                    meta.profile_id,
                    meta.title,
                    i64::from(meta.pinned),
                    now
                ],
            )?;
            Ok(())
        });
        match written {
            Ok(()) => {
                self.discard_pending(id);
                Ok(())
            }
            Err(e) => {
                self.locks.remove(id);
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
    fn pending_session_has_no_row_and_no_lock_file_until_materialized() {
        let (dir, s) = store();
        let m = s.create_pending("developer");
        assert!(s.list().unwrap().is_empty());
        assert_eq!(s.resolve(&m.id).unwrap().id, m.id);
        s.lock(&m.id).unwrap();
        assert!(
            !dir.path()
                .join("s.db-locks")
                .join(format!("{}.lock", m.id))
                .exists()
        );
        s.set_profile(&m.id, "writer").unwrap();
        s.rename(&m.id, " My title ").unwrap();
        s.set_pinned(&m.id, true).unwrap();
        assert!(s.list().unwrap().is_empty());
        let loaded = s.load(&m.id).unwrap().unwrap();
        assert!(loaded.display.is_empty());

        s.materialize(&m.id).unwrap();
        assert!(!s.is_pending(&m.id));
        assert!(s.holds_lock(&m.id));
        assert!(
            dir.path()
                .join("s.db-locks")
                .join(format!("{}.lock", m.id))
                .exists()
        );
        let rows = s.list().unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].id, m.id);
        assert_eq!(rows[0].profile_id, "writer");
        assert_eq!(rows[0].title, "My title");
        assert!(rows[0].pinned);
        // A second call is a no-op.
        s.materialize(&m.id).unwrap();
        assert_eq!(s.list().unwrap().len(), 1);
    }

    #[test]
    fn leaving_or_deleting_a_pending_session_writes_nothing() {
        let (_dir, s) = store();
        let a = s.create_pending("developer");
        s.unlock(&a.id);
        assert!(!s.is_pending(&a.id));
        let b = s.create_pending("developer");
        assert!(s.delete(&b.id).unwrap());
        assert!(!s.is_pending(&b.id));
        assert!(s.list().unwrap().is_empty());
        assert!(matches!(s.resolve(&a.id), Err(StoreError::NotFound(_))));
    }

    #[test]
    fn materialize_reports_a_lock_it_cannot_take_and_stays_pending() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("s.db");
        let s = SessionStore::open(&db).unwrap();
        let m = s.create_pending("developer");
        // Another navi (here: another store on the same database) holds it.
        let other = SessionStore::open(&db).unwrap();
        other.lock(&m.id).unwrap();
        let e = s.materialize(&m.id).unwrap_err();
        assert!(e.to_string().contains("busy"), "{e}");
        assert!(s.is_pending(&m.id));
        assert!(s.list().unwrap().is_empty());
    }
}
