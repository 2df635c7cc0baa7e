//! Long-term memory: facts about the user, extracted from finished sessions,
//! kept in the session database, shown to the model as a short summary.
//!
//! Invariants:
//! - a fact is unique on `(category, key)` and remembers the session and
//!   display-message id it came from;
//! - only *accepted* (`active`) facts feed the summary and `memory_search`;
//!   new facts wait as `proposed` in the inbox unless `[memory].auto_accept`;
//! - the summary is rebuilt whenever the accepted facts change, and only then,
//!   so the request prefix it sits in stays byte-stable between turns;
//! - a forgotten or rejected fact leaves a tombstone: the same message never
//!   proposes it again;
//! - one session is extracted by one process at a time (a claim with an owner
//!   and a lease in `session_memory_state`).

pub mod extract;
pub(crate) mod render;
pub mod store;

pub use store::MemoryStore;

use serde::Serialize;

/// Where a fact stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FactStatus {
    /// Waiting in the inbox for review.
    Proposed,
    /// Accepted: in the summary and in `memory_search` results.
    Active,
}

impl FactStatus {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            FactStatus::Proposed => "proposed",
            FactStatus::Active => "active",
        }
    }

    pub(crate) fn parse(s: &str) -> Self {
        if s == "active" {
            FactStatus::Active
        } else {
            FactStatus::Proposed
        }
    }
}

/// One remembered fact.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Fact {
    pub id: i64,
    pub(crate) category: String,
    pub(crate) key: String,
    pub(crate) value: String,
    pub status: FactStatus,
    /// The session the fact came from (`None` when typed in by hand).
    pub(crate) source_session: Option<String>,
    /// The display-buffer message id it came from.
    pub(crate) source_message: Option<i64>,
    /// Unix milliseconds.
    pub(crate) updated_at: i64,
}

/// A fact as the extraction call states it.
#[derive(Clone, Debug, PartialEq)]
pub struct NewFact {
    pub category: String,
    pub key: String,
    pub value: String,
    pub source_message: Option<i64>,
}
