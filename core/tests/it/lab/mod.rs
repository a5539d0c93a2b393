//! A session service on a fresh database, a simulated H100 and the real Docker engine.

// Each test crate uses a part of these helpers.
#![allow(dead_code)]

pub mod faulty_docker;
pub mod faulty_gpus;
pub mod private_docker;

use std::sync::Arc;
use std::time::{Duration, Instant};

use slicehub_core::clock::SkippingClock;
use slicehub_core::config::Config;
use slicehub_core::gpu::GpuBackend;
use slicehub_gpu::SimulatedBackend;
use slicehub_core::runtime::{ContainerEngine, FakeEngine};
use slicehub_docker::Engine;
use slicehub_core::sessions::{ClaimRequest, GpuSession, SessionState, Sessions, Workload};
use slicehub_core::courses::{set_policy, PolicyForm, PolicyFormRules};
use slicehub_core::store::{NewUserRow, Role, Store};
use slicehub_core::{CourseId, UserId};

pub const BUSYBOX: &str = "slicehub/busybox:offline";

/// Epoch milliseconds now.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64
}

/// A TCP listener on every address of this host, counting the connections it accepts.
pub fn host_service() -> (u16, Arc<std::sync::atomic::AtomicUsize>) {
    let listener = std::net::TcpListener::bind("0.0.0.0:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let accepted = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let count = accepted.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            drop(stream);
        }
    });
    (port, accepted)
}

pub struct Lab {
    pub sessions: Sessions,
    pub store: Store,
    pub gpus: Arc<SimulatedBackend>,
    pub engine: Arc<Engine>,
    /// The engine the sessions use: `engine`, or the in-process one.
    pub sessions_engine: Arc<dyn ContainerEngine>,
    pub config: Arc<Config>,
    /// The sessions' clock: real time, unless a test skips ahead.
    pub clock: Arc<SkippingClock>,
    pub course_id: CourseId,
    /// The portal instance id its containers and networks are labelled with.
    pub instance: String,
    _dir: tempfile::TempDir,
}

pub async fn lab(store: Store, inventory: &str, tweak: impl FnOnce(&mut Config)) -> Lab {
    lab_on(Engine::new(""), store, inventory, tweak).await
}

/// A lab whose sessions talk to the engine through `engine` (e.g. a faulty socket).
pub async fn lab_on(
    engine: Engine,
    store: Store,
    inventory: &str,
    tweak: impl FnOnce(&mut Config),
) -> Lab {
    let engine = Arc::new(engine);
    lab_with(engine.clone(), engine, store, inventory, tweak).await
}

/// A lab whose sessions run on the in-process engine: no container runs, so the rules
/// above the engine are tested in milliseconds. No host firewall either (its bridges
/// would not exist).
pub async fn lab_on_fake(store: Store, inventory: &str, tweak: impl FnOnce(&mut Config)) -> (Lab, Arc<FakeEngine>) {
    let fake = Arc::new(FakeEngine::new());
    let tweak = |config: &mut Config| {
        config.sessions.host_firewall = false;
        tweak(config);
    };
    let lab = lab_with(Arc::new(Engine::new("")), fake.clone(), store, inventory, tweak).await;
    (lab, fake)
}

async fn lab_with(
    engine: Arc<Engine>,
    sessions_engine: Arc<dyn ContainerEngine>,
    store: Store,
    inventory: &str,
    tweak: impl FnOnce(&mut Config),
) -> Lab {
    let dir = tempfile::tempdir().unwrap();
    let gpus = Arc::new(
        SimulatedBackend::open(inventory, dir.path().join("simulated-gpus.json")).unwrap(),
    );
    let mut config = Config::default();
    config.sessions.default_image = BUSYBOX.to_string();
    config.sessions.memory_mib_per_memory_slice = 128;
    config.sessions.reconcile_seconds = 1;
    tweak(&mut config);
    let course = store.insert_course("CS-101", "Deep Learning").await.unwrap();
    let backend: Arc<dyn GpuBackend> = gpus.clone();
    let config = Arc::new(config);
    let clock = Arc::new(SkippingClock::default());
    let sessions = Sessions::with_clock(store.clone(), backend, sessions_engine.clone(), config.clone(), clock.clone());
    let instance = sessions.instance_id().await.unwrap();
    Lab {
        instance,
        sessions,
        config,
        clock,
        store,
        gpus,
        engine,
        sessions_engine,
        course_id: course.id,
        _dir: dir,
    }
}

