//! A Slurm job that runs: its session goes through the launch states (usage opens), then
//! waits for JupyterLab on the node like a local launch (jobs are ready at once).

use std::time::{Duration, Instant};

use super::manager::Sessions;
use super::model::{GpuSession, SessionKind, SessionState};
use super::readiness::answers_ok;
use crate::metrics::METRICS;
use crate::slurm::{notebook_port, SlurmJob, SlurmNode};
use crate::store::now_ms;
use crate::CoreError;

impl Sessions {
    /// The job runs on a node: the session goes through the launch states to `starting`
    /// (usage opens here), then waits for JupyterLab on the node like a local launch.
    pub(super) async fn slurm_job_started(
        &self,
        session: &GpuSession,
        job: &SlurmJob,
        node: Option<&SlurmNode>,
    ) -> Result<(), CoreError> {
        use SessionState::*;
        let store = &self.inner.store;
        let id = &session.id;
        let node_name = job.node.clone().unwrap_or_else(|| "?".into());
        let Some(address) = node.map(|n| n.address.clone()).filter(|a| !a.is_empty()) else {
            return Ok(()); // the node list of this pass predates the job; the next pass has it
        };
        let _working = self.mark_in_flight(id);
        let placed_ms = now_ms();
        // From wherever it is (a restart may have cut the steps short), step by step.
        let at = |state: SessionState| SessionState::ALL.iter().position(|s| *s == state);
        let before = |state: SessionState| at(session.state) < at(state);
        if before(Queued) {
            let detail = format!("waiting in Slurm as job {}", job.id);
            self.publish(store.transition(id, Queued, &detail).await?);
        }
        if before(Allocating) {
            let detail = format!("Slurm started job {} on {node_name} with a {} GRES", job.id, session.profile);
            if !self.publish(store.transition(id, Allocating, &detail).await?) {
                return Ok(());
            }
        }
        store.set_slurm_node(id, &node_name).await?;
        if session.kind == SessionKind::Notebook {
            store
                .set_session_address(id, &format!("{address}:{}", notebook_port(job.id)))
                .await?;
        }
        if before(Creating) {
            let detail = format!("job {} runs on {node_name}", job.id);
            if !self.publish(store.transition(id, Creating, &detail).await?) {
                return Ok(());
            }
        }
        let placement = format!("job {} on {node_name}", job.id);
        store
            .open_usage_on(&self.session(id).await?, &format!("slurm:{node_name}"), &placement)
            .await?;
        let detail = match session.kind {
            SessionKind::Notebook => format!("waiting for JupyterLab on {node_name}"),
            SessionKind::Job => format!("running {} on {node_name}", session.argv.join(" ")),
        };
        if !self.publish(store.transition(id, Starting, &detail).await?) {
            return Ok(());
        }
        match session.kind {
            SessionKind::Job => {
                if self.publish(store.transition(id, Ready, &detail).await?) {
                    METRICS.ready("job", session.requested_at_ms, placed_ms, now_ms());
                }
            }
            SessionKind::Notebook => {
                drop(_working);
                self.spawn_slurm_readiness(id.clone());
            }
        }
        Ok(())
    }

    /// Waits for JupyterLab on the node to answer with the session's token; no answer in
    /// `sessions.ready_timeout_seconds` fails the session (and so cancels its job).
    pub(super) fn spawn_slurm_readiness(&self, id: String) {
        let this = self.clone();
        let working = self.mark_in_flight(&id);
        tokio::spawn(async move {
            let _working = working;
            let timeout = Duration::from_secs(u64::from(this.inner.config.sessions_ready_timeout_seconds));
            let until = Instant::now() + timeout;
            loop {
                let session = match this.session(&id).await {
                    Ok(s) if s.state == SessionState::Starting => s,
                    _ => return,
                };
                let path = format!("{}api/status", session.base_url());
                if let Some(address) = &session.notebook_address {
                    if answers_ok(address, &path, &session.token).await {
                        let detail = format!("JupyterLab answers at {}", session.base_url());
                        match this.inner.store.transition(&id, SessionState::Ready, &detail).await {
                            Ok(event) => {
                                if this.publish(event) {
                                    METRICS.ready("notebook", session.requested_at_ms, session.updated_at_ms, now_ms());
                                }
                            }
                            Err(e) => tracing::warn!(session = %id, error = %e, "slurm: ready not recorded"),
                        }
                        return;
                    }
                }
                if Instant::now() >= until {
                    let why = format!("JupyterLab did not answer on the Slurm node within {} s", timeout.as_secs());
                    if let Err(e) = this.fail(&id, &why).await {
                        tracing::warn!(session = %id, error = %e, "slurm: launch not failed yet");
                    }
                    return;
                }
                tokio::time::sleep(Duration::from_millis(300)).await;
            }
        });
    }

}
