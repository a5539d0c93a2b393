//! One gate per session between the launch's container steps and a stop: a launch holds
//! it from `creating` until its container runs (or is removed again because a stop came
//! meanwhile), and a stop takes it before it reads the session to tear it down. So the
//! stop sees the container the launch made, and no slice is given back while a container
//! a stopped launch started may still run on it.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{Mutex, OwnedMutexGuard};

use super::context::Ctx;

/// How long a stop waits for a launch's container steps before going on without them
/// (the launch still removes its container once it sees the stop).
const STOP_WAITS_FOR_LAUNCH: Duration = Duration::from_secs(30);

impl Ctx {
    fn launch_gate(&self, id: &str) -> Arc<Mutex<()>> {
        let mut gates = self.launch_gates.lock().unwrap_or_else(|e| e.into_inner());
        gates.entry(id.to_string()).or_default().clone()
    }

    /// Held by a launch across its container steps.
    pub(super) async fn enter_launch_gate(&self, id: &str) -> OwnedMutexGuard<()> {
        self.launch_gate(id).lock_owned().await
    }

    /// Held by a stop while it tears the session down; `None` when a launch kept it longer
    /// than a stop waits.
    pub(super) async fn wait_out_launch(&self, id: &str) -> Option<OwnedMutexGuard<()>> {
        let gate = self.launch_gate(id);
        let held = tokio::time::timeout(STOP_WAITS_FOR_LAUNCH, gate.lock_owned()).await.ok();
        if held.is_none() {
            tracing::warn!(session = %id, "the launch's container steps take long; stopping without waiting for them");
        }
        held
    }

    /// Forgets the gate of a session that is over.
    pub(super) fn forget_launch_gate(&self, id: &str) {
        self.launch_gates.lock().unwrap_or_else(|e| e.into_inner()).remove(id);
    }
}