impl Lab {
    /// A weekly budget of `hours` slice-hours in UTC, resetting on `reset_day` (0 =
    /// Monday) at `reset_minute`; busybox only, two sessions at once, up to a whole GPU.
    pub async fn set_quota(&self, hours: &str, reset_day: u32, reset_minute: u32) {
        let known = self.sessions.known_profiles().await.unwrap();
        let form = PolicyForm {
            images: BUSYBOX.into(),
            max_minutes: "600".into(),
            max_sessions: "2".into(),
            max_slices: "7".into(),
            internet: "on".into(),
            quota_hours: hours.into(),
            period: "week".into(),
            reset_day: reset_day.to_string(),
            reset_time: format!("{:02}:{:02}", reset_minute / 60, reset_minute % 60),
            time_zone: "UTC".into(),
            ..PolicyForm::default()
        };
        let policy = form.parse(&known).unwrap();
        set_policy(&self.store, &self.config, self.course_id, &policy, &known, "instructor").await.unwrap();
    }

    pub async fn student(&self, username: &str) -> UserId {
        let user = self
            .store
            .insert_user(&NewUserRow {
                username,
                display_name: username,
                email: None,
                password_hash: "not-a-real-hash",
                is_admin: false,
                must_change_password: false,
            })
            .await
            .unwrap();
        self.store
            .set_member_role(self.course_id, user.id, Role::Student)
            .await
            .unwrap();
        user.id
    }

    pub fn job(&self, user_id: UserId, argv: &[&str]) -> ClaimRequest {
        ClaimRequest {
            user_id,
            course_id: self.course_id,
            profile: "1g.10gb".to_string(),
            image: BUSYBOX.to_string(),
            workload: Workload::Job(argv.iter().map(|a| a.to_string()).collect()),
        }
    }

    /// Waits until the session is in one of `states`, or panics after `limit`.
    pub async fn until(&self, id: &str, states: &[SessionState], limit: Duration) -> GpuSession {
        let started = Instant::now();
        loop {
            let session = self.sessions.session(id).await.unwrap();
            if states.contains(&session.state) {
                return session;
            }
            assert!(
                started.elapsed() < limit,
                "session {id} is {:?} ({}) after {limit:?}, expected one of {states:?}",
                session.state,
                session.reason
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    pub async fn container_exists(&self, name: &str) -> bool {
        self.engine.status(name).await.unwrap().is_some()
    }

    pub fn instance_count(&self) -> usize {
        self.gpus.instances(0).unwrap().len()
    }

    /// Stops every session still live, newest first so no queued claim is promoted on
    /// the way, and removes their containers.
    pub async fn clean_up(&self) {
        let live = self
            .store
            .gpu_sessions_in(SessionState::ACTIVE)
            .await
            .unwrap();
        for s in live.iter().rev() {
            let _ = self.sessions.stop(&s.id, "test over").await;
        }
        let instance = self.sessions.instance_id().await.unwrap();
        for c in self.sessions_engine.managed_containers(&instance).await.unwrap() {
            self.sessions_engine.remove(&c.name).await.unwrap();
        }
        self.sessions.remove_idle_networks().await.unwrap();
    }
}

impl Drop for Lab {
    /// Whatever a test left of its lab in Docker goes with it, containers first, then the
    /// session networks: Docker's default address pools hold only about 30 networks, and
    /// the suite starts far more labs than that.
    fn drop(&mut self) {
        let filter = format!("label=org.slicehub.instance={}", self.instance);
        let ids = |args: &[&str]| -> Vec<String> {
            std::process::Command::new("docker")
                .args(args)
                .output()
                .map(|o| String::from_utf8_lossy(&o.stdout).split_whitespace().map(String::from).collect())
                .unwrap_or_default()
        };
        let containers = ids(&["ps", "-aq", "--filter", &filter]);
        if !containers.is_empty() {
            let _ = std::process::Command::new("docker").args(["rm", "-f"]).args(&containers).output();
        }
        let networks = ids(&["network", "ls", "-q", "--filter", &filter]);
        if !networks.is_empty() {
            let _ = std::process::Command::new("docker").args(["network", "rm"]).args(&networks).output();
        }
    }
}
