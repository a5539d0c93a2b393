//! The queue as the launch form and the waiting pages read it: one read of the GPUs and
//! the line, with its plan and estimates, shared by every student until a session changes
//! or [`FRESH`] passes. A waiting page polls both; a class of them would otherwise repeat
//! the whole read (every GPU, every hold, two weeks of session lengths, the plan) on each
//! poll.

use std::sync::atomic::Ordering;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use super::queue_state::SharedQueue;
use super::service::Sessions;
use crate::CoreError;

/// How long a read serves while no session changes; what a drain or a booking changes
/// shows within this.
const FRESH: Duration = Duration::from_secs(2);

impl Sessions {
    /// The last read of the queue (with typical lengths), or a new one if a session
    /// changed since or it is older than [`FRESH`].
    pub(super) async fn shared_queue(&self) -> Result<Arc<SharedQueue>, CoreError> {
        if let Some(last) = self.fresh_shared_queue() {
            return Ok(last);
        }
        // One read at a time: the forms that arrive meanwhile take the read it leaves.
        let _reading = self.queue.shared_read.lock().await;
        if let Some(last) = self.fresh_shared_queue() {
            return Ok(last);
        }
        let changes = self.ctx.all_changes.load(Ordering::SeqCst);
        let read = Arc::new(SharedQueue {
            changes,
            at: Instant::now(),
            queue: self.queue_now(true).await?,
            plan: OnceLock::new(),
            estimates: OnceLock::new(),
        });
        *self.queue.shared.lock().unwrap_or_else(|p| p.into_inner()) = Some(read.clone());
        Ok(read)
    }

    fn fresh_shared_queue(&self) -> Option<Arc<SharedQueue>> {
        let changes = self.ctx.all_changes.load(Ordering::SeqCst);
        let last = self.queue.shared.lock().unwrap_or_else(|p| p.into_inner()).clone();
        last.filter(|l| l.changes == changes && l.at.elapsed() < FRESH)
    }
}
