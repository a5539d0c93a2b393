//! The serving portal's background tasks: the recovery after a restart, then the reconcile
//! passes, the engine's container deaths, the slice sampler with the idle rule, and the
//! Slurm watcher. Each is a named task of one [`TaskSet`]; the loops wait for the recovery
//! before their first pass.

use std::time::Duration;

use futures_util::StreamExt;
use tokio_util::sync::CancellationToken;

use super::service::Sessions;
use super::supervised;
use crate::tasks::{pause, TaskSet};

/// The longest the recovery at start-up may take (a hung engine answers nothing); the
/// reconcile passes then take over what it left.
const RECOVERY_LIMIT: Duration = Duration::from_secs(300);

/// How often the Slurm watcher reads Slurm's jobs.
const SLURM_WATCH_EVERY: Duration = Duration::from_secs(1);

/// How long the container-deaths task waits before following the engine again.
const DEATHS_RETRY_AFTER: Duration = Duration::from_secs(2);

impl Sessions {
    /// Starts the background tasks; they run until the returned set is shut down (or
    /// dropped). Pages are served meanwhile (a hung engine must not keep the port silent);
    /// claims wait for the recovery.
    pub async fn start_background(&self) -> TaskSet {
        // Before any page is served: an account made meanwhile (a roster import) must not
        // be the one a new line of the Slurm users file binds to.
        if let Err(e) = self.note_slurm_links().await {
            tracing::error!(error = %e, "the Slurm users file's new lines are not recorded; they wait for `slicehub slurm link`");
        }
        self.ctx.recovered.send_replace(false);
        let mut tasks = TaskSet::new();
        let this = self.clone();
        tasks.spawn("recovery", move |_| this.clone().recover());
        let this = self.clone();
        tasks.spawn("reconcile", move |stop| this.clone().reconcile_loop(stop));
        let this = self.clone();
        tasks.spawn("container-deaths", move |stop| this.clone().container_deaths_loop(stop));
        let this = self.clone();
        tasks.spawn("sampling", move |stop| this.clone().sampling_loop(stop));
        if self.ctx.slurm.is_some() && self.queue.enabled.load(std::sync::atomic::Ordering::SeqCst) {
            let this = self.clone();
            tasks.spawn("slurm-watch", move |stop| this.clone().slurm_watch_loop(stop));
        }
        tasks
    }

    /// Whatever the recovery does (fails, hangs, panics), claims are let through and the
    /// loops start after it: the reconcile passes take over what it left.
    async fn recover(self) {
        supervised::long_pass("recovery", async {
            match tokio::time::timeout(RECOVERY_LIMIT, self.recover_after_restart()).await {
                Ok(Ok(report)) => tracing::info!(?report, "sessions recovered after start"),
                Ok(Err(e)) => tracing::error!(error = %e, "recovering sessions after start failed; the reconcile passes go on"),
                Err(_) => tracing::error!("recovering sessions after start took over {} s; the reconcile passes go on", RECOVERY_LIMIT.as_secs()),
            }
        })
        .await;
        self.ctx.recovered.send_replace(true);
    }

    /// Waits for the recovery; `true` when the stop came first.
    async fn recovered_or_stopped(&self, stop: &CancellationToken) -> bool {
        let mut recovered = self.ctx.recovered.subscribe();
        tokio::select! {
            _ = recovered.wait_for(|done| *done) => stop.is_cancelled(),
            _ = stop.cancelled() => true,
        }
    }

    async fn reconcile_loop(self, stop: CancellationToken) {
        if self.recovered_or_stopped(&stop).await {
            return;
        }
        let period = Duration::from_secs(u64::from(self.ctx.config.sessions.reconcile_seconds));
        while !pause(&stop, period).await {
            supervised::pass("reconcile", async {
                match self.reconcile().await {
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
    }

    async fn container_deaths_loop(self, stop: CancellationToken) {
        if self.recovered_or_stopped(&stop).await {
            return;
        }
        loop {
            tokio::select! {
                _ = supervised::long_pass("container-deaths", self.follow_container_deaths()) => {}
                _ = stop.cancelled() => return,
            }
            if pause(&stop, DEATHS_RETRY_AFTER).await {
                return;
            }
        }
    }

    async fn follow_container_deaths(&self) {
        loop {
            let deaths = match self.instance_id().await {
                Ok(instance) => self.ctx.engine.container_deaths(&instance).await,
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
                                        if let Err(e) = this.ctx.container_exited(&id, death.exit_code).await {
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
            tokio::time::sleep(DEATHS_RETRY_AFTER).await;
        }
    }

    /// Samples the slices, then judges idleness on the samples just taken.
    async fn sampling_loop(self, stop: CancellationToken) {
        if self.recovered_or_stopped(&stop).await {
            return;
        }
        let period = Duration::from_secs(u64::from(self.ctx.config.sessions.sample_seconds.max(1)));
        while !pause(&stop, period).await {
            supervised::pass("sampling", async {
                if let Err(e) = self.sample_slices().await {
                    tracing::warn!(error = %e, "slice sampling pass failed");
                }
            })
            .await;
            supervised::pass("idle", async {
                if let Err(e) = self.cull_idle().await {
                    tracing::warn!(error = %e, "idle pass failed");
                }
            })
            .await;
        }
    }

    async fn slurm_watch_loop(self, stop: CancellationToken) {
        if self.recovered_or_stopped(&stop).await {
            return;
        }
        loop {
            supervised::pass("slurm-watch", async {
                if let Err(e) = self.watch_slurm_once().await {
                    tracing::warn!(error = %e, "slurm: jobs not read this time");
                }
            })
            .await;
            if pause(&stop, SLURM_WATCH_EVERY).await {
                return;
            }
        }
    }
}
