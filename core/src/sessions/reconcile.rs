//! Keeping the database, Docker and the GPUs in agreement: after a restart, every few
//! seconds, and on every container death the engine reports.

use std::collections::HashSet;
use std::time::Duration;

use futures_util::StreamExt;
use serde::Serialize;

use super::manager::Sessions;
use super::model::{SessionKind, SessionState};
use crate::store::now_ms;
use crate::CoreError;

/// What one pass changed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ReconcileReport {
    pub orphan_containers_removed: usize,
    pub sessions_ended: usize,
    pub slices_released: usize,
    pub usage_closed: usize,
    pub stopped_at_time_limit: usize,
    pub queued_placed: usize,
}

impl ReconcileReport {
    pub fn changed_anything(&self) -> bool {
        *self != ReconcileReport::default()
    }
}

impl Sessions {
    /// Run once when the portal starts: launches that were cut off by the restart fail
    /// (their container and slice are cleaned up), interrupted stops are finished, running
    /// jobs are watched again, then a full [`Sessions::reconcile`] pass.
    pub async fn recover_after_restart(&self) -> Result<ReconcileReport, CoreError> {
        use SessionState::*;
        let store = &self.inner.store;
        for session in store.gpu_sessions_in(&[Allocating, Creating, Starting]).await? {
            self.fail(&session.id, "the portal restarted while this session was starting; start it again")
                .await?;
        }
        for session in store.gpu_sessions_in(&[Stopping]).await? {
            self.complete_stop(&session.id, Ended, "stopped (finished after a portal restart)")
                .await?;
        }
        for session in store.gpu_sessions_in(&[Ready]).await? {
            if let (SessionKind::Job, Some(name)) = (session.kind, session.container.clone()) {
                if matches!(self.inner.engine.status(&name).await, Ok(Some(s)) if s.running) {
                    self.spawn_job_waiter(session.id.clone(), name);
                }
            }
        }
        self.reconcile().await
    }

    /// One pass: remove labelled containers no live session owns, end ready sessions whose
    /// container is gone or stopped, release slices and close usage left open by a crash,
    /// stop sessions past their time limit, and place queued sessions that now fit.
    pub async fn reconcile(&self) -> Result<ReconcileReport, CoreError> {
        use SessionState::*;
        let store = &self.inner.store;
        let engine = &self.inner.engine;
        let mut report = ReconcileReport::default();

        match engine.managed_containers(&self.instance_id().await?).await {
            Ok(containers) => {
                let mut running = HashSet::new();
                for container in &containers {
                    let session = match &container.session_id {
                        Some(id) => store.gpu_session(id).await?,
                        None => None,
                    };
                    match session {
                        Some(s) if !s.state.is_final() => {
                            if container.running {
                                running.insert(s.id.clone());
                            }
                        }
                        _ => {
                            engine.remove(&container.name).await?;
                            tracing::info!(container = %container.name, "removed a container no session owns");
                            report.orphan_containers_removed += 1;
                        }
                    }
                }
                for session in store.gpu_sessions_in(&[Ready]).await? {
                    if !running.contains(&session.id) {
                        let code = match &session.container {
                            Some(name) => engine.status(name).await?.and_then(|s| s.exit_code),
                            None => None,
                        };
                        self.container_exited(&session.id, code).await?;
                        report.sessions_ended += 1;
                    }
                }
            }
            Err(e) => tracing::warn!(error = %e, "reconcile: the container engine cannot be read"),
        }

        for session in store.unreleased_final_sessions().await? {
            if let Some(name) = &session.container {
                engine.remove(name).await.ok();
            }
            match self.release(&session).await {
                Ok(()) => report.slices_released += 1,
                Err(e) => tracing::warn!(session = %session.id, error = %e, "slice not released yet"),
            }
        }
        for (id, ended_at, reason) in store.open_usage_of_final_sessions().await? {
            if store.close_usage(&id, ended_at, &reason).await? {
                report.usage_closed += 1;
            }
        }
        let now = now_ms();
        for session in store.gpu_sessions_in(&[Starting, Ready]).await? {
            if session.deadline_at_ms <= now {
                let minutes = (session.deadline_at_ms - session.ready_at_ms.unwrap_or(session.requested_at_ms)) / 60_000;
                let reason = format!("stopped at the course's time limit ({minutes} min)");
                self.stop(&session.id, &reason).await?;
                report.stopped_at_time_limit += 1;
            }
        }
        report.queued_placed = self.dispatch().await?;
        Ok(report)
    }

    /// Recovers from the last run (before returning, so no new claim can be mistaken for
    /// a launch the restart cut off), then reconciles every `sessions.reconcile_seconds`
    /// and follows the engine's container deaths in the background.
    pub async fn start_background(&self) {
        match self.recover_after_restart().await {
            Ok(report) => tracing::info!(?report, "sessions recovered after start"),
            Err(e) => tracing::error!(error = %e, "recovering sessions after start failed"),
        }
        let this = self.clone();
        tokio::spawn(async move {
            let period = Duration::from_secs(u64::from(this.inner.config.sessions_reconcile_seconds));
            loop {
                tokio::time::sleep(period).await;
                match this.reconcile().await {
                    Ok(report) if report.changed_anything() => tracing::info!(?report, "reconciled"),
                    Ok(_) => {}
                    Err(e) => tracing::warn!(error = %e, "reconcile pass failed"),
                }
            }
        });
        let this = self.clone();
        tokio::spawn(async move { this.follow_container_deaths().await });
    }

    async fn follow_container_deaths(&self) {
        loop {
            let deaths = match self.instance_id().await {
                Ok(instance) => self.inner.engine.container_deaths(&instance).await,
                Err(e) => Err(e),
            };
            match deaths {
                Ok(mut deaths) => {
                    while let Some(death) = deaths.next().await {
                        match death {
                            Ok(death) => {
                                if let Some(id) = death.session_id {
                                    if let Err(e) = self.container_exited(&id, death.exit_code).await {
                                        tracing::warn!(session = %id, error = %e, "could not end a session whose container died");
                                    }
                                }
                            }
                            Err(e) => {
                                tracing::warn!(error = %e, "engine event stream broke");
                                break;
                            }
                        }
                    }
                }
                Err(e) => tracing::debug!(error = %e, "engine events unavailable"),
            }
            tokio::time::sleep(Duration::from_secs(2)).await;
        }
    }
}
