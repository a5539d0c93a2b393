//! Faults a healthy engine never shows, injected on a socket in front of the real Docker
//! engine (`lab::faulty_docker`): a container that cannot be removed keeps its slice, its
//! session stays `stopping` and the reconciler's passes go on; once removal works again, a
//! pass finishes the stop and the next student gets the slice. A launch that nobody
//! finishes (its process gave up on it) is failed and cleaned up by the repair pass.
//! Needs the Docker engine and `slicehub/busybox:offline`.

mod common;
mod lab;

use std::sync::Arc;
use std::time::{Duration, Instant};

use lab::faulty_docker::{Fault, FaultyDocker};
use lab::{lab_on, BUSYBOX};
use slicehub_core::config::Config;
use slicehub_core::gpu::{BackendKind, Catalog, GpuBackend, GpuHealth, GpuInfo, GpuUtilization, MigInstance, Placement};
use slicehub_core::CoreError;
use slicehub_core::runtime::Engine;
use slicehub_core::sessions::{SessionState, Sessions};
use slicehub_core::store::Store;
use SessionState::*;

const LONG: Duration = Duration::from_secs(60);

async fn a_slice_stays_held_until_its_container_is_gone(store: Store) {
    let docker = FaultyDocker::start();
    // A whole GPU per student: the course cap is raised to 7 compute slices.
    let lab = lab_on(Engine::new(&docker.host), store, "1 x H100-80GB", |c| c.sessions_max_compute_slices = 7).await;
    let (alice, bob) = (lab.student("fa-alice").await, lab.student("fa-bob").await);
    let whole_gpu = |user| {
        let mut claim = lab.job(user, &["sleep", "600"]);
        claim.profile = "7g.80gb".to_string();
        claim
    };
    let first = lab.sessions.claim(whole_gpu(alice)).await.unwrap();
    let first = lab.until(&first.id, &[Ready], LONG).await;
    let container = first.container.clone().unwrap();

    docker.set(Fault::RefuseRemoval);
    let refused = lab.sessions.stop(&first.id, "stopped by fa-alice").await;
    assert!(refused.is_err(), "the stop says the container could not be removed");
    assert_eq!(lab.sessions.session(&first.id).await.unwrap().state, Stopping);
    assert!(lab.container_exists(&container).await, "the container still runs");
    let second = lab.sessions.claim(whole_gpu(bob)).await.unwrap();
    assert_eq!(second.state, Queued, "the GPU is not handed out while its container lives");
    for _ in 0..2 {
        lab.sessions.reconcile().await.expect("a pass goes on whatever one session does");
    }
    assert_eq!(lab.sessions.session(&first.id).await.unwrap().state, Stopping);
    assert_eq!(lab.sessions.session(&second.id).await.unwrap().state, Queued);
    assert_eq!(lab.instance_count(), 1);

    // The engine recovers: a pass (after the stop has been quiet a few seconds) finishes it.
    docker.set(Fault::None);
    let until = Instant::now() + Duration::from_secs(30);
    while lab.sessions.session(&first.id).await.unwrap().state != Ended {
        assert!(Instant::now() < until, "the stop was never finished");
        lab.sessions.reconcile().await.unwrap();
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    assert!(!lab.container_exists(&container).await);
    let second = lab.until(&second.id, &[Ready], LONG).await;
    assert_eq!(second.placement.unwrap().label, first.placement.unwrap().label);
    lab.clean_up().await;
}

async fn a_launch_nobody_finishes_is_failed_and_cleaned_up(store: Store) {
    let docker = FaultyDocker::start();
    let lab = lab_on(Engine::new(&docker.host), store.clone(), "1 x H100-80GB", |_| {}).await;
    let carol = lab.student("fa-carol").await;
    docker.set(Fault::SwallowCreate);
    let stuck = lab.sessions.claim(lab.job(carol, &["sleep", "600"])).await.unwrap();
    lab.until(&stuck.id, &[Creating], LONG).await;

    // Another process of the portal (as after its first one hung) sees a launch that nobody
    // in it is working on, and no change for a while.
    let mut config = Config::default();
    config.sessions_default_image = BUSYBOX.to_string();
    let other = Sessions::new(store, lab.gpus.clone(), Arc::new(Engine::new("")), Arc::new(config));
    let report = other.reconcile().await.unwrap();
    assert_eq!(report.repaired, 0, "not while the launch may still be under way");
    tokio::time::sleep(Duration::from_millis(5_500)).await;
    let report = other.reconcile().await.unwrap();
    assert_eq!(report.repaired, 1, "{report:?}");
    let failed = other.session(&stuck.id).await.unwrap();
    assert_eq!(failed.state, Failed);
    assert!(failed.reason.contains("launch stopped midway"), "{}", failed.reason);
    assert_eq!(lab.instance_count(), 0, "its MIG instance is gone");
    docker.set(Fault::None);
    lab.clean_up().await;
}

/// The simulated GPUs, but creating an instance takes as long as on a real GPU under load.
struct SlowToCreate(Arc<slicehub_core::gpu::SimulatedBackend>);

impl GpuBackend for SlowToCreate {
    fn kind(&self) -> BackendKind {
        self.0.kind()
    }
    fn describe(&self) -> String {
        self.0.describe()
    }
    fn list_gpus(&self) -> Result<Vec<GpuInfo>, CoreError> {
        self.0.list_gpus()
    }
    fn catalog(&self, gpu_index: u32) -> Result<Catalog, CoreError> {
        self.0.catalog(gpu_index)
    }
    fn instances(&self, gpu_index: u32) -> Result<Vec<MigInstance>, CoreError> {
        self.0.instances(gpu_index)
    }
    fn create_instance(&self, gpu_index: u32, placement: Placement) -> Result<MigInstance, CoreError> {
        std::thread::sleep(Duration::from_millis(500));
        self.0.create_instance(gpu_index, placement)
    }
    fn destroy_instance(&self, gpu_index: u32, placement: Placement) -> Result<(), CoreError> {
        self.0.destroy_instance(gpu_index, placement)
    }
    fn utilization(&self, gpu_index: u32) -> Result<GpuUtilization, CoreError> {
        self.0.utilization(gpu_index)
    }
    fn health(&self, gpu_index: u32) -> Result<GpuHealth, CoreError> {
        self.0.health(gpu_index)
    }
}

/// A stop that arrives while the launch is creating the session's MIG instance: the
/// instance does not outlive the session.
async fn a_stop_while_the_instance_is_created_leaves_no_instance(store: Store) {
    let lab = lab::lab(store.clone(), "1 x H100-80GB", |_| {}).await;
    let slow = Sessions::new(store, Arc::new(SlowToCreate(lab.gpus.clone())), lab.engine.clone(), lab.config.clone());
    let mia = lab.student("mid-mia").await;
    let claimed = slow.claim(lab.job(mia, &["sleep", "600"])).await.unwrap();
    assert_eq!(claimed.state, Allocating);
    // The launch (in the background) is now inside the instance's creation.
    tokio::time::sleep(Duration::from_millis(200)).await;
    slow.stop(&claimed.id, "changed my mind").await.unwrap();
    // Long after the creation would have finished.
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    assert_eq!(slow.session(&claimed.id).await.unwrap().state, Ended);
    assert_eq!(lab.instance_count(), 0, "{:?}", lab.gpus.instances(0).unwrap());
    assert!(lab.store.held_slices().await.unwrap().is_empty());
    lab.clean_up().await;
}

async fn leftover_instances_of_the_portal_go_and_an_admins_stay(store: Store) {
    let lab = lab::lab(store, "1 x H100-80GB", |_| {}).await;
    let alice = lab.student("lo-alice").await;
    let claimed = lab.sessions.claim(lab.job(alice, &["sleep", "600"])).await.unwrap();
    let used = lab.until(&claimed.id, &[Ready], LONG).await.placement.unwrap();
    lab.sessions.stop(&claimed.id, "done").await.unwrap();
    assert_eq!(lab.instance_count(), 0);

    // What a second portal process racing this one could leave: the instance again, held
    // by nobody. Beside it, one an admin made by hand where the portal never made one.
    let mine = Placement::new(used.profile_id, used.start);
    lab.gpus.create_instance(0, mine).unwrap();
    let catalog = lab.gpus.catalog(0).unwrap();
    let two_g = catalog.profile_by_name("2g.20gb").unwrap();
    let start = *two_g
        .starts
        .iter()
        .find(|&&s| two_g.mask_at(s).unwrap() & (1 << used.start) == 0)
        .unwrap();
    let admins = Placement::new(two_g.id, start);
    lab.gpus.create_instance(0, admins).unwrap();

    let report = lab.sessions.reconcile().await.unwrap();
    assert_eq!(report.instances_destroyed, 1, "{report:?}");
    let left: Vec<Placement> = lab.gpus.instances(0).unwrap().into_iter().map(|i| i.placement).collect();
    assert_eq!(left, vec![admins]);
    lab.clean_up().await;
}

on_both_databases!(
    a_slice_stays_held_until_its_container_is_gone,
    a_launch_nobody_finishes_is_failed_and_cleaned_up,
    a_stop_while_the_instance_is_created_leaves_no_instance,
    leftover_instances_of_the_portal_go_and_an_admins_stay,
);
