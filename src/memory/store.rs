//! Memory tables in the session database (schema migration 3), reached
//! through the session store's connection: one file, one writer lock.
use super::{Fact, FactStatus, NewFact, render};
use crate::llm::Role;
use crate::session::{MessageKind, SessionStore, StoreError, now_ms};
use rusqlite::{Connection, ErrorCode, OptionalExtension, params};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What happened to one extracted fact.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Upserted {
    Added,
    Updated,
    Unchanged,
    /// Forgotten or rejected before (this value, or anything said before
    /// the decision), or edited by the user: not proposed again.
    Tombstoned,
}

pub struct MemoryStore {
    db: Arc<SessionStore>,
}

const FACT_COLS: &str =
    "id, category, key, value, status, source_session, source_message, updated_at";

fn fact_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Fact> {
    Ok(Fact {
        id: r.get(0)?,
        category: r.get(1)?,
        key: r.get(2)?,
        value: r.get(3)?,
        status: FactStatus::parse(&r.get::<_, String>(4)?),
        source_session: r.get(5)?,
        source_message: r.get(6)?,
        updated_at: r.get(7)?,
    })
}

fn is_busy(e: &StoreError) -> bool {
    matches!(
        e,
        StoreError::Sql(rusqlite::Error::SqliteFailure(f, _))
            if matches!(f.code, ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
    )
}

impl MemoryStore {
    pub fn new(db: Arc<SessionStore>) -> Self {
        MemoryStore { db }
    }

    /// Runs the write `f` on the session store's writer thread, retrying
    /// with back-off while another navi process holds the database (on top
    /// of SQLite's own busy timeout). The back-off sleeps on the caller's
    /// thread, not the writer's.
    fn with<T: Send + 'static>(
        &self,
        f: impl FnMut(&mut Connection) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        let f = Arc::new(Mutex::new(f));
        let attempt = || {
            let f = f.clone();
            self.db.with(move |c| {
                let mut f = f.lock().map_err(|_| StoreError::Poisoned)?;
                (*f)(c)
            })
        };
        let mut delay = Duration::from_millis(50);
        for _ in 0..4 {
            match attempt() {
                Err(e) if is_busy(&e) => {
                    tracing::warn!("memory: database busy, retrying in {delay:?}");
                    std::thread::sleep(delay);
                    delay *= 4;
                }
                other => return other,
            }
        }
        attempt()
    }

    /// Runs the read `f` on the session store's read connection.
    fn read<T>(
        &self,
        f: impl FnOnce(&rusqlite::Connection) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        self.db.read(f)
    }

    /// Facts ordered by category, then most recently updated.
    pub fn facts(&self, status: Option<FactStatus>) -> Result<Vec<Fact>, StoreError> {
        self.read(|c| {
            let mut st = c.prepare(&format!(
                "SELECT {FACT_COLS} FROM memory_facts WHERE (?1 IS NULL OR status = ?1)
                 ORDER BY category, updated_at DESC, id"
            ))?;
            let rows = st
                .query_map([status.map(FactStatus::as_str)], fact_from_row)?
                .collect::<Result<Vec<_>, _>>()?;
            Ok(rows)
        })
    }

    pub(crate) fn get(&self, id: i64) -> Result<Option<Fact>, StoreError> {
        self.read(|c| {
            Ok(c.query_row(
                &format!("SELECT {FACT_COLS} FROM memory_facts WHERE id = ?1"),
                [id],
                fact_from_row,
            )
            .optional()?)
        })
    }

    /// Facts whose category, key or value contains any of the query's words
    /// (case-insensitive), best matches (most words) first. A few hundred
    /// facts at most: a scan beats keeping an FTS index in step.
    pub fn search(
        &self,
        query: &str,
        limit: usize,
        status: Option<FactStatus>,
    ) -> Result<Vec<Fact>, StoreError> {
        let words: Vec<String> = query
            .split(|c: char| !c.is_alphanumeric() && c != '_' && c != '-' && c != '.')
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect();
        if words.is_empty() {
            return Ok(Vec::new());
        }
        let mut scored: Vec<(usize, Fact)> = self
            .facts(status)?
            .into_iter()
            .filter_map(|f| {
                let hay = format!("{} {} {}", f.category, f.key, f.value).to_lowercase();
                let n = words.iter().filter(|w| hay.contains(w.as_str())).count();
                (n > 0).then_some((n, f))
            })
            .collect();
        scored.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.updated_at.cmp(&a.1.updated_at)));
        Ok(scored.into_iter().take(limit).map(|(_, f)| f).collect())
    }

    /// Inserts or updates one fact from `session`. A changed value of an
    /// accepted fact goes back to the inbox unless `auto_accept`.
    pub fn upsert(
        &self,
        f: &NewFact,
        session: Option<&str>,
        auto_accept: bool,
    ) -> Result<Upserted, StoreError> {
        let now = now_ms();
        let status = if auto_accept {
            FactStatus::Active
        } else {
            FactStatus::Proposed
        };
        let (f, session) = (f.clone(), session.map(String::from));
        self.with(move |c| {
            let tx = c.transaction()?;
            if let (Some(s), Some(m)) = (&session, f.source_message) {
                let dead: bool = tx.query_row(
                    "SELECT EXISTS(SELECT 1 FROM memory_tombstones WHERE category = ?1 AND key = ?2
                     AND source_session = ?3 AND source_message = ?4)",
                    params![f.category, f.key, s, m],
                    |r| r.get(0),
                )?;
                if dead {
                    return Ok(Upserted::Tombstoned);
                }
            }
            // The user's decisions on this key: a forgotten or rejected value
            // never comes back, nor anything said before the decision.
            let said_at: Option<i64> = match (&session, f.source_message) {
                (Some(s), Some(m)) => tx
                    .query_row(
                        "SELECT created_at FROM messages WHERE id = ?1 AND session_id = ?2",
                        params![m, s],
                        |r| r.get(0),
                    )
                    .optional()?,
                _ => None,
            };
            let decided: bool = tx.query_row(
                "SELECT EXISTS(SELECT 1 FROM memory_decisions WHERE category = ?1 AND key = ?2
                 AND (lower(trim(value)) = lower(trim(?3)) OR ?4 IS NULL OR created_at >= ?4))",
                params![f.category, f.key, f.value, said_at],
                |r| r.get(0),
            )?;
            if decided {
                return Ok(Upserted::Tombstoned);
            }
            let old: Option<(String, bool)> = tx
                .query_row(
                    "SELECT value, user_set FROM memory_facts WHERE category = ?1 AND key = ?2",
                    params![f.category, f.key],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .optional()?;
            let out = match old {
                // The user set this value: extraction never changes it.
                Some((_, true)) => Upserted::Tombstoned,
                Some((v, _)) if v == f.value => Upserted::Unchanged,
                Some(_) => {
                    tx.execute(
                        "UPDATE memory_facts SET value = ?3, status = ?4, source_session = ?5,
                         source_message = ?6, updated_at = ?7 WHERE category = ?1 AND key = ?2",
                        params![f.category, f.key, f.value, status.as_str(), session, f.source_message, now],
                    )?;
                    Upserted::Updated
                }
                None => {
                    tx.execute(
                        "INSERT INTO memory_facts (category, key, value, status, source_session,
                         source_message, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7)",
                        params![f.category, f.key, f.value, status.as_str(), session, f.source_message, now],
                    )?;
                    Upserted::Added
                }
            };
            tx.commit()?;
            Ok(out)
        })
    }

    /// Accepts a proposed fact, optionally with a corrected value. A value
    /// the user gives is theirs: extraction never overwrites it.
    pub fn accept(&self, id: i64, value: Option<&str>) -> Result<Option<Fact>, StoreError> {
        let value = value.map(|v| v.trim().to_string());
        let n = self.with(move |c| {
            Ok(c.execute(
                "UPDATE memory_facts SET status = 'active', value = COALESCE(?2, value), updated_at = ?3,
                 user_set = MAX(user_set, ?2 IS NOT NULL) WHERE id = ?1",
                params![id, value, now_ms()],
            )?)
        })?;
        if n == 0 {
            return Ok(None);
        }
        self.rebuild_summary()?;
        self.get(id)
    }

    /// Deletes the facts matching `pred` and tombstones them; rebuilds the summary.
    fn remove(&self, facts: Vec<Fact>) -> Result<Vec<Fact>, StoreError> {
        if facts.is_empty() {
            return Ok(facts);
        }
        let now = now_ms();
        let gone = facts.clone();
        self.with(move |c| {
            let tx = c.transaction()?;
            for f in &gone {
                if let (Some(s), Some(m)) = (&f.source_session, f.source_message) {
                    tx.execute(
                        "INSERT OR IGNORE INTO memory_tombstones (category, key, source_session, source_message, created_at)
                         VALUES (?1, ?2, ?3, ?4, ?5)",
                        params![f.category, f.key, s, m, now],
                    )?;
                }
                // The decision itself, for every session (see `upsert`).
                tx.execute(
                    "INSERT INTO memory_decisions (category, key, value, created_at) VALUES (?1, ?2, ?3, ?4)
                     ON CONFLICT (category, key, value) DO UPDATE SET created_at = excluded.created_at",
                    params![f.category, f.key, f.value, now],
                )?;
                tx.execute("DELETE FROM memory_facts WHERE id = ?1", [f.id])?;
            }
            tx.commit()?;
            Ok(())
        })?;
        self.rebuild_summary()?;
        Ok(facts)
    }

    /// Rejects (or forgets) one fact by id.
    pub(crate) fn remove_id(&self, id: i64) -> Result<Option<Fact>, StoreError> {
        let Some(f) = self.get(id)? else {
            return Ok(None);
        };
        Ok(self.remove(vec![f])?.into_iter().next())
    }

    /// Forgets every fact with this key (case-insensitive), optionally only in
    /// one category. Returns what was forgotten.
    pub fn forget(&self, key: &str, category: Option<&str>) -> Result<Vec<Fact>, StoreError> {
        let key = key.trim().to_lowercase();
        let cat = category.map(|c| c.trim().to_lowercase());
        let hits: Vec<Fact> = self
            .facts(None)?
            .into_iter()
            .filter(|f| f.key.to_lowercase() == key)
            .filter(|f| cat.as_ref().is_none_or(|c| &f.category.to_lowercase() == c))
            .collect();
        self.remove(hits)
    }

    /// The summary the model sees, if there is one.
    pub fn summary(&self) -> Result<Option<String>, StoreError> {
        self.read(|c| {
            Ok(
                c.query_row("SELECT content FROM memory_summary WHERE id = 1", [], |r| {
                    r.get::<_, String>(0)
                })
                .optional()?
                .filter(|s| !s.trim().is_empty()),
            )
        })
    }

    /// Rebuilds the summary from the accepted facts; writes only on change.
    pub(crate) fn rebuild_summary(&self) -> Result<String, StoreError> {
        let text = render::summary(&self.facts(Some(FactStatus::Active))?);
        if self.summary()?.unwrap_or_default() != text {
            let text = text.clone();
            self.with(move |c| {
                c.execute(
                    "INSERT INTO memory_summary (id, content, updated_at) VALUES (1, ?1, ?2)
                     ON CONFLICT(id) DO UPDATE SET content = excluded.content, updated_at = excluded.updated_at",
                    params![text, now_ms()],
                )?;
                Ok(())
            })?;
        }
        Ok(text)
    }

    /// Whether the session is open in another navi (its lock is held
    /// there): such a session is never extracted.
    pub(crate) fn open_elsewhere(&self, session: &str) -> bool {
        self.db.locked_elsewhere(session)
    }

    /// Sessions idle for `idle_ms` with activity since their last extraction,
    /// most recent first; `exclude` (the open session) is never one of them.
    pub fn stale_sessions(
        &self,
        idle_ms: i64,
        exclude: &[&str],
    ) -> Result<Vec<String>, StoreError> {
        let now = now_ms();
        let ids: Vec<String> = self.read(|c| {
            let mut st = c.prepare(
                "SELECT s.id FROM sessions s LEFT JOIN session_memory_state m ON m.session_id = s.id
                 WHERE s.last_active <= ?1 AND (m.extracted_at IS NULL OR m.extracted_at < s.last_active)
                 AND (m.lock_until IS NULL OR m.lock_until < ?2)
                 ORDER BY s.last_active DESC",
            )?;
            let rows = st
                .query_map(params![now - idle_ms, now], |r| r.get(0))?
                .collect::<Result<Vec<_>, _>>()?;
            Ok(rows)
        })?;
        Ok(ids
            .into_iter()
            .filter(|i| !exclude.contains(&i.as_str()))
            .collect())
    }

    /// Claims `session` for extraction by `owner` for `lease`. True when this
    /// caller got it: an atomic UPDATE … WHERE, so of two processes asking at
    /// once exactly one wins, and a claim left by a crashed process expires.
    pub fn claim(&self, session: &str, owner: &str, lease: Duration) -> Result<bool, StoreError> {
        let now = now_ms();
        let until = now + lease.as_millis() as i64;
        let (session, owner) = (session.to_string(), owner.to_string());
        self.with(move |c| {
            c.execute(
                "INSERT OR IGNORE INTO session_memory_state (session_id) VALUES (?1)",
                [&session],
            )?;
            let n = c.execute(
                "UPDATE session_memory_state SET lock_owner = ?2, lock_until = ?3
                 WHERE session_id = ?1 AND (lock_owner IS NULL OR lock_until < ?4)
                 AND (extracted_at IS NULL
                      OR extracted_at < (SELECT last_active FROM sessions WHERE id = ?1))",
                params![session, owner, until, now],
            )?;
            Ok(n == 1)
        })
    }

    /// Marks a claimed session extracted up to message `last_message`.
    pub fn finish(&self, session: &str, owner: &str, last_message: i64) -> Result<(), StoreError> {
        let (session, owner) = (session.to_string(), owner.to_string());
        self.with(move |c| {
            c.execute(
                "UPDATE session_memory_state SET extracted_at = ?3, last_message = MAX(last_message, ?4),
                 lock_owner = NULL, lock_until = NULL WHERE session_id = ?1 AND lock_owner = ?2",
                params![session, owner, now_ms(), last_message],
            )?;
            Ok(())
        })
    }

    /// Gives a claim back without marking the session (the extraction failed).
    pub fn release(&self, session: &str, owner: &str) -> Result<(), StoreError> {
        let (session, owner) = (session.to_string(), owner.to_string());
        self.with(move |c| {
            c.execute(
                "UPDATE session_memory_state SET lock_owner = NULL, lock_until = NULL
                 WHERE session_id = ?1 AND lock_owner = ?2",
                params![session, owner],
            )?;
            Ok(())
        })
    }

    /// The user and assistant messages written since the last extraction, at
    /// most the latest `max`: (display id, role, text).
    pub fn window(
        &self,
        session: &str,
        max: usize,
    ) -> Result<Vec<(i64, Role, String)>, StoreError> {
        let after: i64 = self.read(|c| {
            Ok(c.query_row(
                "SELECT last_message FROM session_memory_state WHERE session_id = ?1",
                [session],
                |r| r.get(0),
            )
            .optional()?
            .unwrap_or(0))
        })?;
        let mut rows: Vec<(i64, Role, String)> = self.read(|c| {
            let mut st = c.prepare(
                // A stream cut short may have left its text in deltas.
                "SELECT id, role, content || COALESCE((SELECT group_concat(d.content, '' ORDER BY d.seq)
                 FROM message_deltas d WHERE d.message_id = messages.id), '') AS text
                 FROM messages WHERE session_id = ?1 AND buffer = 0
                 AND id > ?2 AND kind = ?3 AND role IN ('user', 'assistant') AND text != ''
                 ORDER BY id DESC LIMIT ?4",
            )?;
            let rows = st
                .query_map(
                    params![session, after, MessageKind::Message.as_str(), max as i64],
                    |r| {
                        let role: String = r.get(1)?;
                        let role = if role == "user" {
                            Role::User
                        } else {
                            Role::Assistant
                        };
                        Ok((r.get(0)?, role, r.get(2)?))
                    },
                )?
                .collect::<Result<Vec<_>, _>>()?;
            Ok(rows)
        })?;
        rows.reverse();
        Ok(rows)
    }
}

impl MemoryStore {
    /// The newest display-message id of a session (0 when it has none).
    pub(crate) fn last_display_id(&self, session: &str) -> Result<i64, StoreError> {
        self.read(|c| {
            Ok(c.query_row(
                "SELECT COALESCE(MAX(id), 0) FROM messages WHERE session_id = ?1 AND buffer = 0",
                [session],
                |r| r.get(0),
            )?)
        })
    }
}
