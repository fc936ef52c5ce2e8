//! `checkpoints` in settings: the store of file contents sessions are rewound with.

use serde::{Deserialize, Serialize};

/// The checkpoint store (`~/.rab/checkpoints`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct CheckpointSettings {
    /// Store file contents before tools change them (on by default).
    pub enabled: bool,
    /// Contents not used for this many days are dropped.
    pub max_age_days: u32,
    /// The store is kept under this many megabytes, the least recently used dropped.
    pub max_size_mb: u64,
}

impl Default for CheckpointSettings {
    fn default() -> Self {
        Self { enabled: true, max_age_days: 30, max_size_mb: 2048 }
    }
}
