//! The queue on the in-process engine: who is placed when a slice comes free, in which
//! order, what start a waiting student is promised, and what the launch form offers.
//! Milliseconds a test, no Docker.

use std::time::Duration;

use slicehub_core::sessions::{ClaimRequest, SessionState};
use slicehub_core::store::Store;

use crate::lab::{lab_on_fake, Lab};
use slicehub_core::UserId;

const SOON: Duration = Duration::from_secs(10);

/// A job that takes the whole simulated H100.
fn whole(lab: &Lab, user: UserId) -> ClaimRequest {
    let mut claim = lab.job(user, &["sleep", "600"]);
    claim.profile = "7g.80gb".into();
    claim
}

/// A student's stop gives the slice back, and the claim waiting for that size is placed
/// by the stop itself: no reconcile pass runs in this test.
async fn a_stop_places_the_waiting_claim_without_a_pass(store: Store) {
    let (lab, _fake) = lab_on_fake(store, "1 x H100-80GB", |c| c.sessions.max_compute_slices = 7).await;
    let (amy, bo) = (lab.student("q-amy").await, lab.student("q-bo").await);
    let first = lab.sessions.claim(whole(&lab, amy)).await.unwrap();
    lab.until(&first.id, &[SessionState::Ready], SOON).await;
    let waiting = lab.sessions.claim(whole(&lab, bo)).await.unwrap();
    assert_eq!(waiting.state, SessionState::Queued, "the GPU is taken: {waiting:?}");

    lab.sessions.stop(&first.id, "done for today").await.unwrap();
    let placed = lab.until(&waiting.id, &[SessionState::Ready], SOON).await;
    assert!(placed.placement.is_some(), "{placed:?}");
    lab.clean_up().await;
}

/// Claims of one size start in the order they came: when the slice frees, the older one
/// is placed and the newer one stays first in line.
async fn claims_of_one_size_start_in_the_order_they_came(store: Store) {
    let (lab, _fake) = lab_on_fake(store, "1 x H100-80GB", |c| c.sessions.max_compute_slices = 7).await;
    let (cy, di, ed) = (lab.student("q-cy").await, lab.student("q-di").await, lab.student("q-ed").await);
    let running = lab.sessions.claim(whole(&lab, cy)).await.unwrap();
    lab.until(&running.id, &[SessionState::Ready], SOON).await;
    let older = lab.sessions.claim(whole(&lab, di)).await.unwrap();
    // The line is ordered by the store's own time of the claim.
    tokio::time::sleep(Duration::from_millis(20)).await;
    let newer = lab.sessions.claim(whole(&lab, ed)).await.unwrap();
    assert_eq!((older.state, newer.state), (SessionState::Queued, SessionState::Queued));

    lab.sessions.stop(&running.id, "done").await.unwrap();
    lab.until(&older.id, &[SessionState::Ready], SOON).await;
    let newer = lab.sessions.session(&newer.id).await.unwrap();
    assert_eq!(newer.state, SessionState::Queued, "the newer claim must not pass the older one");
    lab.clean_up().await;
}

/// The start promised to a waiting student ("at the latest") is the running session's
/// time limit plus the reconciler's slack (a pass and a minute), not a vaguer bound.
async fn a_waiting_claim_is_promised_a_start_by_the_running_sessions_limit(store: Store) {
    let (lab, _fake) = lab_on_fake(store, "1 x H100-80GB", |c| c.sessions.max_compute_slices = 7).await;
    let (fay, gus) = (lab.student("q-fay").await, lab.student("q-gus").await);
    let running = lab.sessions.claim(whole(&lab, fay)).await.unwrap();
    let running = lab.until(&running.id, &[SessionState::Ready], SOON).await;
    let waiting = lab.sessions.claim(whole(&lab, gus)).await.unwrap();

    let estimates = lab.sessions.queue_estimates().await.unwrap();
    let promise = estimates.get(&waiting.id).unwrap_or_else(|| panic!("no promise for the waiting claim: {estimates:?}"));
    assert!(promise.latest_ms >= running.deadline_at_ms, "not before the running session may end: {promise:?}");
    assert!(
        promise.latest_ms <= running.deadline_at_ms + 2 * 60_000,
        "the limit and the slack of a running session, not of one still starting ({} ms after): {promise:?}",
        promise.latest_ms - running.deadline_at_ms
    );
    lab.clean_up().await;
}

/// The launch form reads the queue once for every student polling it, yet a claim shows
/// on the next read: after amy takes the GPU, bo's form offers no slice and a wait at
/// once; after she stops, it offers the slice again within the form's two seconds.
async fn the_shared_launch_read_follows_claims_and_stops(store: Store) {
    let (lab, _fake) = lab_on_fake(store, "1 x H100-80GB", |c| c.sessions.max_compute_slices = 7).await;
    let (amy, bo) = (lab.student("lf-amy").await, lab.student("lf-bo").await);
    let whole_gpu = ["7g.80gb".to_string()];
    let course = [(Some(lab.course_id), 60)];
    let offer = |lab: &Lab| {
        let sessions = lab.sessions.clone();
        let (whole_gpu, course) = (whole_gpu.clone(), course);
        async move { sessions.launch_availability(&whole_gpu, &course).await.unwrap().remove(0).remove(0) }
    };
    assert_eq!(offer(&lab).await.free, 1);
    assert_eq!(offer(&lab).await.free, 1, "a second read is the same");

    let amys = lab.sessions.claim(whole(&lab, amy)).await.unwrap();
    let taken = offer(&lab).await;
    assert_eq!(taken.free, 0, "the form right after the claim still offers the slice amy took");
    assert!(taken.wait.is_some(), "no wait offered: {taken:?}");
    lab.until(&amys.id, &[SessionState::Ready], SOON).await;

    lab.sessions.stop(&amys.id, "stopped by its owner").await.unwrap();
    lab.until(&amys.id, &[SessionState::Ended], SOON).await;
    let until = std::time::Instant::now() + Duration::from_secs(3);
    while offer(&lab).await.free != 1 {
        assert!(std::time::Instant::now() < until, "the slice amy gave back is not offered again");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let bos = lab.sessions.claim(whole(&lab, bo)).await.unwrap();
    lab.until(&bos.id, &[SessionState::Ready], SOON).await;
    lab.clean_up().await;
}

on_both_databases!(
    the_shared_launch_read_follows_claims_and_stops,
    a_stop_places_the_waiting_claim_without_a_pass,
    claims_of_one_size_start_in_the_order_they_came,
    a_waiting_claim_is_promised_a_start_by_the_running_sessions_limit,
);
