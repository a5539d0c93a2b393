use std::sync::Arc;

use tokio::sync::{broadcast, Mutex};

use super::model::{GpuSession, SessionEvent, SessionKind, SessionPool};
use crate::courses::policy_of;
use crate::auth::tokens::new_session_token;
use crate::clock::{Clock, SystemClock};
use crate::config::Config;
use crate::gpu::GpuBackend;
use crate::runtime::{ContainerEngine, EngineHost};
use crate::store::{NewGpuSession, Store};
use crate::CoreError;

/// What a student asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimRequest {
    pub user_id: i64,
    pub course_id: i64,
    pub profile: String,
    pub image: String,
    pub workload: Workload,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Workload {
    Notebook,
    /// The command as argv; it is never handed to a shell.
    Job(Vec<String>),
}

/// The session service. Cheap to clone; every clone shares one allocation lock and one
/// event channel.
#[derive(Clone)]
pub struct Sessions {
    pub(super) inner: Arc<Inner>,
}

pub(super) struct Inner {
    pub store: Store,
    pub gpus: Arc<dyn GpuBackend>,
    pub engine: Arc<dyn ContainerEngine>,
    pub config: Arc<Config>,
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
    pub changes: std::sync::Mutex<std::collections::HashMap<i64, u64>>,
    instance: tokio::sync::OnceCell<String>,
    /// Read from the engine at the first launch; the host does not change under a portal.
    pub engine_host: tokio::sync::OnceCell<EngineHost>,
    /// Session networks are made when a launch needs them, one caller at a time (the
    /// engine would accept two networks of one name); the bridges this process has made
    /// sure of, firewall rules included.
    pub networks_ready: Mutex<std::collections::HashSet<String>>,
    /// Sessions this process is launching or stopping right now; the repair pass leaves
    /// them alone (how many workers hold each).
    pub in_flight: std::sync::Mutex<std::collections::HashMap<String, usize>>,
    /// False while the serving portal picks up the sessions of its last run; claims wait
    /// for it, so none is taken for a launch the restart cut off.
    pub recovered: tokio::sync::watch::Sender<bool>,
    /// Why the last reconcile pass could not put the session networks' firewall rules back.
    pub firewall_problem: std::sync::Mutex<Option<String>>,
    /// Per session, between a launch's container steps and a stop (`launch_gate.rs`).
    pub launch_gates: std::sync::Mutex<std::collections::HashMap<String, Arc<Mutex<()>>>>,
    /// The queue's passes (`queue.rs`).
    pub dispatch: super::queue::DispatchState,
    /// The slice samples of running sessions (`activity`).
    pub activity: std::sync::Mutex<super::activity::ActivityState>,
    /// State changes of all sessions in this process.
    pub all_changes: std::sync::atomic::AtomicU64,
    /// The last queue estimates, with the change count and moment they were made for.
    pub estimates: std::sync::Mutex<Option<super::eta::Remembered>>,
    /// What the idle rule keeps between passes (`lifecycle/idle.rs`).
    pub idle: super::lifecycle::IdleState,
    /// The Slurm pool's cluster and what its watcher last read (`slurm_pool.rs`).
    pub slurm: super::slurm_pool::SlurmState,
    /// Where "now" comes from for every time rule (deadlines, idle, quotas, bookings).
    pub clock: Arc<dyn Clock>,
}

impl Sessions {
    pub fn new(
        store: Store,
        gpus: Arc<dyn GpuBackend>,
        engine: Arc<dyn ContainerEngine>,
        config: Arc<Config>,
    ) -> Sessions {
        Sessions::with_clock(store, gpus, engine, config, Arc::new(SystemClock))
    }

    /// [`Sessions::new`] on another clock (a test's [`crate::clock::ManualClock`]).
    pub fn with_clock(
        store: Store,
        gpus: Arc<dyn GpuBackend>,
        engine: Arc<dyn ContainerEngine>,
        config: Arc<Config>,
        clock: Arc<dyn Clock>,
    ) -> Sessions {
        let (events, _) = broadcast::channel(1024);
        let slurm = (!config.slurm_url.is_empty()).then(|| crate::slurm::SlurmClient::new(&config.slurm_url, slurm_identity(&config)));
        Sessions {
            inner: Arc::new(Inner {
                store,
                gpus,
                engine,
                config,
                allocation: Mutex::new(()),
                course_claims: Mutex::new(()),
                instances: Mutex::new(()),
                events,
                changes: std::sync::Mutex::new(std::collections::HashMap::new()),
                instance: tokio::sync::OnceCell::new(),
                engine_host: tokio::sync::OnceCell::new(),
                networks_ready: Mutex::new(std::collections::HashSet::new()),
                in_flight: std::sync::Mutex::new(std::collections::HashMap::new()),
                launch_gates: std::sync::Mutex::new(std::collections::HashMap::new()),
                recovered: tokio::sync::watch::Sender::new(true),
                firewall_problem: std::sync::Mutex::new(None),
                dispatch: Default::default(),
                activity: std::sync::Mutex::new(Default::default()),
                all_changes: std::sync::atomic::AtomicU64::new(0),
                estimates: std::sync::Mutex::new(None),
                idle: Default::default(),
                slurm: super::slurm_pool::SlurmState::new(slurm),
                clock,
            }),
        }
    }

