//! The session service: a shared context and the state each part keeps.

use std::sync::{Arc, Weak};

use tokio::sync::broadcast;

use super::activity_state::ActivityState;
use super::context::Ctx;
use super::lifecycle::idle_state::IdleState;
use super::model::{GpuSession, SessionEvent};
use super::queue_state::DispatchState;
use super::slurm_state::SlurmState;
use crate::clock::{Clock, SystemClock};
use crate::config::Config;
use crate::gpu::GpuBackend;
use crate::runtime::ContainerEngine;
use crate::slurm::SlurmCluster;
use crate::store::Store;
use crate::CoreError;
use crate::{CourseId, UserId};

/// The session service: its parts over one shared context. Cheap to clone; every clone
/// shares the context and the parts.
#[derive(Clone)]
pub struct Sessions {
    pub(super) ctx: Arc<Ctx>,
    /// The queue's passes and estimates (`queue_state.rs`).
    pub(super) queue: Arc<DispatchState>,
    /// The slice samples of running sessions (`activity.rs` samples them).
    pub(super) activity: Arc<std::sync::Mutex<ActivityState>>,
    /// What the idle rule keeps between passes (`lifecycle/idle.rs`).
    pub(super) idle: Arc<IdleState>,
    /// What the Slurm watcher last read (`slurm_state.rs`, written by `slurm_watch.rs`).
    pub(super) slurm: Arc<SlurmState>,
}

/// A [`Sessions`] that does not keep its parts alive: what the context's queue wake holds.
struct WeakSessions {
    ctx: Weak<Ctx>,
    queue: Weak<DispatchState>,
    activity: Weak<std::sync::Mutex<ActivityState>>,
    idle: Weak<IdleState>,
    slurm: Weak<SlurmState>,
}

impl WeakSessions {
    fn upgrade(&self) -> Option<Sessions> {
        Some(Sessions {
            ctx: self.ctx.upgrade()?,
            queue: self.queue.upgrade()?,
            activity: self.activity.upgrade()?,
            idle: self.idle.upgrade()?,
            slurm: self.slurm.upgrade()?,
        })
    }
}

impl Sessions {
    pub fn new(
        store: Store,
        gpus: Arc<dyn GpuBackend>,
        engine: Arc<dyn ContainerEngine>,
        config: Arc<Config>,
    ) -> Sessions {
        Sessions::build(Ctx::new(store, gpus, engine, config, None, Arc::new(SystemClock)))
    }

    /// [`Sessions::new`] with a Slurm cluster for the courses `slurm.courses` names.
    pub fn with_cluster(
        store: Store,
        gpus: Arc<dyn GpuBackend>,
        engine: Arc<dyn ContainerEngine>,
        config: Arc<Config>,
        cluster: Arc<dyn SlurmCluster>,
    ) -> Sessions {
        Sessions::build(Ctx::new(store, gpus, engine, config, Some(cluster), Arc::new(SystemClock)))
    }

    /// [`Sessions::new`] on another clock (a test's [`crate::clock::ManualClock`]).
    pub fn with_clock(
        store: Store,
        gpus: Arc<dyn GpuBackend>,
        engine: Arc<dyn ContainerEngine>,
        config: Arc<Config>,
        clock: Arc<dyn Clock>,
    ) -> Sessions {
        Sessions::build(Ctx::new(store, gpus, engine, config, None, clock))
    }

    fn build(ctx: Ctx) -> Sessions {
        let sessions = Sessions {
            ctx: Arc::new(ctx),
            queue: Default::default(),
            activity: Default::default(),
            idle: Default::default(),
            slurm: Default::default(),
        };
        let weak = sessions.downgrade();
        sessions.ctx.set_queue_wake(Box::new(move || {
            if let Some(sessions) = weak.upgrade() {
                sessions.spawn_dispatch();
            }
        }));
        sessions
    }

