//! Per-session key/value state (pins, loaded tools, checkpoints, the
//! learnt token ratio): the `session_state` table.
use super::{SessionStore, StoreError};
use rusqlite::{OptionalExtension, params};

impl SessionStore {
    pub(crate) fn put_state(&self, id: &str, key: &str, value: &str) -> Result<(), StoreError> {
        let (id, key, value) = (id.to_string(), key.to_string(), value.to_string());
        self.with(move |c| {
            c.prepare_cached(
                "INSERT INTO session_state (session_id, key, value) VALUES (?1, ?2, ?3)
                 ON CONFLICT(session_id, key) DO UPDATE SET value = excluded.value",
            )?
            .execute(params![id, key, value])?;
            Ok(())
        })
    }

    /// Removes one value; nothing happens when there is none.
    pub(crate) fn delete_state(&self, id: &str, key: &str) -> Result<(), StoreError> {
        let (id, key) = (id.to_string(), key.to_string());
        self.with(move |c| {
            c.prepare_cached("DELETE FROM session_state WHERE session_id = ?1 AND key = ?2")?
                .execute(params![id, key])?;
            Ok(())
        })
    }

    pub(crate) fn get_state(&self, id: &str, key: &str) -> Result<Option<String>, StoreError> {
        self.read(|c| {
            Ok(c.query_row(
                "SELECT value FROM session_state WHERE session_id = ?1 AND key = ?2",
                params![id, key],
                |r| r.get(0),
            )
            .optional()?)
        })
    }
}
