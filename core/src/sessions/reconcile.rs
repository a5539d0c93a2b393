//! Keeping the database, Docker and the GPUs in agreement: after a restart, every few
//! seconds, and on every container death the engine reports.

use std::collections::HashSet;
use std::time::Duration;

use futures_util::StreamExt;
use serde::Serialize;

use super::manager::Sessions;
use super::model::{GpuSession, SessionKind, SessionPool, SessionState};
use crate::store::now_ms;
use crate::CoreError;

/// What one pass changed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ReconcileReport {
    pub orphan_containers_removed: usize,
    pub sessions_ended: usize,
    pub slices_released: usize,
    pub usage_closed: usize,
    /// MIG instances the portal made that no session holds any more.
    pub instances_destroyed: usize,
    /// MIG instances made ahead of a booked lab window.
    pub instances_prepared: usize,
    pub stopped_at_time_limit: usize,
    pub stopped_at_quota: usize,
    pub queued_placed: usize,
    /// Sessions found stuck between states and failed or finished.
    pub repaired: usize,
    /// Host firewall rules of session networks found missing and put back.
    pub firewall_rules_restored: usize,
}

/// How long a session nobody in this process works on may sit between states before the
/// repair pass takes it over. (Stops are safe to finish twice: removal and release are
/// idempotent and the database lets one transition win.)
const STUCK_MS: i64 = 5_000;

/// The longest the recovery at start-up may take (a hung engine answers nothing); the
/// reconcile passes then take over what it left.
const RECOVERY_LIMIT: Duration = Duration::from_secs(300);

/// Sessions stopped at their time limit at the same time by one pass.
const TIME_LIMIT_STOPS_AT_ONCE: usize = 8;

/// How long a claim made during the recovery waits for it before it is refused.
const CLAIM_WAITS_FOR_RECOVERY: Duration = Duration::from_secs(20);

impl ReconcileReport {
    pub fn changed_anything(&self) -> bool {
        *self != ReconcileReport::default()
    }
}

