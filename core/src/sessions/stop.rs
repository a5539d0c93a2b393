//! How sessions end: stopped by someone, failed, or their container exited. Whoever moves
//! the session to its final state (the database decides, so exactly one) removes the
//! container, gives the slice back and closes the usage interval.

use slicehub_mig::Placement;

use super::context::Ctx;
use super::model::{GpuSession, SessionKind, SessionState};
use crate::CoreError;

/// Lines of a container's output kept when it is removed.
const LOG_TAIL_LINES: usize = 60;
/// The longest reason a stop may give (the student reads it; the portal's own are short).
pub const MAX_STOP_REASON_CHARS: usize = 1000;

impl Ctx {
    /// Stops a session (`reason` says by whom or why). Queued sessions are simply
    /// cancelled. Stopping one that is over is a [`CoreError::Conflict`].
    pub async fn stop(&self, id: &str, reason: &str) -> Result<GpuSession, CoreError> {
        use SessionState::*;
        use crate::auth::validate::{check_text, Lines};
        check_text("the reason", reason, MAX_STOP_REASON_CHARS, Lines::Many).map_err(CoreError::InvalidRequest)?;
        let session = self.session(id).await?;
        if session.state.is_final() {
            return Err(CoreError::Conflict(format!(
                "session {id} is already over ({})",
                session.state.as_str()
            )));
        }
        self.finish(id, SessionState::ACTIVE, Ended, reason).await?;
        self.session(id).await
    }

    /// Fails a session that has not ended yet (a stop in progress wins).
    pub(super) async fn fail(&self, id: &str, reason: &str) -> Result<(), CoreError> {
        self.finish(id, SessionState::ACTIVE, SessionState::Failed, reason)
            .await
            .map(|_| ())
    }

    /// The session's container stopped on its own (a job finished, JupyterLab crashed, or
    /// someone removed it). `exit_code` is `None` when it is unknown.
    pub async fn container_exited(&self, id: &str, exit_code: Option<i64>) -> Result<(), CoreError> {
        use SessionState::*;
        let Some(session) = self.store.gpu_session(id).await? else {
            return Ok(());
        };
        if !matches!(session.state, Creating | Starting | Ready) {
            return Ok(());
        }
        let out_of_memory = match &session.container {
            Some(name) => matches!(self.engine.status(name).await, Ok(Some(s)) if s.oom_killed),
            None => false,
        };
        if out_of_memory {
            let reason = format!(
                "out of memory: the {} used more than its memory limit and was stopped; \
                 use less memory or a larger slice",
                match session.kind {
                    SessionKind::Job => "job",
                    SessionKind::Notebook => "notebook server",
                }
            );
            return self.finish(id, &[Creating, Starting, Ready], Failed, &reason).await.map(|_| ());
        }
        let code = exit_code.map(|c| c.to_string()).unwrap_or_else(|| "unknown".into());
        let (to, reason) = match (session.kind, exit_code) {
            (SessionKind::Job, Some(0)) => (Ended, "the job finished (exit code 0)".to_string()),
            (SessionKind::Job, _) => (Failed, format!("the job exited with code {code}")),
            (SessionKind::Notebook, _) => {
                (Failed, format!("JupyterLab's container stopped (exit code {code})"))
            }
        };
        self.finish(id, &[Creating, Starting, Ready], to, &reason).await.map(|_| ())
    }

    /// Moves the session from one of `from` to `stopping` (only one caller can), keeps the
    /// container's output, removes the container, gives the slice back, then records `to`
    /// and closes the usage interval. `Ok(false)`: someone else is finishing it.
    pub(super) async fn finish(
        &self,
        id: &str,
        from: &[SessionState],
        to: SessionState,
        reason: &str,
    ) -> Result<bool, CoreError> {
        let store = &self.store;
        let _working = self.mark_in_flight(id);
        if !self.publish(store.begin_stop(id, from, to, reason).await?) {
            return Ok(false);
        }
        self.complete_stop(id, to, reason).await?;
        Ok(true)
    }

