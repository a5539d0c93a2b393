//! A launch cut off by a restart (a deploy) goes on from where its container is, instead of
//! failing a student whose notebook was seconds from ready.

use super::launch::launch_failure_words;
use std::sync::Arc;

use super::context::Ctx;
use super::model::{GpuSession, SessionKind, SessionState};
use crate::runtime::spec::NOTEBOOK_PORT;
use crate::CoreError;

impl Ctx {
    /// Takes up a launch left in `creating` or `starting` whose container runs: a notebook
    /// is waited for again (with a fresh ready timeout), a job is followed. False when there
    /// is no running container to go on with: the launch then fails as before.
    pub(super) async fn resume_launch(self: &Arc<Self>, session: &GpuSession) -> Result<bool, CoreError> {
        use SessionState::*;
        let Some(name) = session.container.clone() else {
            return Ok(false);
        };
        if !matches!(session.state, Creating | Starting) {
            return Ok(false);
        }
        match self.engine.status(&name).await? {
            Some(status) if status.running => {}
            _ => return Ok(false),
        }
        let store = &self.store;
        let id = session.id.as_str();
        if session.kind == SessionKind::Notebook && session.notebook_address.is_none() {
            let network = self.session_network(session).await?;
            let Some(ip) = self.engine.address_on(&name, &network.name).await? else {
                return Ok(false);
            };
            store.set_session_address(id, &format!("{ip}:{NOTEBOOK_PORT}")).await?;
        }
        if session.state == Creating {
            let detail = "container running (taken up after a portal restart)";
            if !self.publish(store.transition(id, Starting, detail).await?) {
                return Ok(true);
            }
        }
        match session.kind {
            SessionKind::Job => {
                let detail = format!("running {}", session.argv.join(" "));
                if self.publish(self.mark_ready(session, &detail).await?) {
                    self.spawn_job_waiter(id.to_string(), name);
                }
            }
            SessionKind::Notebook => {
                let this = self.clone();
                let working = self.mark_in_flight(id);
                let id = id.to_string();
                tokio::spawn(async move {
                    let _working = working;
                    if let Err(e) = this.await_jupyter(&id, this.now_ms()).await {
                        if let Err(e2) = this.fail(&id, &launch_failure_words(&e)).await {
                            tracing::error!(session = %id, error = %e2, "could not record a failed launch");
                        }
                    }
                });
            }
        }
        tracing::info!(session = %session.id, "took up a launch cut off by the restart");
        Ok(true)
    }
}
