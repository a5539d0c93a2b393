//! A Slurm job that runs: its session goes through the launch states (usage opens), then
//! waits for JupyterLab on the node like a local launch (jobs are ready at once).

use std::time::{Duration, Instant};

use std::sync::Arc;

use super::context::Ctx;
use super::model::{GpuSession, SessionKind, SessionState};
use super::readiness::{answers_ok, answers_with};
use crate::metrics::METRICS;
use crate::auth::new_session_token;
use crate::slurm::{listener_proof, notebook_port, notebook_ports, SlurmJob, SlurmNode};
use crate::CoreError;

impl Ctx {
    /// The job runs on a node: the session goes through the launch states to `starting`
    /// (usage opens here), then waits for JupyterLab on the node like a local launch.
    pub(super) async fn slurm_job_started(
        self: &Arc<Self>,
        session: &GpuSession,
        job: &SlurmJob,
        node: Option<&SlurmNode>,
    ) -> Result<(), CoreError> {
        use SessionState::*;
        let store = &self.store;
        let id = &session.id;
        let node_name = job.node.clone().unwrap_or_else(|| "?".into());
        let Some(address) = node.map(|n| n.address.clone()).filter(|a| !a.is_empty()) else {
            return Ok(()); // the node list of this pass predates the job; the next pass has it
        };
        let _working = self.mark_in_flight(id);
        let placed_ms = self.now_ms();
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
                .set_session_address(id, &format!("{address}:{}", notebook_port(&session.token)))
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
                if self.publish(self.mark_ready(&session, &detail).await?) {
                    METRICS.ready("job", session.requested_at_ms, placed_ms, self.now_ms());
                }
            }
            SessionKind::Notebook => {
                drop(_working);
                self.spawn_slurm_readiness(id.clone());
            }
        }
        Ok(())
    }

    /// Waits for JupyterLab on the node to prove it holds the session's token hash, then to
    /// answer with the token; no answer in `sessions.ready_timeout_seconds` fails the session
    /// (and so cancels its job). A listener that cannot prove it never sees the token.
    pub(super) fn spawn_slurm_readiness(self: &Arc<Self>, id: String) {
        let this = self.clone();
        let working = self.mark_in_flight(&id);
        tokio::spawn(async move {
            let _working = working;
            let timeout = Duration::from_secs(u64::from(this.config.sessions.ready_timeout_seconds));
            let until = Instant::now() + timeout;
            loop {
                let session = match this.session(&id).await {
                    Ok(s) if s.state == SessionState::Starting => s,
                    _ => return,
                };
                if let Some(address) = this.notebook_found(&session).await {
                    // Another notebook on the node may have drawn the same first port.
                    let moved = session.notebook_address.as_deref() != Some(address.as_str());
                    let recorded = match moved {
                        true => this.store.set_session_address(&id, &address).await,
                        false => Ok(()),
                    };
                    match recorded {
                        Ok(()) => {
                            let detail = format!("JupyterLab answers at {}", session.base_url());
                            match this.mark_ready(&session, &detail).await {
                                Ok(event) => {
                                    if this.publish(event) {
                                        METRICS.ready("notebook", session.requested_at_ms, session.updated_at_ms, this.now_ms());
                                    }
                                }
                                Err(e) => tracing::warn!(session = %id, error = %e, "slurm: ready not recorded"),
                            }
                            return;
                        }
                        Err(e) => tracing::warn!(session = %id, error = %e, "slurm: notebook address not recorded"),
                    }
                }
                if Instant::now() >= until {
                    // An image older than this portal starts JupyterLab that cannot prove itself.
                    let why = format!(
                        "JupyterLab did not answer on the Slurm node within {} s (if every notebook fails so, the course's image predates this portal: an administrator rebuilds it)",
                        timeout.as_secs()
                    );
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

impl Ctx {
    /// Where on its node the session's JupyterLab answers: the first of the ports it may
    /// have taken whose listener proves it is this notebook and then admits the token.
    async fn notebook_found(&self, session: &GpuSession) -> Option<String> {
        let host = session.notebook_address.as_deref()?.rsplit_once(':')?.0;
        let path = format!("{}api/status", session.base_url());
        for port in notebook_ports(&session.token) {
            let address = format!("{host}:{port}");
            if is_the_notebook(&address, &session.base_url(), &session.token).await
                && answers_ok(&address, &path, &session.token).await
            {
                return Some(address);
            }
        }
        None
    }
}

/// Whether the listener at `address` holds this session's token hash (its answer to a fresh
/// challenge, bound to the port it was asked on), checked before the token is sent to it.
async fn is_the_notebook(address: &str, base_url: &str, token: &str) -> bool {
    let Some(port) = address.rsplit_once(':').and_then(|(_, p)| p.parse::<u16>().ok()) else {
        return false;
    };
    let Ok(nonce) = new_session_token() else {
        return false;
    };
    let nonce = crate::auth::token_sha256(&nonce);
    let path = format!("{base_url}api/slicehub/proof?nonce={nonce}");
    answers_with(address, &path, &listener_proof(token, port, &nonce)).await
}
