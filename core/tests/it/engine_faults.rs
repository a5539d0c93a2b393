//! The container engine restarting and freezing under running sessions, on a Docker
//! engine of the test's own (`lab::private_docker`): sessions survive a restart that
//! keeps their containers and end cleanly in one that does not, no slice is ever held
//! twice, and a stop while the engine is frozen keeps its slice until the container is
//! confirmed gone. Needs root, `dockerd` and `slicehub/busybox:offline`.



use std::collections::HashSet;
use std::time::{Duration, Instant};

use crate::lab::private_docker::PrivateDocker;
use crate::lab::{lab_on, Lab};
use slicehub_docker::Engine;
use slicehub_core::sessions::SessionState;
use slicehub_core::store::Store;
use SessionState::*;

const LONG: Duration = Duration::from_secs(60);

/// Restarts the engine off the async runtime, so the portal's tasks go on meanwhile.
async fn restart(docker: PrivateDocker, live_restore: bool) -> PrivateDocker {
    tokio::task::spawn_blocking(move || {
        let mut docker = docker;
        docker.restart(live_restore);
        docker
    })
    .await
    .unwrap()
}

/// Every slice held, as (GPU, placement), asserting that no two sessions hold one.
async fn holds(lab: &Lab) -> HashSet<(String, u32, u8)> {
    let held = lab.store.held_slices().await.unwrap();
    let distinct: HashSet<_> = held.iter().map(|h| (h.gpu_uuid.clone(), h.profile_id, h.start)).collect();
    assert_eq!(distinct.len(), held.len(), "a placement is held twice: {held:?}");
    distinct
}

async fn an_engine_restart_keeps_or_cleanly_ends_sessions(store: Store) {
    let docker = PrivateDocker::start();
    let lab = lab_on(Engine::new(&docker.host), store, "1 x H100-80GB", |c| {
        c.sessions.host_firewall = false;
    })
    .await;
    let _tasks = lab.sessions.start_background().await;
    let mut ids = Vec::new();
    for i in 0..5 {
        let student = lab.student(&format!("er-{i}")).await;
        ids.push(lab.sessions.claim(lab.job(student, &["sleep", "600"])).await.unwrap().id);
    }
    let mut containers = Vec::new();
    for id in &ids {
        containers.push(lab.until(id, &[Ready], LONG).await.container.unwrap());
    }
    let held_before = holds(&lab).await;
    assert_eq!(held_before.len(), 5);

    // A restart that keeps containers (live restore): the sessions are adopted as they
    // were, although every wait and event stream the portal had open broke.
    let docker = restart(docker, true).await;
    tokio::time::sleep(Duration::from_secs(4)).await;
    let running = docker.running();
    for (id, container) in ids.iter().zip(&containers) {
        let session = lab.sessions.session(id).await.unwrap();
        assert_eq!(session.state, Ready, "{id}: {}", session.reason);
        assert!(running.contains(container), "{container} still runs: {running:?}");
    }
    assert_eq!(holds(&lab).await, held_before);
    let sixth = lab.student("er-sixth").await;
    let sixth = lab.sessions.claim(lab.job(sixth, &["sleep", "600"])).await.unwrap();
    let sixth = lab.until(&sixth.id, &[Ready], LONG).await;
    let at = sixth.placement.unwrap();
    assert!(
        !held_before.contains(&(at.gpu_uuid.clone(), at.profile_id, at.start)),
        "the new session got a slice someone holds: {}",
        at.label
    );
    ids.push(sixth.id);

    // A restart that does not keep them: every session ends with a reason, and nothing of
    // them is left behind: no container, no slice, no MIG instance, no open usage.
    let docker = restart(docker, false).await;
    for id in &ids {
        let ended = lab.until(id, &[Failed, Ended], LONG).await;
        assert!(ended.reason.contains("stopped") || ended.reason.contains("exited"), "{id}: {}", ended.reason);
    }
    let until = Instant::now() + LONG;
    while !(holds(&lab).await.is_empty() && lab.instance_count() == 0) {
        assert!(Instant::now() < until, "slices or MIG instances left: {:?}", lab.store.held_slices().await);
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert!(docker.running().is_empty(), "{:?}", docker.running());
    assert!(lab.store.open_usage_of_final_sessions().await.unwrap().is_empty());

    // And the engine takes new sessions again.
    let again = lab.student("er-again").await;
    let again = lab.sessions.claim(lab.job(again, &["sleep", "600"])).await.unwrap();
    lab.until(&again.id, &[Ready], LONG).await;
    lab.clean_up().await;
    drop(docker);
}

async fn a_stop_during_a_frozen_engine_keeps_the_slice_until_the_container_is_gone(store: Store) {
    let docker = PrivateDocker::start();
    let lab = lab_on(Engine::new(&docker.host), store, "1 x H100-80GB", |c| {
        c.sessions.host_firewall = false;
        c.sessions.max_compute_slices = 7;
        c.sessions.reconcile_seconds = 5;
    })
    .await;
    let _tasks = lab.sessions.start_background().await;
    let (alice, bob) = (lab.student("fz-alice").await, lab.student("fz-bob").await);
    let whole_gpu = |user| {
        let mut claim = lab.job(user, &["sleep", "600"]);
        claim.profile = "7g.80gb".to_string();
        claim
    };
    let first = lab.sessions.claim(whole_gpu(alice)).await.unwrap();
    let first = lab.until(&first.id, &[Ready], LONG).await;
    let container = first.container.clone().unwrap();

    docker.freeze();
    let stopping = {
        let sessions = lab.sessions.clone();
        let id = first.id.clone();
        tokio::spawn(async move { sessions.stop(&id, "stopped by fz-alice").await })
    };
    tokio::time::sleep(Duration::from_secs(2)).await;
    let second = lab.sessions.claim(whole_gpu(bob)).await.unwrap();
    // Longer than a repair pass waits before it takes over a stop that looks stuck.
    tokio::time::sleep(Duration::from_secs(7)).await;
    assert_eq!(lab.sessions.session(&first.id).await.unwrap().state, Stopping);
    assert_eq!(holds(&lab).await.len(), 1, "the frozen session keeps its slice");
    assert_eq!(lab.sessions.session(&second.id).await.unwrap().state, Queued);
    assert_eq!(lab.instance_count(), 1);

    docker.thaw();
    let thawed = Instant::now();
    let interval = Duration::from_secs(u64::from(lab.config.sessions.reconcile_seconds));
    let ended = lab.until(&first.id, &[Ended], interval).await;
    assert_eq!(ended.reason, "stopped by fz-alice");
    assert!(!docker.running().contains(&container));
    let second = lab.until(&second.id, &[Ready], interval + LONG).await;
    eprintln!("after the thaw: stop finished, next session ready in {:?}", thawed.elapsed());
    assert!(stopping.await.unwrap().is_ok());
    assert_eq!(second.placement.unwrap().label, first.placement.unwrap().label);
    lab.clean_up().await;
    drop(docker);
}

on_both_databases!(
    an_engine_restart_keeps_or_cleanly_ends_sessions,
    a_stop_during_a_frozen_engine_keeps_the_slice_until_the_container_is_gone,
);
