//! Plain data a front end shows: a session's metadata and a model the
//! server offers. Defined here so front ends need neither the store nor a
//! backend to name them.
use serde::{Deserialize, Serialize};

/// A session as listed: its id, profile, title and counters.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionMeta {
    pub id: String,
    pub profile_id: String,
    pub title: String,
    pub pinned: bool,
    pub created_at: i64,
    pub last_active: i64,
    pub context_token_count: u64,
    pub message_count: u64,
    /// The directory the session was started in (its workspace); `None`
    /// for sessions stored before navi recorded it (then left out of JSON,
    /// which stays what older releases wrote).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// The project it belongs to: `cwd`'s git top level, else `cwd`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
}

/// A model a server offers.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelInfo {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context_length: Option<u64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub capabilities: Vec<String>,
}

/// A profile as a front end offers it (ACP modes, `/profile list`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProfileSummary {
    pub id: String,
    pub name: String,
    pub description: String,
}

/// Milliseconds since the Unix epoch (0 when the clock is before it).
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}
