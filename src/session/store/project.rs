//! Sessions by project: the latest one of a project, a project's list, and
//! list numbers that count within the list the user saw.
//!
//! `sessions.cwd` and `sessions.project` (migration 10) are written once,
//! when a session is stored ([`SessionStore::materialize`]), from the
//! directory it was started in; they are the one place a session's
//! directory is kept. Sessions stored before (both NULL) belong to every
//! project until one opens them: it claims them ([`SessionStore::claim`]).
use super::{META_COLS, SessionStore, StoreError, meta_from_row};
use crate::session::SessionMeta;
use rusqlite::OptionalExtension;

impl SessionStore {
    /// The most recently active session of `project` (or one that belongs
    /// to no project yet) with a message, if any; with `answered`, one that
    /// holds an answer (a session holding only an error is not reopened by
    /// default).
    pub(crate) fn latest_in(
        &self,
        project: &str,
        answered: bool,
    ) -> Result<Option<SessionMeta>, StoreError> {
        let has = if answered {
            "m.role != 'user' AND m.kind != 'error'"
        } else {
            "1 = 1"
        };
        self.read(|c| {
            Ok(c.query_row(
                &format!(
                    "SELECT {META_COLS} FROM sessions s WHERE (s.project = ?1 OR s.project IS NULL)
                     AND EXISTS (SELECT 1 FROM messages m WHERE m.session_id = s.id
                     AND m.buffer = 0 AND {has})
                     ORDER BY s.last_active DESC, s.rowid DESC LIMIT 1"
                ),
                [project],
                meta_from_row,
            )
            .optional()?)
        })
    }

    /// The sessions of `project` (and those of no project yet): pinned
    /// first, then most recently active.
    pub fn list_in(&self, project: &str) -> Result<Vec<SessionMeta>, StoreError> {
        self.read(|c| {
            let mut st = c.prepare(&format!(
                "SELECT {META_COLS} FROM sessions s WHERE s.project = ?1 OR s.project IS NULL
                 ORDER BY s.pinned DESC, s.last_active DESC, s.rowid DESC"
            ))?;
            let rows = st
                .query_map([project], meta_from_row)?
                .collect::<Result<Vec<_>, _>>()?;
            Ok(rows)
        })
    }

    /// Gives a session of no project (stored before navi recorded them) the
    /// directory and project it is opened in; a session that has one keeps it.
    pub(crate) fn claim(&self, id: &str, cwd: &str, project: &str) -> Result<(), StoreError> {
        let (id, cwd, project) = (id.to_string(), cwd.to_string(), project.to_string());
        self.with(move |c| {
            c.execute(
                "UPDATE sessions SET cwd = ?2, project = ?3 WHERE id = ?1 AND project IS NULL",
                rusqlite::params![id, cwd, project],
            )?;
            Ok(())
        })
    }

    /// [`resolve`](Self::resolve) where a list number counts in `project`'s
    /// list (the one `navi sessions list` and `/session list` show); ids
    /// and id prefixes find a session of any project.
    pub fn resolve_in(&self, key: &str, project: &str) -> Result<SessionMeta, StoreError> {
        let key = key.trim();
        if let Some(m) = self.meta(key)? {
            return Ok(m);
        }
        if let Ok(n) = key.parse::<usize>()
            && key.len() <= 4
            && n >= 1
            && let Some(m) = self.list_in(project)?.get(n - 1)
        {
            return Ok(m.clone());
        }
        // An id prefix, in any project.
        let hits = self.read(|c| {
            let mut st = c.prepare(&format!(
                "SELECT {META_COLS} FROM sessions s WHERE substr(s.id, 1, length(?1)) = ?1 LIMIT 2"
            ))?;
            let rows = st
                .query_map([key], meta_from_row)?
                .collect::<Result<Vec<_>, _>>()?;
            Ok(rows)
        })?;
        match hits.as_slice() {
            [m] if !key.is_empty() => Ok(m.clone()),
            [_, _, ..] if !key.is_empty() => Err(StoreError::Ambiguous(key.to_string())),
            _ => Err(StoreError::NotFound(key.to_string())),
        }
    }
}
