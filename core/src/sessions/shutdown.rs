//! The portal's stop: the background loops end at their next pause, nothing new is
//! launched, the launches and stops under way get a moment to finish, and the session
//! networks nobody uses are removed, each step bounded so that a hung engine cannot keep
//! a stopping portal alive.

use std::time::{Duration, Instant};

use super::service::Sessions;

/// How long the launches and stops under way may take to finish at shutdown.
const FINISH_WORK_FOR: Duration = Duration::from_secs(3);
/// How long removing the idle session networks may take at shutdown.
const NETWORKS_FOR: Duration = Duration::from_secs(3);

impl Sessions {
    /// Stops the session work after the background tasks ended (`crate::tasks`): nothing
    /// new is placed, and within a few seconds whatever the engine does.
    pub async fn shut_down(&self) {
        self.queue.enabled.store(false, std::sync::atomic::Ordering::SeqCst);
        let until = Instant::now() + FINISH_WORK_FOR;
        while !self.ctx.in_flight.lock().unwrap_or_else(|e| e.into_inner()).is_empty() && Instant::now() < until {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        match tokio::time::timeout(NETWORKS_FOR, self.remove_idle_networks()).await {
            Ok(Ok(_)) => {}
            Ok(Err(e)) => tracing::warn!(error = %e, "could not remove idle session networks"),
            Err(_) => tracing::warn!("the engine did not answer while idle session networks were removed; they stay"),
        }
    }
}
