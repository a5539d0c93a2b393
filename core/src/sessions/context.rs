//! What every part of the session service shares: handles (store, GPUs, engine, cluster,
//! clock, configuration), the locks that order placements and MIG changes, and the event
//! channel. No part's own state lives here; the queue, activity, idle and Slurm parts keep
//! theirs. Names nothing else from `sessions` but the model and the id maker.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use tokio::sync::{broadcast, Mutex, OnceCell};

use super::model::{GpuSession, SessionEvent};
use crate::clock::Clock;
use crate::config::Config;
use crate::gpu::GpuBackend;
use crate::runtime::{ContainerEngine, EngineHost};
use crate::slurm::SlurmCluster;
use crate::store::Store;
use crate::CoreError;
use crate::UserId;

/// Asks the queue for a pass once a slice came free (set by the service that owns the
/// queue; a context without one asks nobody).
pub(super) type QueueWake = dyn Fn() + Send + Sync;

/// How many workers are launching or stopping each session (`in_flight.rs`).
pub(super) type InFlightMarks = std::sync::Mutex<HashMap<String, usize>>;

pub(super) struct Ctx {
    pub store: Store,
    pub gpus: Arc<dyn GpuBackend>,
    pub engine: Arc<dyn ContainerEngine>,
    pub config: Arc<Config>,
    /// The Slurm cluster, when one is configured.
    pub slurm: Option<Arc<dyn SlurmCluster>>,
    /// Where "now" comes from for every time rule (deadlines, idle, quotas, bookings).
    pub clock: Arc<dyn Clock>,
    /// Placement decisions are made one at a time, so each sees what the last one took.
    pub allocation: Mutex<()>,
    /// Where a share per course is set, it is checked and the claim recorded one claim at
    /// a time (`course_share`).
    pub course_claims: Mutex<()>,
    /// MIG instances are created and destroyed one at a time, each after checking that
    /// its session still holds (or no longer holds) the slice: a stop in the middle of a
    /// launch can then never leave the launch's instance behind. Taken after `allocation`
    /// where both are needed.
    pub instances: Mutex<()>,
    pub events: broadcast::Sender<SessionEvent>,
    /// How many state changes each user's sessions have had in this process: a reader
    /// that saw the same count has nothing new to read.
    pub changes: std::sync::Mutex<HashMap<UserId, u64>>,
    /// State changes of all sessions in this process.
    pub all_changes: AtomicU64,
    instance: OnceCell<String>,
    /// Read from the engine at the first launch; the host does not change under a portal.
    pub engine_host: OnceCell<EngineHost>,
    /// Session networks are made when a launch needs them, one caller at a time (the
    /// engine would accept two networks of one name); the bridges this process has made
    /// sure of, firewall rules included.
    pub networks_ready: Mutex<HashSet<String>>,
    /// Sessions this process is launching or stopping right now; the repair pass leaves
    /// them alone (how many workers hold each).
    pub in_flight: Arc<InFlightMarks>,
    /// Per session, between a launch's container steps and a stop (`launch_gate.rs`).
    pub launch_gates: std::sync::Mutex<HashMap<String, Arc<Mutex<()>>>>,
    /// False while the serving portal picks up the sessions of its last run; claims wait
    /// for it, so none is taken for a launch the restart cut off.
    pub recovered: tokio::sync::watch::Sender<bool>,
    /// Why the last reconcile pass could not put the session networks' firewall rules back.
    pub firewall_problem: std::sync::Mutex<Option<String>>,
    /// Launches probing their JupyterLab at the quick rate right now (they share it).
    pub awaiting_jupyter: AtomicUsize,
    queue_wake: OnceLock<Box<QueueWake>>,
}

impl Ctx {
    pub fn new(
        store: Store,
        gpus: Arc<dyn GpuBackend>,
        engine: Arc<dyn ContainerEngine>,
        config: Arc<Config>,
        slurm: Option<Arc<dyn SlurmCluster>>,
        clock: Arc<dyn Clock>,
    ) -> Ctx {
        Ctx {
            store,
            gpus,
            engine,
            config,
            slurm,
            clock,
            allocation: Mutex::new(()),
            course_claims: Mutex::new(()),
            instances: Mutex::new(()),
            events: broadcast::channel(1024).0,
            changes: std::sync::Mutex::new(HashMap::new()),
            all_changes: AtomicU64::new(0),
            instance: OnceCell::new(),
            engine_host: OnceCell::new(),
            networks_ready: Mutex::new(HashSet::new()),
            in_flight: Default::default(),
            launch_gates: std::sync::Mutex::new(HashMap::new()),
            recovered: tokio::sync::watch::Sender::new(true),
            firewall_problem: std::sync::Mutex::new(None),
            awaiting_jupyter: AtomicUsize::new(0),
            queue_wake: OnceLock::new(),
        }
    }

    /// Now, by the service's clock.
    pub fn now_ms(&self) -> i64 {
        self.clock.now_ms()
    }

    /// Who is asked for a queue pass when a slice comes free (set once; it must not keep
    /// the queue alive: the queue owns this context, not the other way round).
    pub fn set_queue_wake(&self, wake: Box<QueueWake>) {
        let _ = self.queue_wake.set(wake);
    }

    /// A slice came free: the queue may place someone on it.
    pub fn wake_queue(&self) {
        if let Some(wake) = self.queue_wake.get() {
            wake();
        }
    }

    /// Counts and announces a state change the database made; `false` for none.
    pub fn publish(&self, event: Option<SessionEvent>) -> bool {
        let Some(event) = event else {
            return false;
        };
        *self.changes.lock().unwrap_or_else(|p| p.into_inner()).entry(event.user_id).or_default() += 1;
        self.all_changes.fetch_add(1, Ordering::SeqCst);
        tracing::info!(session = %event.session_id, state = event.state.as_str(), detail = %event.detail, "session");
        let _ = self.events.send(event);
        true
    }

    /// Tells the session's pages that something they show changed (an idle warning),
    /// without a change of state.
    pub fn touch(&self, session: &GpuSession) {
        self.publish(Some(SessionEvent {
            session_id: session.id.clone(),
            user_id: session.user_id,
            at_ms: self.now_ms(),
            state: session.state,
            detail: "idle warning changed".into(),
        }));
    }

    pub async fn session(&self, id: &str) -> Result<GpuSession, CoreError> {
        self.store
            .gpu_session(id)
            .await?
            .ok_or_else(|| CoreError::NotFound(format!("there is no session {id:?}")))
    }

    /// This portal's id, made once and kept in the database; its containers carry it.
    pub async fn instance_id(&self) -> Result<String, CoreError> {
        self.instance
            .get_or_try_init(|| async {
                let fresh = format!("i-{}", super::ids::new_session_id()?.trim_start_matches("s-"));
                self.store.setting_or_insert("instance.id", &fresh).await
            })
            .await
            .cloned()
    }

    /// Runs GPU calls off the async runtime, given up on after `gpu.call_timeout_seconds`.
    pub async fn on_gpus<T: Send + 'static>(
        &self,
        work: impl FnOnce(&dyn GpuBackend) -> Result<T, CoreError> + Send + 'static,
    ) -> Result<T, CoreError> {
        let limit = std::time::Duration::from_secs(u64::from(self.config.gpu.call_timeout_seconds));
        crate::gpu::on_gpus(&self.gpus, limit, work).await
    }
}
