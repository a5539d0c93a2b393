//! The pass after a restart: launches cut off by it go on where their container runs and
//! fail otherwise, interrupted stops are finished, running jobs are watched again, then a
//! full reconcile pass. Claims wait for it, so none is mistaken for a launch the restart
//! cut off.

use std::time::Duration;

use crate::sessions::service::Sessions;
use crate::sessions::model::{SessionKind, SessionState};
use crate::sessions::pools::pool;
use crate::sessions::ReconcileReport;
use crate::CoreError;

/// How long a claim made during the recovery waits for it before it is refused.
const CLAIM_WAITS_FOR_RECOVERY: Duration = Duration::from_secs(20);

impl Sessions {
    /// Run once when the portal starts (`background.rs`), before the loops.
    pub async fn recover_after_restart(&self) -> Result<ReconcileReport, CoreError> {
        use SessionState::*;
        let store = &self.ctx.store;
        if let Err(e) = self.end_unreachable_slurm_sessions().await {
            tracing::warn!(error = %e, "recovery: Slurm sessions not checked");
        }
        // A session of a pool that does not run here (a Slurm job) may have run on through
        // the restart: the pool's watcher adopts it. A launch here whose container runs
        // goes on; one cut off before that fails.
        for session in store.gpu_sessions_in(&[Allocating, Creating, Starting]).await? {
            if !pool(session.pool).runs_here() {
                continue;
            }
            match self.ctx.resume_launch(&session).await {
                Ok(true) => continue,
                Ok(false) => {}
                Err(e) => tracing::warn!(session = %session.id, error = %e, "recovery: launch not taken up"),
            }
            let why = "the portal restarted while this session was starting; start it again";
            if let Err(e) = self.ctx.fail(&session.id, why).await {
                tracing::warn!(session = %session.id, error = %e, "recovery: launch not failed yet; the repair pass retries");
            }
        }
        for session in store.gpu_sessions_in(&[Stopping]).await? {
            let (to, why) = self.intended_end(&session.id, "stopped (finished after a portal restart)").await;
            if let Err(e) = self.ctx.complete_stop(&session.id, to, &why).await {
                tracing::warn!(session = %session.id, error = %e, "recovery: stop not finished yet; the repair pass retries");
            }
        }
        for session in store.gpu_sessions_in(&[Ready]).await? {
            if let (SessionKind::Job, Some(name)) = (session.kind, session.container.clone()) {
                if matches!(self.ctx.engine.status(&name).await, Ok(Some(s)) if s.running) {
                    self.ctx.spawn_job_waiter(session.id.clone(), name);
                }
            }
        }
        self.reconcile().await
    }

    /// What the interrupted stop of a session set out to record; else `Ended` with
    /// `otherwise` (a stop begun before the portal kept it).
    pub(in crate::sessions) async fn intended_end(&self, id: &str, otherwise: &str) -> (SessionState, String) {
        let intended = self.ctx.store.intended_end(id).await.unwrap_or_else(|e| {
            tracing::warn!(session = %id, error = %e, "the stop's intended end is unreadable");
            None
        });
        intended.unwrap_or_else(|| (SessionState::Ended, otherwise.to_string()))
    }

    /// Whether the sessions of the last run are still being picked up.
    pub fn is_recovering(&self) -> bool {
        !*self.ctx.recovered.borrow()
    }

    /// Waits (a while) until the sessions of the last run are picked up.
    pub(in crate::sessions) async fn wait_recovered(&self) -> Result<(), CoreError> {
        let mut recovered = self.ctx.recovered.subscribe();
        let waited = tokio::time::timeout(CLAIM_WAITS_FOR_RECOVERY, recovered.wait_for(|done| *done)).await.is_ok();
        match waited {
            true => Ok(()),
            false => Err(CoreError::Conflict(
                "the portal is still picking up the sessions it ran before its restart; try again in a minute".into(),
            )),
        }
    }
}