    /// Now, by the session service's clock.
    pub fn now_ms(&self) -> i64 {
        self.inner.clock.now_ms()
    }

    /// This process never places queued sessions (see `DispatchState::enabled`).
    pub fn never_dispatch(&self) {
        self.inner.dispatch.enabled.store(false, std::sync::atomic::Ordering::SeqCst);
    }

    /// How many state changes this user's sessions have had in this process so far.
    pub fn changes_of(&self, user_id: i64) -> u64 {
        let changes = self.inner.changes.lock().unwrap_or_else(|p| p.into_inner());
        changes.get(&user_id).copied().unwrap_or(0)
    }

    /// Every state change of every session from now on, after it is in the database.
    pub fn subscribe(&self) -> broadcast::Receiver<SessionEvent> {
        self.inner.events.subscribe()
    }

    pub(super) fn publish(&self, event: Option<SessionEvent>) -> bool {
        match event {
            Some(event) => {
                *self
                    .inner
                    .changes
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .entry(event.user_id)
                    .or_default() += 1;
                self.inner
                    .all_changes
                    .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                tracing::info!(session = %event.session_id, state = event.state.as_str(), detail = %event.detail, "session");
                let _ = self.inner.events.send(event);
                true
            }
            None => false,
        }
    }

    /// Tells the session's pages that something they show changed (an idle warning),
    /// without a change of state.
    pub(super) fn touch(&self, session: &GpuSession) {
        self.publish(Some(SessionEvent {
            session_id: session.id.clone(),
            user_id: session.user_id,
            at_ms: self.now_ms(),
            state: session.state,
            detail: "idle warning changed".into(),
        }));
    }

    /// This portal's id, made once and kept in the database; its containers carry it.
    pub async fn instance_id(&self) -> Result<String, CoreError> {
        self.inner
            .instance
            .get_or_try_init(|| async {
                let fresh = format!("i-{}", new_session_id()?.trim_start_matches("s-"));
                self.inner.store.setting_or_insert("instance.id", &fresh).await
            })
            .await
            .cloned()
    }

    /// Removes this portal's session networks that no container uses any more (at
    /// shutdown): Docker has room for only a few dozen networks on its default pools.
    pub async fn remove_idle_networks(&self) -> Result<usize, CoreError> {
        let instance = self.instance_id().await?;
        let mut removed = 0;
        for internet in [true, false] {
            let network = crate::runtime::SessionNetwork::of(&instance, internet);
            if self.inner.engine.remove_network_if_unused(&network.name).await? {
                removed += 1;
            }
        }
        self.inner.networks_ready.lock().await.clear();
        Ok(removed)
    }

    pub async fn session(&self, id: &str) -> Result<GpuSession, CoreError> {
        self.inner
            .store
            .gpu_session(id)
            .await?
            .ok_or_else(|| CoreError::NotFound(format!("there is no session {id:?}")))
    }