impl Sessions {
    /// Run once when the portal starts: launches cut off by the restart go on where their
    /// container runs and fail otherwise (their container and slice are cleaned up),
    /// interrupted stops are finished, running jobs are watched again, then a full
    /// [`Sessions::reconcile`] pass.
    pub async fn recover_after_restart(&self) -> Result<ReconcileReport, CoreError> {
        use SessionState::*;
        let store = &self.inner.store;
        if let Err(e) = self.end_unreachable_slurm_sessions().await {
            tracing::warn!(error = %e, "recovery: Slurm sessions not checked");
        }
        // A Slurm session's job may have run on through the restart: the watcher adopts it.
        // A local launch whose container runs goes on; one cut off before that fails.
        for session in store.gpu_sessions_in(&[Allocating, Creating, Starting]).await? {
            if session.pool == SessionPool::Slurm {
                continue;
            }
            match self.resume_launch(&session).await {
                Ok(true) => continue,
                Ok(false) => {}
                Err(e) => tracing::warn!(session = %session.id, error = %e, "recovery: launch not taken up"),
            }
            let why = "the portal restarted while this session was starting; start it again";
            if let Err(e) = self.fail(&session.id, why).await {
                tracing::warn!(session = %session.id, error = %e, "recovery: launch not failed yet; the repair pass retries");
            }
        }
        for session in store.gpu_sessions_in(&[Stopping]).await? {
            let (to, why) = self.intended_end(&session.id, "stopped (finished after a portal restart)").await;
            if let Err(e) = self.complete_stop(&session.id, to, &why).await {
                tracing::warn!(session = %session.id, error = %e, "recovery: stop not finished yet; the repair pass retries");
            }
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
    /// container is gone or stopped, repair sessions stuck between states, release slices,
    /// destroy MIG instances the portal made that nobody holds, close usage left open by a
    /// crash, stop sessions past their time limit, and place
    /// queued sessions that now fit. Each session is handled on its own: one that fails is
    /// logged and retried next pass, and never keeps the pass from the others.
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
                        Some(id) => match store.gpu_session(id).await {
                            Ok(session) => session,
                            Err(e) => {
                                tracing::warn!(container = %container.name, error = %e, "reconcile: session unreadable");
                                continue;
                            }
                        },
                        None => None,
                    };
                    match session {
                        Some(s) if !s.state.is_final() => {
                            if container.running {
                                running.insert(s.id.clone());
                            }
                        }
                        _ => match engine.remove(&container.name).await {
                            Ok(()) => {
                                tracing::info!(container = %container.name, "removed a container no session owns");
                                report.orphan_containers_removed += 1;
                            }
                            Err(e) => tracing::warn!(container = %container.name, error = %e, "reconcile: orphan not removed yet"),
                        },
                    }
                }
                for session in store.gpu_sessions_in(&[Ready]).await? {
                    if running.contains(&session.id) || session.pool == SessionPool::Slurm {
                        continue;
                    }
                    // Not running in the list read above, but that list may predate the
                    // session's own launch: only a container that is not running now (or
                    // gone) ends it. A running one reports exit code 0 and would end a
                    // job that has just begun.
                    let code = match &session.container {
                        Some(name) => match engine.status(name).await {
                            Ok(Some(status)) if status.running => continue,
                            Ok(Some(status)) => status.exit_code,
                            Ok(None) => None,
                            Err(e) => {
                                tracing::warn!(session = %session.id, error = %e, "reconcile: container state unreadable");
                                continue;
                            }
                        },
                        None => None,
                    };
                    match self.container_exited(&session.id, code).await {
                        Ok(()) => report.sessions_ended += 1,
                        Err(e) => tracing::warn!(session = %session.id, error = %e, "reconcile: could not end a session whose container is gone"),
                    }
                }
            }
            Err(e) => tracing::warn!(error = %e, "reconcile: the container engine cannot be read"),
        }

        report.repaired = self.repair_stuck().await?;
        match self.keep_host_firewall().await {
            Ok(n) => report.firewall_rules_restored = n,
            Err(e) => tracing::error!(error = %e, "reconcile: session networks' firewall rules cannot be put back; launches set them up again"),
        }

        for session in store.unreleased_final_sessions().await? {
            if let Some(name) = &session.container {
                if let Err(e) = engine.remove(name).await {
                    tracing::warn!(session = %session.id, error = %e, "container not removed yet; its slice stays held");
                    continue;
                }
            }
            match self.release(&session).await {
                Ok(()) => report.slices_released += 1,
                Err(e) => tracing::warn!(session = %session.id, error = %e, "slice not released yet"),
            }
        }
        match self.booked_placements_now(now_ms()).await {
            Ok(kept) => {
                match self.destroy_leftover_instances(&kept).await {
                    Ok(n) => report.instances_destroyed = n,
                    Err(e) => tracing::warn!(error = %e, "reconcile: could not look for leftover MIG instances"),
                }
                match self.prepare_booked_instances(&kept).await {
                    Ok(n) => report.instances_prepared = n,
                    Err(e) => tracing::warn!(error = %e, "reconcile: could not make booked lab instances"),
                }
            }
            Err(e) => tracing::warn!(error = %e, "reconcile: bookings unreadable; MIG instances left as they are"),
        }
        for (id, ended_at, reason) in store.open_usage_of_final_sessions().await? {
            match store.close_usage(&id, ended_at, &reason).await {
                Ok(true) => report.usage_closed += 1,
                Ok(false) => {}
                Err(e) => tracing::warn!(session = %id, error = %e, "usage not closed yet"),
            }
        }
        // The limit counts from ready: a session still starting (after a long queue) is
        // bounded by `sessions.ready_timeout_seconds`, not by a limit it never used.
        let now = now_ms();
        // Several at once: a booked lab's thirty sessions share one deadline, and the
        // queue promised their slices free again within a fixed slack.
        let due: Vec<GpuSession> = store.gpu_sessions_in(&[Ready]).await?.into_iter().filter(|s| s.deadline_at_ms <= now).collect();
        report.stopped_at_time_limit = futures_util::stream::iter(due)
            .map(|session| async move {
                let minutes = (session.deadline_at_ms - session.ready_at_ms.unwrap_or(session.requested_at_ms)) / 60_000;
                let reason = format!("stopped at the course's time limit ({minutes} min)");
                match self.stop(&session.id, &reason).await {
                    Ok(_) => 1,
                    Err(e) => {
                        tracing::warn!(session = %session.id, error = %e, "reconcile: could not stop at the time limit");
                        0
                    }
                }
            })
            .buffer_unordered(TIME_LIMIT_STOPS_AT_ONCE)
            .fold(0, |n, stopped| async move { n + stopped })
            .await;
        match self.enforce_quotas_at(now).await {
            Ok(stopped) => report.stopped_at_quota = stopped,
            Err(e) => tracing::warn!(error = %e, "reconcile: could not check quotas"),
        }
        match self.dispatch().await {
            Ok(placed) => report.queued_placed = placed,
            Err(e) => tracing::warn!(error = %e, "reconcile: could not place queued sessions"),
        }
        Ok(report)
    }

    /// Sessions left between states by a failed write or an engine error, with nobody in
    /// this process working on them for a while: launches fail (their container and slice
    /// are cleaned up), stops are finished. A stop whose container still cannot be removed
    /// stays `stopping` and is tried again next pass.
    async fn repair_stuck(&self) -> Result<usize, CoreError> {
        use SessionState::*;
        let store = &self.inner.store;
        let now = now_ms();
        let mut repaired = 0;
        for session in store.gpu_sessions_in(&[Allocating, Creating, Starting, Stopping]).await? {
            if now - session.updated_at_ms < STUCK_MS || self.is_in_flight(&session.id) {
                continue;
            }
            // Slurm sessions' launches are the watcher's; only their stops are repaired here.
            if session.pool == SessionPool::Slurm && session.state != Stopping {
                continue;
            }
            let _working = self.mark_in_flight(&session.id);
            let outcome = if session.state == Stopping {
                let (to, why) = self.intended_end(&session.id, "stopped (finished by the portal's repair pass)").await;
                self.complete_stop(&session.id, to, &why).await
            } else {
                self.fail(&session.id, "the launch stopped midway (the container engine or the database failed); start it again").await
            };
            match outcome {
                Ok(()) => repaired += 1,
                Err(e) => tracing::warn!(session = %session.id, state = session.state.as_str(), error = %e, "repair: not yet"),
            }
        }
        Ok(repaired)
    }

    /// Recovers from the last run in the background (claims wait for it, so none is
    /// mistaken for a launch the restart cut off), then reconciles every
    /// `sessions.reconcile_seconds`, follows the engine's container deaths and samples the
    /// slices.
    pub async fn start_background(&self) {
        // Before any page is served: an account made meanwhile (a roster import) must not
        // be the one a new line of the Slurm users file binds to.
        if let Err(e) = self.note_slurm_links().await {
            tracing::error!(error = %e, "the Slurm users file's new lines are not recorded; they wait for `slicehub slurm link`");
        }
        // Pages are served meanwhile (a hung engine must not keep the port silent); claims
        // wait for the recovery, and the loops start after it.
        self.inner.recovered.send_replace(false);
        let this = self.clone();
        tokio::spawn(async move {
            // Whatever the recovery does (fails, hangs, panics), claims are let through and
            // the loops start after it: the reconcile passes take over what it left.
            super::supervised::long_pass("recovery", async {
                match tokio::time::timeout(RECOVERY_LIMIT, this.recover_after_restart()).await {
                    Ok(Ok(report)) => tracing::info!(?report, "sessions recovered after start"),
                    Ok(Err(e)) => tracing::error!(error = %e, "recovering sessions after start failed; the reconcile passes go on"),
                    Err(_) => tracing::error!("recovering sessions after start took over {} s; the reconcile passes go on", RECOVERY_LIMIT.as_secs()),
                }
            })
            .await;
            this.inner.recovered.send_replace(true);
            this.start_loops();
        });
    }

    /// What the interrupted stop of a session set out to record; else `Ended` with
    /// `otherwise` (a stop begun before the portal kept it).
    async fn intended_end(&self, id: &str, otherwise: &str) -> (SessionState, String) {
        let intended = self.inner.store.intended_end(id).await.unwrap_or_else(|e| {
            tracing::warn!(session = %id, error = %e, "the stop's intended end is unreadable");
            None
        });
        intended.unwrap_or_else(|| (SessionState::Ended, otherwise.to_string()))
    }

    /// Whether the sessions of the last run are still being picked up.
    pub fn is_recovering(&self) -> bool {
        !*self.inner.recovered.borrow()
    }

    /// Waits (a while) until the sessions of the last run are picked up.
    pub(super) async fn wait_recovered(&self) -> Result<(), CoreError> {
        let mut recovered = self.inner.recovered.subscribe();
        let waited = tokio::time::timeout(CLAIM_WAITS_FOR_RECOVERY, recovered.wait_for(|done| *done)).await.is_ok();
        match waited {
            true => Ok(()),
            false => Err(CoreError::Conflict(
                "the portal is still picking up the sessions it ran before its restart; try again in a minute".into(),
            )),
        }
    }

    fn start_loops(&self) {
        let this = self.clone();
        tokio::spawn(async move {
            let period = Duration::from_secs(u64::from(this.inner.config.sessions_reconcile_seconds));
            while !this.pause_or_stop(period).await {
                super::supervised::pass("reconcile", async {
                    match this.reconcile().await {
                        Ok(report) => {
                            crate::metrics::METRICS.reconciled(&report);
                            if report.changed_anything() {
                                tracing::info!(?report, "reconciled");
                            }
                        }
                        Err(e) => tracing::warn!(error = %e, "reconcile pass failed"),
                    }
                })
                .await;
            }
        });
        let this = self.clone();
        tokio::spawn(async move {
            let mut stopping = this.inner.shutting_down.subscribe();
            loop {
                tokio::select! {
                    _ = super::supervised::long_pass("container-deaths", this.follow_container_deaths()) => {}
                    _ = stopping.wait_for(|down| *down) => return,
                }
                if this.pause_or_stop(Duration::from_secs(2)).await {
                    return;
                }
            }
        });
        self.start_sampling();
        self.start_slurm_watch();
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
                                // On a task of its own: a stop begun here is not cut off
                                // halfway when this stream is dropped (at shutdown).
                                if let Some(id) = death.session_id {
                                    let this = self.clone();
                                    tokio::spawn(async move {
                                        if let Err(e) = this.container_exited(&id, death.exit_code).await {
                                            tracing::warn!(session = %id, error = %e, "could not end a session whose container died");
                                        }
                                    });
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
