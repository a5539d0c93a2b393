//! The reconciler's rules on the in-process engine and a clock the test moves: each pass is
//! a few milliseconds, so the rules and their order are checked without Docker.

use std::time::Duration;

use slicehub_core::gpu::GpuBackend;
use slicehub_core::sessions::{SessionKind, SessionPool, SessionState, SlicePlacement};
use slicehub_core::store::{NewGpuSession, Store};

use crate::lab::lab_on_fake;

const SOON: Duration = Duration::from_secs(10);
const DAY_MS: i64 = 24 * 3_600_000;

/// One GPU taken whole by a job; a second claim waits. A day later the first is over its
/// time limit: one pass stops it, gives its slice back and the waiting one is placed
/// without another pass.
async fn a_stop_at_the_time_limit_places_the_waiting_claim_in_the_same_pass(store: Store) {
    let (lab, fake) = lab_on_fake(store, "1 x H100-80GB", |c| c.sessions.max_compute_slices = 7).await;
    let whole = |user| {
        let mut claim = lab.job(user, &["sleep", "600"]);
        claim.profile = "7g.80gb".into();
        claim
    };
    let (ann, ben) = (lab.student("tl-ann").await, lab.student("tl-ben").await);
    let first = lab.sessions.claim(whole(ann)).await.unwrap();
    let first = lab.until(&first.id, &[SessionState::Ready], SOON).await;
    let second = lab.sessions.claim(whole(ben)).await.unwrap();
    assert_eq!(lab.until(&second.id, &[SessionState::Queued], SOON).await.state, SessionState::Queued);

    let report = lab.sessions.reconcile().await.unwrap();
    assert_eq!((report.stopped_at_time_limit, report.queued_placed), (0, 0), "{report:?}");

    lab.clock.skip_ms(DAY_MS);
    let report = lab.sessions.reconcile().await.unwrap();
    assert_eq!(report.stopped_at_time_limit, 1, "{report:?}");
    let over = lab.sessions.session(&first.id).await.unwrap();
    assert_eq!(over.state, SessionState::Ended);
    assert!(over.reason.starts_with("stopped at the course's time limit"), "{}", over.reason);
    assert!(!fake.container_names().contains(first.container.as_ref().unwrap()));
    // No further pass runs here: the stop itself (or the pass's queue rule) placed it.
    let placed = lab.until(&second.id, &[SessionState::Ready], SOON).await;
    assert!(placed.deadline_at_ms > lab.sessions.now_ms() + 60_000, "its own limit counts from its own ready");
    lab.clean_up().await;
}

/// Containers labelled with this portal but owned by no live session go; another portal's
/// containers on the same engine stay.
async fn orphans_of_this_portal_go_and_another_portals_stay(store: Store) {
    let (lab, fake) = lab_on_fake(store, "1 x H100-80GB", |_| {}).await;
    fake.add_stray(&lab.instance, "slicehub-stray", Some("no-such-session"));
    fake.add_stray(&lab.instance, "slicehub-unlabelled", None);
    fake.add_stray("another-portal", "slicehub-theirs", Some("theirs"));
    let report = lab.sessions.reconcile().await.unwrap();
    assert_eq!(report.orphan_containers_removed, 2, "{report:?}");
    assert_eq!(fake.container_names(), vec!["slicehub-theirs".to_string()]);
}

/// A job whose container vanished with no event (the event stream was down) ends on the
/// next pass, and its slice comes back.
async fn a_container_gone_without_an_event_ends_its_session(store: Store) {
    let (lab, fake) = lab_on_fake(store, "1 x H100-80GB", |_| {}).await;
    let cid = lab.student("gone-cid").await;
    let session = lab.sessions.claim(lab.job(cid, &["sleep", "600"])).await.unwrap();
    let ready = lab.until(&session.id, &[SessionState::Ready], SOON).await;
    fake.vanish(ready.container.as_deref().unwrap());
    let report = lab.sessions.reconcile().await.unwrap();
    assert_eq!(report.sessions_ended, 1, "{report:?}");
    let gone = lab.sessions.session(&session.id).await.unwrap();
    assert!(gone.state.is_final(), "{:?}", gone.state);
    assert_eq!(lab.instance_count(), 0, "its MIG instance went with the slice");
}

/// A launch left in `allocating` by a process that died is failed by the repair rule once
/// it has sat there a while, and its slice is released; before that it is left alone.
async fn a_launch_stuck_between_states_is_failed_by_the_repair_rule(store: Store) {
    let (lab, _fake) = lab_on_fake(store.clone(), "1 x H100-80GB", |_| {}).await;
    let dee = lab.student("stuck-dee").await;
    let id = "stuck-session";
    store
        .insert_gpu_session(
            &NewGpuSession {
                id,
                user_id: dee,
                course_id: lab.course_id,
                kind: SessionKind::Job,
                pool: SessionPool::Local,
                profile: "1g.10gb",
                image: crate::lab::BUSYBOX,
                argv: &["true".to_string()],
                token: "t",
                deadline_at_ms: i64::MAX / 2,
            },
            1,
        )
        .await
        .unwrap();
    let gpu_uuid = lab.gpus.uuid_at(0).unwrap().unwrap();
    let placement = SlicePlacement {
        gpu_uuid,
        gpu_index: 0,
        profile_id: 19,
        start: 6,
        label: "1g.10gb@6".into(),
    };
    store.hold_slice(id, &placement, &[6], false, "placed by a process that then died").await.unwrap();

    let report = lab.sessions.reconcile().await.unwrap();
    assert_eq!(report.repaired, 0, "a launch under way is not taken over: {report:?}");
    lab.clock.skip_ms(60_000);
    let report = lab.sessions.reconcile().await.unwrap();
    assert_eq!(report.repaired, 1, "{report:?}");
    let failed = lab.sessions.session(id).await.unwrap();
    assert_eq!(failed.state, SessionState::Failed);
    assert!(failed.reason.contains("stopped midway"), "{}", failed.reason);
    assert!(store.held_slices().await.unwrap().is_empty(), "the slice is free again");
}

/// A student whose slice-hours run out while their job runs is stopped by the quota rule.
async fn a_running_job_stops_when_the_quota_is_used_up(store: Store) {
    let (lab, _fake) = lab_on_fake(store, "1 x H100-80GB", |_| {}).await;
    lab.set_quota("1", 0, 0).await;
    let eve = lab.student("quota-eve").await;
    let session = lab.sessions.claim(lab.job(eve, &["sleep", "600"])).await.unwrap();
    lab.until(&session.id, &[SessionState::Ready], SOON).await;
    let report = lab.sessions.reconcile().await.unwrap();
    assert_eq!(report.stopped_at_quota, 0, "{report:?}");
    // A one-slice job uses an hour of budget in an hour; eight hours on, it is over.
    lab.clock.skip_ms(8 * 3_600_000);
    let report = lab.sessions.reconcile().await.unwrap();
    assert_eq!((report.stopped_at_quota, report.stopped_at_time_limit), (1, 0), "{report:?}");
    let over = lab.sessions.session(&session.id).await.unwrap();
    assert!(over.reason.starts_with("quota used up"), "{}", over.reason);
}

on_both_databases!(
    a_stop_at_the_time_limit_places_the_waiting_claim_in_the_same_pass,
    orphans_of_this_portal_go_and_another_portals_stay,
    a_container_gone_without_an_event_ends_its_session,
    a_launch_stuck_between_states_is_failed_by_the_repair_rule,
    a_running_job_stops_when_the_quota_is_used_up,
);