    /// Records the claim, places it on a slice now if one is free (otherwise it waits in
    /// the queue) and starts launching it in the background. The caller has already been
    /// authorized to launch in the course.
    pub async fn claim(&self, request: ClaimRequest) -> Result<GpuSession, CoreError> {
        check_claim_text(&request)?;
        self.wait_recovered().await?;
        let store = &self.inner.store;
        let policy = policy_of(store, &self.inner.config, request.course_id).await?;
        if !policy.allows_image(&request.image) {
            return Err(CoreError::InvalidRequest(format!(
                "this course does not allow the image {:?}; allowed: {}",
                request.image,
                policy.images.join(", ")
            )));
        }
        let slices = crate::quotas::compute_slices(&request.profile);
        if !policy.allows_profile(&request.profile) && slices > policy.max_slices {
            return Err(CoreError::InvalidRequest(format!(
                "this course lets one student take at most {} compute slices at once; {} has {slices} (ask your instructor)",
                policy.max_slices, request.profile
            )));
        }
        if !policy.allows_profile(&request.profile) {
            return Err(CoreError::InvalidRequest(format!(
                "this course does not allow the profile {:?}; allowed: {}",
                request.profile,
                policy.profiles.join(", ")
            )));
        }
        let now = self.now_ms();
        let budget = crate::quotas::budget_at(store, &policy, request.course_id, request.user_id, now).await?;
        if let Some(budget) = budget {
            if !self.budget_starts(&budget, &request.profile) {
                return Err(CoreError::InvalidRequest(format!(
                    "Not enough slice-hours left to run a {} for {} minutes: {}.",
                    request.profile,
                    self.inner.config.quotas_min_launch_minutes,
                    budget.summary()
                )));
            }
        }
        let config = &self.inner.config;
        let code = course_code(store, request.course_id).await?;
        let pool = if !config.slurm_url.is_empty() && config.runs_on_slurm(&code) {
            SessionPool::Slurm
        } else {
            SessionPool::Local
        };
        match pool {
            SessionPool::Local => self.require_known_profile(&request.profile).await?,
            SessionPool::Slurm => {
                let known = self.slurm_profiles().await?;
                if !known.contains(&request.profile) {
                    return Err(CoreError::InvalidRequest(format!(
                        "no node of the Slurm cluster offers the profile {:?}; there are {}",
                        request.profile,
                        known.join(", ")
                    )));
                }
            }
        }
        let (kind, argv) = match &request.workload {
            Workload::Notebook => (SessionKind::Notebook, Vec::new()),
            Workload::Job(argv) if argv.is_empty() || argv[0].trim().is_empty() => {
                return Err(CoreError::InvalidRequest(
                    "a training job needs a command to run".into(),
                ))
            }
            Workload::Job(argv) => (SessionKind::Job, argv.clone()),
        };
        let id = new_session_id()?;
        let token = new_session_token()?;
        let deadline = super::lifecycle::deadline_at_claim(now, policy.max_minutes);
        let new = NewGpuSession {
            id: &id,
            user_id: request.user_id,
            course_id: request.course_id,
            kind,
            pool,
            profile: &request.profile,
            image: &request.image,
            argv: &argv,
            token: &token,
            deadline_at_ms: deadline,
        };
        let sharing = match pool {
            SessionPool::Local => self.require_course_share(request.course_id, &code, &request.profile).await?,
            SessionPool::Slurm => None,
        };
        let event = store
            .insert_gpu_session(&new, policy.max_sessions)
            .await?;
        drop(sharing);
        self.publish(Some(event));
        if pool == SessionPool::Slurm {
            self.submit_to_slurm(&id, policy.max_minutes).await?;
            return self.session(&id).await;
        }
        // The claim is written: from here on it waits for its turn whatever the GPUs
        // answer now (the next pass places it), rather than reporting an error for a
        // session that exists.
        // The pass launches what it places.
        if let Err(e) = self.serve_queue(Some(&id)).await {
            tracing::warn!(session = %id, error = %e, "claim written but not placed yet; the next pass tries again");
        }
        self.session(&id).await
    }

    /// Refuses a profile no GPU offers, naming those they do.
    pub(super) async fn require_known_profile(&self, profile: &str) -> Result<(), CoreError> {
        let known = self.known_profiles().await?;
        if known.iter().any(|k| k == profile) {
            return Ok(());
        }
        Err(CoreError::InvalidRequest(format!(
            "no GPU here offers the profile {:?}; there are {}",
            crate::auth::validate::excerpt(profile),
            known.join(", ")
        )))
    }

    /// Whether `budget` pays for the shortest start of `profile` (`quotas.min_launch_minutes`):
    /// the rule a claim is refused by, and what the launch card shows before one is made.
    pub fn budget_starts(&self, budget: &crate::quotas::Budget, profile: &str) -> bool {
        let minutes = i64::from(self.inner.config.quotas_min_launch_minutes);
        budget.affords(crate::quotas::compute_slices(profile), minutes)
    }