    fn downgrade(&self) -> WeakSessions {
        WeakSessions {
            ctx: Arc::downgrade(&self.ctx),
            queue: Arc::downgrade(&self.queue),
            activity: Arc::downgrade(&self.activity),
            idle: Arc::downgrade(&self.idle),
            slurm: Arc::downgrade(&self.slurm),
        }
    }

    /// Now, by the session service's clock.
    pub fn now_ms(&self) -> i64 {
        self.ctx.now_ms()
    }

    /// Stops a session (`reason` says by whom or why); see `stop.rs`.
    pub async fn stop(&self, id: &str, reason: &str) -> Result<GpuSession, CoreError> {
        self.ctx.stop(id, reason).await
    }

    /// The session's container stopped on its own; see `stop.rs`.
    pub async fn container_exited(&self, id: &str, exit_code: Option<i64>) -> Result<(), CoreError> {
        self.ctx.container_exited(id, exit_code).await
    }

    /// This process never places queued sessions (see `DispatchState::enabled`).
    pub fn never_dispatch(&self) {
        self.queue.enabled.store(false, std::sync::atomic::Ordering::SeqCst);
    }

    /// How many state changes this user's sessions have had in this process so far.
    pub fn changes_of(&self, user_id: UserId) -> u64 {
        let changes = self.ctx.changes.lock().unwrap_or_else(|p| p.into_inner());
        changes.get(&user_id).copied().unwrap_or(0)
    }

    /// Every state change of every session from now on, after it is in the database.
    pub fn subscribe(&self) -> broadcast::Receiver<SessionEvent> {
        self.ctx.events.subscribe()
    }

    /// This portal's id, made once and kept in the database; its containers carry it.
    pub async fn instance_id(&self) -> Result<String, CoreError> {
        self.ctx.instance_id().await
    }

    /// Removes this portal's session networks that no container uses any more (at
    /// shutdown): Docker has room for only a few dozen networks on its default pools.
    pub async fn remove_idle_networks(&self) -> Result<usize, CoreError> {
        let instance = self.instance_id().await?;
        let mut removed = 0;
        for internet in [true, false] {
            let network = crate::runtime::SessionNetwork::of(&instance, internet);
            if self.ctx.engine.remove_network_if_unused(&network.name).await? {
                removed += 1;
            }
        }
        self.ctx.networks_ready.lock().await.clear();
        Ok(removed)
    }

    pub async fn session(&self, id: &str) -> Result<GpuSession, CoreError> {
        self.ctx.session(id).await
    }

    /// Stops every session `user_id` has in `course_id` (they were dropped from it).
    pub async fn stop_all_of_user_in_course(&self, user_id: UserId, course_id: CourseId, reason: &str) -> Result<usize, CoreError> {
        let mut stopped = 0;
        for session in self.ctx.store.live_sessions_of_course(course_id).await? {
            if session.user_id != user_id || session.state == super::model::SessionState::Stopping {
                continue;
            }
            match self.ctx.stop(&session.id, reason).await {
                Ok(_) => stopped += 1,
                Err(CoreError::Conflict(_)) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(stopped)
    }

    /// Which of `images` this machine's engine does not have; none when the engine cannot
    /// be asked (it is not answering: starts will say so then).
    pub async fn images_not_on_engine(&self, images: &[String]) -> Vec<String> {
        match self.ctx.engine.missing_images(images).await {
            Ok(missing) => missing,
            Err(e) => {
                tracing::warn!(error = %e, "images not checked");
                Vec::new()
            }
        }
    }

    /// Runs GPU calls off the async runtime, given up on after `gpu.call_timeout_seconds`.
    pub async fn on_gpus<T: Send + 'static>(
        &self,
        work: impl FnOnce(&dyn GpuBackend) -> Result<T, CoreError> + Send + 'static,
    ) -> Result<T, CoreError> {
        self.ctx.on_gpus(work).await
    }

    /// Profile names offered by at least one GPU.
    pub async fn known_profiles(&self) -> Result<Vec<String>, CoreError> {
        self.ctx.on_gpus(crate::gpu::profile_names).await
    }
}

