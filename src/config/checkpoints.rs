//! `[checkpoints]`: whether and how much of the workspace each turn records.
use serde::{Deserialize, Serialize};

/// `[checkpoints]` (docs/checkpoints.md).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CheckpointConfig {
    /// Off: no snapshots, `/undo` has nothing to restore.
    pub enabled: bool,
    /// A workspace with more files than this (those git would record) is
    /// not recorded; navi says so when a turn writes.
    pub max_files: usize,
}

impl Default for CheckpointConfig {
    fn default() -> Self {
        CheckpointConfig {
            enabled: true,
            max_files: 200_000,
        }
    }
}
