//! What the queue keeps between passes: whether this process places queued sessions, one
//! pass at a time, and the shared read of the queue the launch form and the estimates use.

use std::collections::HashMap;

use serde::Serialize;

use super::queue_now::{ExpectedPlan, QueueNow, TypicalLengths};

/// The queue's own state: whether this process places queued sessions, one pass at a
/// time, and whether a pass was asked for during the one under way.
pub(super) struct DispatchState {
    /// Cleared by `Sessions::never_dispatch` in short-lived CLI processes, which would
    /// exit in the middle of a launch they started, and at shutdown.
    pub enabled: std::sync::atomic::AtomicBool,
    pub one_pass: tokio::sync::Mutex<()>,
    pub again: std::sync::atomic::AtomicBool,
    /// The last typical session lengths and when they were read: thousands of ledger rows
    /// that change slowly, so every read of the queue need not repeat them.
    pub typical: std::sync::Mutex<Option<(std::time::Instant, TypicalLengths)>>,
    /// The launch form's last read of the queue, and the one read under way.
    pub shared: std::sync::Mutex<Option<std::sync::Arc<SharedQueue>>>,
    pub shared_read: tokio::sync::Mutex<()>,
}

impl Default for DispatchState {
    fn default() -> Self {
        DispatchState {
            enabled: std::sync::atomic::AtomicBool::new(true),
            one_pass: tokio::sync::Mutex::new(()),
            again: std::sync::atomic::AtomicBool::new(false),
            typical: std::sync::Mutex::new(None),
            shared: std::sync::Mutex::new(None),
            shared_read: tokio::sync::Mutex::new(()),
        }
    }
}

/// A waiting session's estimated start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct QueueEstimate {
    pub about_ms: i64,
    pub latest_ms: i64,
}

/// One read of the queue for the launch form and the waiting pages (see
/// `shared_queue.rs`); its plan and estimates are made at most once, by whoever needs them
/// first.
pub(super) struct SharedQueue {
    pub changes: u64,
    pub at: std::time::Instant,
    pub queue: QueueNow,
    pub plan: std::sync::OnceLock<ExpectedPlan>,
    pub estimates: std::sync::OnceLock<HashMap<String, QueueEstimate>>,
}