    /// The second half of [`Ctx::finish`], also run for stops a restart interrupted
    /// and retried by the repair pass. The slice is given back only once the container is
    /// confirmed gone: until then the session stays `stopping`, so nobody else is handed
    /// a MIG device that a still-running container may use.
    pub(super) async fn complete_stop(
        &self,
        id: &str,
        to: SessionState,
        reason: &str,
    ) -> Result<(), CoreError> {
        let store = &self.store;
        let _launch_done = self.wait_out_launch(id).await;
        let session = self.session(id).await?;
        let stopped_at = self.keep_outcome(&session).await;
        self.tear_down(&session).await?;
        // Charged until the container is gone (or until it stopped on its own, as seen by
        // the engine, when the portal noticed late: after a restart), and closed before
        // the session reads as over: nobody sees an ended session still charging. A crash
        // in between leaves it `stopping`, and the repair pass runs this again (closing is
        // a no-op the second time).
        let now = self.now_ms();
        store.close_usage(id, stopped_at.map_or(now, |at| at.min(now)), reason).await?;
        store.revoke_notebook_access(id).await?;
        self.publish(store.transition(id, to, reason).await?);
        self.forget_launch_gate(id);
        if session.placement.is_some() {
            self.wake_queue();
        }
        Ok(())
    }

    /// Keeps the container's exit code and last lines before it is removed; when it had
    /// stopped on its own, when it did.
    pub(super) async fn keep_outcome(&self, session: &GpuSession) -> Option<i64> {
        let name = session.container.as_ref()?;
        let engine = &self.engine;
        let (exit_code, stopped_at) = match engine.status(name).await {
            Ok(Some(status)) if !status.running => (status.exit_code, status.finished_at_ms),
            _ => (None, None),
        };
        let tail = engine.logs_tail(name, LOG_TAIL_LINES).await.unwrap_or_default();
        if tail.is_empty() && exit_code.is_none() {
            return stopped_at;
        }
        if let Err(e) = self.store.set_session_outcome(&session.id, exit_code, &tail).await {
            tracing::warn!(session = %session.id, error = %e, "could not keep the container's output");
        }
        stopped_at
    }

    /// Removes the container, then gives the slice back. A container that cannot be
    /// removed keeps its slice (an error: the reconciler's repair pass retries); a slice
    /// that cannot be released is retried by the reconciler too.
    pub(super) async fn tear_down(&self, session: &GpuSession) -> Result<(), CoreError> {
        if let Err(e) = self.cancel_slurm_job(session).await {
            tracing::warn!(session = %session.id, error = %e, "Slurm job not cancelled yet; the stop is retried");
            return Err(e);
        }
        if let Some(name) = &session.container {
            if let Err(e) = self.engine.remove(name).await {
                tracing::warn!(session = %session.id, error = %e, "container not removed yet; its slice stays held");
                return Err(e);
            }
        }
        if let Err(e) = self.release(session).await {
            tracing::warn!(session = %session.id, error = %e, "slice not released yet");
        }
        Ok(())
    }

    /// Destroys the MIG instance the portal created for the session (dynamic GPUs) and
    /// deletes its holds. Idempotent: read again under the lock, as a caller's copy may
    /// predate another worker's release (after which the place may hold someone else's
    /// new instance).
    pub(super) async fn release(&self, session: &GpuSession) -> Result<(), CoreError> {
        let _instances = self.instances.lock().await;
        let Some(session) = self.store.gpu_session(&session.id).await? else {
            return Ok(());
        };
        if session.released {
            return Ok(());
        }
        if let (Some(placement), true) = (&session.placement, session.created_instance) {
            let (uuid, last_index) = (placement.gpu_uuid.clone(), placement.gpu_index);
            let at = Placement::new(placement.profile_id, placement.start);
            // By UUID, never by the stored index: nothing is destroyed on another GPU.
            let destroyed = self
                .on_gpus(move |gpus| gpus.destroy_instance(crate::gpu::index_of(gpus, &uuid, last_index)?, at))
                .await;
            match destroyed {
                Ok(()) | Err(CoreError::NotFound(_)) => {}
                Err(e) => return Err(e),
            }
        }
        self.store.release_slice(&session.id).await
    }

    /// Cancels the session's Slurm job (stops and failures); a job already over is fine.
    /// Every way a session ends comes here (`tear_down`), so a failed session's job never
    /// runs on.
    pub(super) async fn cancel_slurm_job(&self, session: &GpuSession) -> Result<(), CoreError> {
        match (session.slurm_job, &self.slurm) {
            (Some(job), Some(client)) => match client.cancel(job as u64, &session.username).await {
                Ok(()) => Ok(()),
                // The student's token may not be accepted (no such user on the cluster):
                // the portal's own user, an operator on most sites, tries next.
                Err(e) => client.cancel_as_portal(job as u64).await.map_err(|_| e),
            },
            (Some(job), None) => {
                tracing::warn!(session = %session.id, job, "slurm: no cluster configured any more; the job is left to the cluster");
                Ok(())
            }
            _ => Ok(()),
        }
    }
}
