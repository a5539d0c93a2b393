//! Faults a healthy engine never shows, injected on a socket in front of the real Docker
//! engine (`lab::faulty_docker`): a container that cannot be removed keeps its slice, its
//! session stays `stopping` and the reconciler's passes go on; once removal works again, a
//! pass finishes the stop and the next student gets the slice. A launch that nobody
//! finishes (its process gave up on it) is failed and cleaned up by the repair pass.
//! Needs the Docker engine and `slicehub/busybox:offline`.


use crate::lab;

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::lab::faulty_docker::{Fault, FaultyDocker, SLOW};
use crate::lab::faulty_gpus::FaultyGpus;
use crate::lab::{lab_on, BUSYBOX};
use slicehub_core::config::Config;
use slicehub_core::gpu::{GpuBackend, Placement};
use slicehub_docker::Engine;
use slicehub_core::sessions::{SessionState, Sessions};
use slicehub_core::store::Store;
use SessionState::*;

const LONG: Duration = Duration::from_secs(60);

async fn a_slice_stays_held_until_its_container_is_gone(store: Store) {
    let docker = FaultyDocker::start();
    // A whole GPU per student: the course cap is raised to 7 compute slices.
    let lab = lab_on(Engine::new(&docker.host), store, "1 x H100-80GB", |c| c.sessions.max_compute_slices = 7).await;
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
    config.sessions.default_image = BUSYBOX.to_string();
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

/// A stop that arrives while the launch is creating the session's MIG instance: the
/// instance does not outlive the session.
async fn a_stop_while_the_instance_is_created_leaves_no_instance(store: Store) {
    let lab = lab::lab(store.clone(), "1 x H100-80GB", |_| {}).await;
    let gpus = FaultyGpus::over(lab.gpus.clone());
    gpus.slow_create(true);
    let slow = Sessions::new(store, gpus, lab.engine.clone(), lab.config.clone());
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

/// A second stop (a second click, an instructor) loses to the first, which is slow to
/// remove the container: the repair pass must not take the stop over meanwhile (it used
/// to, and its stale copy could destroy the next student's instance and overwrite the
/// reason).
async fn a_second_stop_leaves_a_slow_first_stop_alone(store: Store) {
    let docker = FaultyDocker::start();
    let lab = lab_on(Engine::new(&docker.host), store, "1 x H100-80GB", |_| {}).await;
    let dana = lab.student("fa-dana").await;
    let job = lab.sessions.claim(lab.job(dana, &["sleep", "600"])).await.unwrap();
    lab.until(&job.id, &[Ready], LONG).await;

    docker.set(Fault::SlowRemoval);
    let first = {
        let (sessions, id) = (lab.sessions.clone(), job.id.clone());
        tokio::spawn(async move { sessions.stop(&id, "stopped by fa-dana").await })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    let second = lab.sessions.stop(&job.id, "stopped by the instructor").await.unwrap();
    assert_eq!(second.state, Stopping, "the second stop leaves it to the first");
    tokio::time::sleep(Duration::from_millis(5_500)).await;
    let report = lab.sessions.reconcile().await.unwrap();
    assert_eq!(report.repaired, 0, "the first stop is still at work: {report:?}");
    let ended = first.await.unwrap().unwrap();
    assert_eq!(ended.state, Ended);
    assert_eq!(ended.reason, "stopped by fa-dana", "the stop that did the work names its reason");
    docker.set(Fault::None);
    lab.clean_up().await;
}

/// One GPU of two lost (every NVML call on it fails): claims go to the other GPU and start,
/// instead of every claim failing after its row was written.
async fn a_lost_gpu_leaves_the_others_serving(store: Store) {
    let lab = lab::lab(store.clone(), "2 x H100-80GB", |_| {}).await;
    let gpus = FaultyGpus::over(lab.gpus.clone());
    gpus.lose(Some(0));
    let sessions = Sessions::new(store, gpus.clone(), lab.engine.clone(), lab.config.clone());
    let (erin, finn) = (lab.student("lost-erin").await, lab.student("lost-finn").await);
    let claimed = sessions.claim(lab.job(erin, &["sleep", "600"])).await.expect("the claim is served by GPU 1");
    let ready = {
        let until = Instant::now() + LONG;
        loop {
            let s = sessions.session(&claimed.id).await.unwrap();
            if s.state == Ready {
                break s;
            }
            assert!(!s.state.is_final() && Instant::now() < until, "{:?}: {}", s.state, s.reason);
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    };
    assert_eq!(ready.placement.unwrap().gpu_index, 1, "only GPU 1 can be read");
    let report = sessions.reconcile().await.expect("a pass goes on past the lost GPU");
    assert_eq!(report.sessions_ended, 0, "{report:?}");
    assert!(sessions.availability(&["1g.10gb".to_string()]).await.is_ok(), "the launch card still answers");
    // Back, the GPU serves again.
    gpus.lose(None);
    let second = sessions.claim(lab.job(finn, &["sleep", "600"])).await.unwrap();
    assert!(!second.state.is_final(), "{}", second.reason);
    sessions.stop(&claimed.id, "done").await.unwrap();
    sessions.stop(&second.id, "done").await.unwrap();
    lab.clean_up().await;
}

/// `gpu.backend = auto` on a machine whose NVIDIA driver is installed but NVML fails (here:
/// a library that cannot be loaded): no simulated GPU stands in, a claim is refused with
/// the reason, and nothing is written for it.
async fn a_driver_nvml_cannot_use_places_nothing(store: Store) {
    let lab = lab::lab(store.clone(), "1 x H100-80GB", |_| {}).await;
    let mut config = (*lab.config).clone();
    config.gpu.backend = slicehub_core::config::GpuBackendChoice::Auto;
    config.gpu.nvml_library = Some("/nonexistent/libnvidia-ml.so.1".into());
    let (gpus, why) = slicehub_gpu::open_backend_on(&config.gpu, &config.data_dir, true).unwrap();
    let why = why.expect("says why NVML is not used");
    assert!(why.nvml_failed && why.reason.contains("no session is placed"), "{why:?}");
    assert!(gpus.list_gpus().is_err(), "no GPU is made up: {}", gpus.describe());
    let sessions = Sessions::new(store.clone(), gpus, lab.engine.clone(), Arc::new(config.clone()));
    let gus = lab.student("nvml-gus").await;
    let refused = sessions.claim(lab.job(gus, &["sleep", "600"])).await.unwrap_err().to_string();
    assert!(refused.contains("NVML cannot use"), "{refused}");
    assert!(store.held_slices().await.unwrap().is_empty());
    assert!(store.gpu_sessions_of_user(gus, 10).await.unwrap().is_empty(), "no session row for a refused claim");
    // Without a driver at all, `auto` is the simulated inventory, as on a laptop.
    let (gpus, why) = slicehub_gpu::open_backend_on(&config.gpu, &config.data_dir, false).unwrap();
    assert!(!why.unwrap().nvml_failed);
    assert!(!gpus.list_gpus().unwrap().is_empty());
    lab.clean_up().await;
}

/// A stop while the container is being created (the engine slow to answer): once the stop
/// is done, the container the launch was making does not run, and never starts later on
/// the slice the stop gave back.
async fn a_stop_during_creating_leaves_no_container(store: Store) {
    let docker = FaultyDocker::start();
    let lab = lab_on(Engine::new(&docker.host), store, "1 x H100-80GB", |_| {}).await;
    let hal = lab.student("fa-hal").await;
    docker.set(Fault::SlowCreate);
    let job = lab.sessions.claim(lab.job(hal, &["sleep", "600"])).await.unwrap();
    let creating = lab.until(&job.id, &[Creating], LONG).await;
    let container = creating.container.clone().expect("named before it is created");
    let asked = Instant::now();
    let stopped = lab.sessions.stop(&job.id, "changed my mind").await.unwrap();
    assert_eq!(stopped.state, Ended);
    assert!(!lab.container_exists(&container).await, "the stop leaves no container behind");
    assert!(lab.store.held_slices().await.unwrap().is_empty());
    // Long after the slow creation has reached the engine.
    tokio::time::sleep((SLOW + Duration::from_secs(3)).saturating_sub(asked.elapsed())).await;
    assert!(!lab.container_exists(&container).await, "the launch did not start it afterwards");
    docker.set(Fault::None);
    lab.clean_up().await;
}

/// A job that ends while nobody is watching (as with the portal down: here its wait on the
/// engine never answers) is charged until it ended, not until the portal noticed.
async fn a_job_that_ended_unwatched_is_charged_until_it_ended(store: Store) {
    let docker = FaultyDocker::start();
    let lab = lab_on(Engine::new(&docker.host), store, "1 x H100-80GB", |_| {}).await;
    let ida = lab.student("fa-ida").await;
    docker.set(Fault::SwallowWait);
    let job = lab.sessions.claim(lab.job(ida, &["sleep", "1"])).await.unwrap();
    lab.until(&job.id, &[Ready], LONG).await;
    tokio::time::sleep(Duration::from_secs(6)).await;
    assert_eq!(lab.sessions.session(&job.id).await.unwrap().state, Ready, "nobody noticed the end");
    let report = lab.sessions.reconcile().await.unwrap();
    assert_eq!(report.sessions_ended, 1, "{report:?}");
    let row = lab.store.usage_rows().await.unwrap().into_iter().find(|r| r.session_id == job.id).unwrap();
    let charged = row.ended_at_ms.expect("closed") - row.started_at_ms;
    assert!(charged < 4_000, "charged {charged} ms for a job of one second");
    docker.set(Fault::None);
    lab.clean_up().await;
}

/// A queue pass whose database write fails for a later claim (here: a trigger refusing
/// every queue window write) still launches the claim it placed before, instead of leaving
/// it `allocating` for the repair pass to fail as "stopped midway".
async fn a_pass_that_fails_midway_launches_what_it_placed(store: Store) {
    let lab = lab::lab(store.clone(), "1 x H100-80GB", |c| c.sessions.max_compute_slices = 7).await;
    let whole = |user| {
        let mut claim = lab.job(user, &["sleep", "600"]);
        claim.profile = "7g.80gb".to_string();
        claim
    };
    let first = lab.sessions.claim(whole(lab.student("mid-a").await)).await.unwrap();
    lab.until(&first.id, &[Ready], LONG).await;
    let mut waiting = Vec::new();
    for name in ["mid-b", "mid-c", "mid-d"] {
        let claim = lab.sessions.claim(whole(lab.student(name).await)).await.unwrap();
        assert_eq!(claim.state, Queued);
        waiting.push(claim.id);
    }
    let refuse = match store.kind() {
        slicehub_core::store::DbKind::Sqlite => vec![
            "CREATE TRIGGER refuse_insert BEFORE INSERT ON queue_windows BEGIN SELECT RAISE(ABORT, 'refused by the fault test'); END",
            "CREATE TRIGGER refuse_update BEFORE UPDATE ON queue_windows BEGIN SELECT RAISE(ABORT, 'refused by the fault test'); END",
        ],
        slicehub_core::store::DbKind::Postgres => vec![
            "CREATE FUNCTION refuse() RETURNS trigger AS $$BEGIN RAISE EXCEPTION 'refused by the fault test'; END$$ LANGUAGE plpgsql",
            "CREATE TRIGGER refuse BEFORE INSERT OR UPDATE ON queue_windows FOR EACH ROW EXECUTE FUNCTION refuse()",
        ],
    };
    for sql in refuse {
        store.execute_admin(sql).await.unwrap();
    }
    lab.sessions.stop(&first.id, "done").await.unwrap();
    let next = lab.until(&waiting[0], &[Ready, Failed], LONG).await;
    assert_eq!(next.state, Ready, "the first in line starts: {}", next.reason);
    for id in &waiting[1..] {
        let s = lab.sessions.session(id).await.unwrap();
        assert!(matches!(s.state, Queued | Requested), "the others still wait: {:?} {}", s.state, s.reason);
    }
    lab.clean_up().await;
}

/// A session placed on one GPU backend and stopped by a portal on another (the simulated
/// inventory before a driver came back, or a GPU renumbered): its release finds no GPU of
/// that UUID and destroys nothing, where it used to destroy whatever sat at the same index
/// and placement.
async fn a_release_acts_on_its_gpu_by_uuid_never_by_index(store: Store) {
    let lab = lab::lab(store.clone(), "1 x H100-80GB", |_| {}).await;
    let jo = lab.student("uuid-jo").await;
    let job = lab.sessions.claim(lab.job(jo, &["sleep", "600"])).await.unwrap();
    let job = lab.until(&job.id, &[Ready], LONG).await;
    let placement = job.placement.clone().unwrap();
    let at = Placement::new(placement.profile_id, placement.start);

    let dir = tempfile::tempdir().unwrap();
    let other = Arc::new(slicehub_gpu::SimulatedBackend::open("1 x A100-80GB", dir.path().join("gpus.json")).unwrap());
    let someone_elses = other.create_instance(0, at).expect("the same placement exists on the other GPU");
    let sessions = Sessions::new(store, other.clone(), lab.engine.clone(), lab.config.clone());
    let ended = sessions.stop(&job.id, "done").await.unwrap();
    assert_eq!(ended.state, Ended);
    let left: Vec<Placement> = other.instances(0).unwrap().into_iter().map(|i| i.placement).collect();
    assert_eq!(left, vec![someone_elses.placement], "the other GPU's instance is untouched");
    lab.clean_up().await;
}

/// Stops cut off before their container was gone (removal refused, then the portal
/// restarted) are finished after the restart with what they set out to record: a failed
/// job stays failed with its exit code, a student's stop keeps its words.
async fn a_stop_finished_after_a_restart_keeps_its_end_and_reason(store: Store) {
    let docker = FaultyDocker::start();
    let lab = lab_on(Engine::new(&docker.host), store.clone(), "1 x H100-80GB", |_| {}).await;
    let (kim, lee) = (lab.student("end-kim").await, lab.student("end-lee").await);
    let failing = lab.sessions.claim(lab.job(kim, &["sh", "-c", "sleep 2; exit 3"])).await.unwrap();
    let stopped = lab.sessions.claim(lab.job(lee, &["sleep", "600"])).await.unwrap();
    lab.until(&stopped.id, &[Ready], LONG).await;
    docker.set(Fault::RefuseRemoval);
    assert!(lab.sessions.stop(&stopped.id, "stopped by end-lee").await.is_err(), "the removal is refused");
    let until = Instant::now() + LONG;
    while lab.sessions.session(&failing.id).await.unwrap().state != Stopping {
        assert!(Instant::now() < until, "the failed job's stop never began");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    docker.set(Fault::None);

    // Another process, as after a restart, finishes both stops.
    let restarted = Sessions::new(store, lab.gpus.clone(), Arc::new(Engine::new(&docker.host)), lab.config.clone());
    restarted.recover_after_restart().await.unwrap();
    let failed = restarted.session(&failing.id).await.unwrap();
    assert_eq!((failed.state, failed.reason.as_str()), (Failed, "the job exited with code 3"));
    let ended = restarted.session(&stopped.id).await.unwrap();
    assert_eq!((ended.state, ended.reason.as_str()), (Ended, "stopped by end-lee"));
    lab.clean_up().await;
}

/// A booked lab's sessions reach their time limit together, and the engine is slow to
/// remove containers: one pass stops them side by side rather than one after another
/// (which ran past the slack the queue promised their slices free by).
async fn sessions_at_their_time_limit_are_stopped_side_by_side(store: Store) {
    let docker = FaultyDocker::start();
    let lab = lab_on(Engine::new(&docker.host), store.clone(), "1 x H100-80GB", |_| {}).await;
    let mut ids = Vec::new();
    for i in 0..4 {
        let student = lab.student(&format!("limit-{i}")).await;
        ids.push(lab.sessions.claim(lab.job(student, &["sleep", "600"])).await.unwrap().id);
    }
    for id in &ids {
        lab.until(id, &[Ready], LONG).await;
    }
    lab.clock.skip_ms(24 * 3_600_000);
    docker.set(Fault::SlowRemoval);
    let pass = {
        let sessions = lab.sessions.clone();
        tokio::spawn(async move { sessions.reconcile().await })
    };
    tokio::time::sleep(Duration::from_secs(2)).await;
    let mut stopping = 0;
    for id in &ids {
        if lab.sessions.session(id).await.unwrap().state == Stopping {
            stopping += 1;
        }
    }
    assert_eq!(stopping, 4, "all four are being stopped at once");
    let report = pass.await.unwrap().unwrap();
    assert_eq!(report.stopped_at_time_limit, 4, "{report:?}");
    for id in &ids {
        let s = lab.sessions.session(id).await.unwrap();
        assert_eq!(s.state, Ended);
        assert!(s.reason.starts_with("stopped at the course's time limit"), "{}", s.reason);
    }
    docker.set(Fault::None);
    lab.clean_up().await;
}

/// A GPU call that hangs (NVML can, when a GPU falls off the bus) is given up on after
/// `gpu.call_timeout_seconds`: that launch fails in plain words, the lock it held is free
/// again, further GPU calls are refused at once while it stays stuck (instead of each
/// parking a thread), and the next claim starts once the GPU answers.
async fn a_hung_gpu_call_is_given_up_and_the_portal_goes_on(store: Store) {
    let lab = lab::lab(store.clone(), "1 x H100-80GB", |c| c.gpu.call_timeout_seconds = 2).await;
    let gpus = FaultyGpus::over(lab.gpus.clone());
    gpus.hang_creates(true);
    let sessions = Sessions::new(store, gpus.clone(), lab.engine.clone(), lab.config.clone());
    let (ann, ben) = (lab.student("hang-ann").await, lab.student("hang-ben").await);
    let first = sessions.claim(lab.job(ann, &["sleep", "600"])).await.unwrap();
    let failed = lab.until(&first.id, &[Failed, Ready], Duration::from_secs(20)).await;
    assert_eq!(failed.state, Failed);
    assert!(failed.reason.contains("GPU slice could not be prepared"), "{}", failed.reason);
    let refused = sessions.known_profiles().await.unwrap_err().to_string();
    assert!(refused.contains("has not answered an earlier call"), "{refused}");
    gpus.hang_creates(false);
    let until = Instant::now() + Duration::from_secs(10);
    while sessions.known_profiles().await.is_err() {
        assert!(Instant::now() < until, "the GPU calls never came back");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let second = sessions.claim(lab.job(ben, &["sleep", "600"])).await.unwrap();
    let ready = lab.until(&second.id, &[Ready, Failed], LONG).await;
    assert_eq!(ready.state, Ready, "{}", ready.reason);
    sessions.stop(&second.id, "done").await.unwrap();
    lab.clean_up().await;
}

/// A deploy restarts the portal while launches are under way: a launch whose container
/// already runs goes on (a job is followed to its end, a launch cut just after its container
/// started reaches ready), and only one cut off before its container ran fails. The old
/// process never hears its jobs end (its waits are swallowed), so the end it records is the
/// restarted one's doing.
async fn a_launch_cut_off_by_a_restart_goes_on_where_its_container_runs(store: Store) {
    let old_engine = FaultyDocker::start();
    let lab = lab_on(Engine::new(&old_engine.host), store.clone(), "1 x H100-80GB", |_| {}).await;
    old_engine.set(Fault::SwallowWait);
    let (ada, bo, cy) = (lab.student("deploy-ada").await, lab.student("deploy-bo").await, lab.student("deploy-cy").await);
    let long = lab.sessions.claim(lab.job(bo, &["sleep", "600"])).await.unwrap();
    let gone = lab.sessions.claim(lab.job(cy, &["sleep", "600"])).await.unwrap();
    let short = lab.sessions.claim(lab.job(ada, &["sh", "-c", "sleep 12; exit 0"])).await.unwrap();
    for id in [&long.id, &gone.id, &short.id] {
        lab.until(id, &[Ready], LONG).await;
    }
    // Where each launch was when the old process went away.
    let set = |id: &str, state: &str| format!("UPDATE gpu_sessions SET state = '{state}' WHERE id = '{id}'");
    store.execute_admin(&set(&short.id, "starting")).await.unwrap();
    store.execute_admin(&set(&long.id, "creating")).await.unwrap();
    // Cut off before its container was made: the name it was to have, no container.
    store
        .execute_admin(&format!("UPDATE gpu_sessions SET state = 'creating', container = 'slicehub-never-made' WHERE id = '{}'", gone.id))
        .await
        .unwrap();

    let new_engine = FaultyDocker::start();
    let restarted = Sessions::new(store, lab.gpus.clone(), Arc::new(Engine::new(&new_engine.host)), lab.config.clone());
    restarted.recover_after_restart().await.unwrap();
    let taken_up = restarted.session(&long.id).await.unwrap();
    assert_eq!(taken_up.state, Ready, "a running container is not failed: {}", taken_up.reason);
    let failed = restarted.session(&gone.id).await.unwrap();
    assert_eq!(
        (failed.state, failed.reason.as_str()),
        (Failed, "the portal restarted while this session was starting; start it again")
    );
    assert_eq!(restarted.session(&short.id).await.unwrap().state, Ready, "taken up while it runs");
    let followed = lab.until(&short.id, &[Ended, Failed], LONG).await;
    assert_eq!((followed.state, followed.reason.as_str()), (Ended, "the job finished (exit code 0)"));
    restarted.stop(&long.id, "done").await.unwrap();
    assert!(!lab.container_exists(&taken_up.container.unwrap()).await, "the stop removed it");
    old_engine.set(Fault::None);
    lab.clean_up().await;
}

on_both_databases!(
    a_launch_cut_off_by_a_restart_goes_on_where_its_container_runs,
    a_hung_gpu_call_is_given_up_and_the_portal_goes_on,
    sessions_at_their_time_limit_are_stopped_side_by_side,
    a_stop_finished_after_a_restart_keeps_its_end_and_reason,
    a_release_acts_on_its_gpu_by_uuid_never_by_index,
    a_pass_that_fails_midway_launches_what_it_placed,
    a_job_that_ended_unwatched_is_charged_until_it_ended,
    a_stop_during_creating_leaves_no_container,
    a_driver_nvml_cannot_use_places_nothing,
    a_lost_gpu_leaves_the_others_serving,
    a_second_stop_leaves_a_slow_first_stop_alone,
    a_slice_stays_held_until_its_container_is_gone,
    a_launch_nobody_finishes_is_failed_and_cleaned_up,
    a_stop_while_the_instance_is_created_leaves_no_instance,
    leftover_instances_of_the_portal_go_and_an_admins_stay,
);
