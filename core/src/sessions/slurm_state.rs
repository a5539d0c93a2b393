//! What the Slurm pool keeps in memory: why each of its sessions waits, and the jobs the
//! watcher last wrote down.

use std::collections::{HashMap, HashSet};

/// Why a Slurm session waits and when Slurm expects it to start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlurmWait {
    /// Slurm's pending reason (`Resources`, `Priority`).
    pub reason: String,
    /// The same for a student.
    pub words: String,
    /// Slurm's estimated start (its backfill plan), when it has one.
    pub expected_start_ms: Option<i64>,
    /// Place among the portal's pending jobs of the same profile and partition, in Slurm's
    /// order: 1 is next.
    pub position: usize,
    pub profile: String,
    pub partition: String,
}

/// The Slurm pool's own state: why each waiting
/// session waits as the watcher last read it, and the watcher's last record of the jobs
/// it saw running (written at most every half minute, not every one-second pass: each
/// record is a database write).
#[derive(Default)]
pub(super) struct SlurmState {
    pub waits: std::sync::Mutex<HashMap<String, SlurmWait>>,
    pub seen: std::sync::Mutex<SeenRecord>,
}

/// When the watcher last wrote down the jobs it saw running, and which.
#[derive(Debug, Default)]
pub(super) struct SeenRecord {
    pub at_ms: i64,
    pub jobs: HashSet<u64>,
}