    /// Stops every session `user_id` has in `course_id` (they were dropped from it).
    pub async fn stop_all_of_user_in_course(&self, user_id: i64, course_id: i64, reason: &str) -> Result<usize, CoreError> {
        let mut stopped = 0;
        for session in self.inner.store.live_sessions_of_course(course_id).await? {
            if session.user_id != user_id || session.state == super::model::SessionState::Stopping {
                continue;
            }
            match self.stop(&session.id, reason).await {
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
        match self.inner.engine.missing_images(images).await {
            Ok(missing) => missing,
            Err(e) => {
                tracing::warn!(error = %e, "images not checked");
                Vec::new()
            }
        }
    }

    /// Profile names offered by at least one GPU.
    pub async fn known_profiles(&self) -> Result<Vec<String>, CoreError> {
        self.on_gpus(crate::gpu::profile_names).await
    }

    /// Runs GPU calls off the async runtime, given up on after `gpu.call_timeout_seconds`.
    pub(super) async fn on_gpus<T: Send + 'static>(
        &self,
        work: impl FnOnce(&dyn GpuBackend) -> Result<T, CoreError> + Send + 'static,
    ) -> Result<T, CoreError> {
        let limit = std::time::Duration::from_secs(u64::from(self.inner.config.gpu_call_timeout_seconds));
        crate::gpu::on_gpus(&self.inner.gpus, limit, work).await
    }
}

/// Per-student tokens signed with the cluster's key when `slurm.jwt_key_file` is set (read
/// at start; config loading checked it is a file), otherwise the one configured token.
fn slurm_identity(config: &Config) -> crate::slurm::SlurmIdentity {
    use crate::slurm::SlurmIdentity;
    let shared = || SlurmIdentity::Shared { user: config.slurm_user.clone(), token: config.slurm_token.clone() };
    if config.slurm_jwt_key_file.is_empty() {
        return shared();
    }
    match std::fs::read(&config.slurm_jwt_key_file) {
        Ok(secret) => SlurmIdentity::PerStudent {
            user: config.slurm_user.clone(),
            key: jsonwebtoken::EncodingKey::from_secret(&secret),
            users: cluster_users(config),
        },
        Err(e) => {
            tracing::error!(file = %config.slurm_jwt_key_file, error = %e, "slurm: the JWT key cannot be read; requests use slurm.token");
            shared()
        }
    }
}

/// The administrator's links from portal users to cluster users (`slurm.users_file`); with
/// none, no student's job runs in per-student mode.
fn cluster_users(config: &Config) -> crate::slurm::ClusterUsers {
    if config.slurm_users_file.is_empty() {
        tracing::error!("slurm: slurm.jwt_key_file is set but slurm.users_file is not: no student is linked to a cluster account, so none can start on the cluster");
        return Default::default();
    }
    match std::fs::read_to_string(&config.slurm_users_file) {
        Ok(text) => {
            let (users, problems) = crate::slurm::ClusterUsers::parse(&text, &config.slurm_user);
            for problem in problems {
                tracing::error!(file = %config.slurm_users_file, %problem, "slurm: a line of the users file is left out");
            }
            users
        }
        Err(e) => {
            tracing::error!(file = %config.slurm_users_file, error = %e, "slurm: the users file cannot be read; no student can start on the cluster");
            Default::default()
        }
    }
}

/// The longest MIG profile name a claim or booking may give (real ones are like `1g.10gb`).
pub const MAX_PROFILE_CHARS: usize = 64;
/// The longest image reference a claim may give (course policies allow at most 255).
pub const MAX_IMAGE_CHARS: usize = 255;

/// A claim's text before anything else looks at it: a bounded profile and image on one
/// line, and a command whose words hold no control character but line breaks and tabs.
fn check_claim_text(request: &ClaimRequest) -> Result<(), CoreError> {
    use crate::auth::validate::{check_text, Lines};
    check_text("the profile", &request.profile, MAX_PROFILE_CHARS, Lines::One).map_err(CoreError::InvalidRequest)?;
    check_text("the image", &request.image, MAX_IMAGE_CHARS, Lines::One).map_err(CoreError::InvalidRequest)?;
    if let Workload::Job(argv) = &request.workload {
        for word in argv {
            check_text("the command", word, super::argv::MAX_COMMAND_BYTES, Lines::Many).map_err(CoreError::InvalidRequest)?;
        }
    }
    Ok(())
}

/// The course's code (Slurm pools are chosen by course).
async fn course_code(store: &Store, course_id: i64) -> Result<String, CoreError> {
    Ok(store
        .course_by_id(course_id)
        .await?
        .ok_or_else(|| CoreError::NotFound(format!("there is no course {course_id}")))?
        .code)
}

/// `s-` and 12 lowercase letters and digits: short enough for a URL, and a container name.
fn new_session_id() -> Result<String, CoreError> {
    const ALPHABET: &[u8] = b"abcdefghijkmnpqrstuvwxyz23456789";
    let bytes = crate::auth::tokens::random_bytes::<12>()?;
    let tail: String = bytes
        .iter()
        .map(|b| ALPHABET[usize::from(*b) % ALPHABET.len()] as char)
        .collect();
    Ok(format!("s-{tail}"))
}
