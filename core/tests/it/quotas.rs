//! Slice-hour quotas on the real Docker engine, on SQLite and PostgreSQL, with budgets read
//! at chosen instants: charged while running, the same after a portal restart, cut at the
//! period boundary, raised by grants, refused at launch, and stopped when used up.


use std::time::Duration;

use chrono::{Datelike, Timelike};
use crate::lab::lab;
use slicehub_core::quotas::budget_at;
use slicehub_core::sessions::{SessionState, Sessions};
use slicehub_core::courses::policy_of;
use slicehub_core::store::Store;

const LAUNCH: Duration = Duration::from_secs(30);
const MINUTE: i64 = 60_000;

async fn a_budget_is_charged_from_the_ledger_and_stops_the_session_when_used_up(store: Store) {
    let lab = lab(store, "1 x H100-80GB", |_| {}).await;
    let quinn = lab.student("quinn").await;
    // Two slice-hours a week, resetting a week from now (so the whole test is one period).
    let next_week = chrono::Utc::now() + chrono::Duration::days(7) - chrono::Duration::hours(12);
    let (day, minute) = (next_week.weekday().num_days_from_monday(), next_week.hour() * 60);
    lab.set_quota("2", day, minute).await;

    let mut claim = lab.job(quinn, &["sleep", "600"]);
    claim.profile = "2g.20gb".into();
    let session = lab.sessions.claim(claim).await.unwrap();
    lab.until(&session.id, &[SessionState::Ready], LAUNCH).await;
    let started = lab.store.usage_rows().await.unwrap()[0].started_at_ms;
    let policy = policy_of(&lab.store, &lab.config, lab.course_id).await.unwrap();
    let budget = |now| {
        let (store, policy) = (lab.store.clone(), policy.clone());
        async move { budget_at(&store, &policy, lab.course_id, quinn, now).await.unwrap().unwrap() }
    };

    // Half an hour on a 2g is one slice-hour.
    let half_hour = budget(started + 30 * MINUTE).await;
    assert_eq!(half_hour.used_ms, 60 * MINUTE);
    assert!(half_hour.summary().starts_with("used 1 of 2 slice-hours this week; resets "), "{}", half_hour.summary());
    assert_eq!(half_hour.runs_out_at_ms(), Some(started + 60 * MINUTE), "2g uses the rest in 30 min");

    // A restarted portal charges the same: the ledger is the record.
    let restarted = Sessions::new(lab.store.clone(), lab.gpus.clone(), lab.engine.clone(), lab.config.clone());
    restarted.recover_after_restart().await.unwrap();
    assert_eq!(budget(started + 30 * MINUTE).await, half_hour);

    // An instructor's extra hour in this period moves the end by half an hour.
    let granted = slicehub_core::quotas::grant_extra(&lab.store, lab.course_id, quinn, "quinn", "1", "lab 3 ran long", "instructor", started + MINUTE)
        .await
        .unwrap();
    assert_eq!(granted, 60);
    let with_grant = budget(started + 30 * MINUTE).await;
    assert_eq!(with_grant.total_ms, 180 * MINUTE);
    assert_eq!(with_grant.runs_out_at_ms(), Some(started + 90 * MINUTE));
    let audit = lab.store.recent_audit(Some("quota.grant"), 5).await.unwrap();
    assert_eq!(audit.len(), 1);
    assert!(audit[0].detail.contains("1 slice-hours: lab 3 ran long"), "{:?}", audit[0]);

    // Before the budget is used up nothing is stopped; after, the session stops with why.
    assert_eq!(restarted.enforce_quotas_at(started + 89 * MINUTE).await.unwrap(), 0);
    assert_eq!(lab.sessions.session(&session.id).await.unwrap().state, SessionState::Ready);
    assert_eq!(restarted.enforce_quotas_at(started + 91 * MINUTE).await.unwrap(), 1);
    let stopped = lab.until(&session.id, &[SessionState::Ended], LAUNCH).await;
    assert!(stopped.reason.starts_with("quota used up (used 3 of 3 slice-hours this week"), "{}", stopped.reason);
    assert!(stopped.released, "the slice is given back");
    lab.clean_up().await;
}

async fn the_period_boundary_cuts_the_charge(store: Store) {
    let lab = lab(store, "1 x H100-80GB", |_| {}).await;
    let rosa = lab.student("rosa").await;
    // The week resets 15 minutes after now (rounded up to the minute).
    let reset = chrono::Utc::now() + chrono::Duration::minutes(16);
    let (day, minute) = (reset.weekday().num_days_from_monday(), reset.hour() * 60 + reset.minute());
    lab.set_quota("5", day, minute).await;
    let session = lab.sessions.claim(lab.job(rosa, &["sleep", "600"])).await.unwrap();
    lab.until(&session.id, &[SessionState::Ready], LAUNCH).await;
    let started = lab.store.usage_rows().await.unwrap()[0].started_at_ms;
    let policy = policy_of(&lab.store, &lab.config, lab.course_id).await.unwrap();

    let before = budget_at(&lab.store, &policy, lab.course_id, rosa, started + 10 * MINUTE).await.unwrap().unwrap();
    assert_eq!(before.used_ms, 10 * MINUTE);
    let after = budget_at(&lab.store, &policy, lab.course_id, rosa, started + 40 * MINUTE).await.unwrap().unwrap();
    assert_eq!(after.bounds.start_ms, before.bounds.end_ms, "the next week began");
    assert_eq!(after.used_ms, started + 40 * MINUTE - after.bounds.start_ms, "only this week's part is charged");
    assert!(after.used_ms < 30 * MINUTE && after.used_ms > 20 * MINUTE, "{}", after.used_ms);
    lab.clean_up().await;
}

async fn a_launch_is_refused_when_the_budget_cannot_run_the_slice(store: Store) {
    let lab = lab(store, "1 x H100-80GB", |c| c.quotas.min_launch_minutes = 15).await;
    let sam = lab.student("sam").await;
    // 0.1 slice-hours is 6 slice-minutes: not enough for 15 minutes on a 1g.
    lab.set_quota("0.1", 0, 0).await;
    let refused = lab.sessions.claim(lab.job(sam, &["true"])).await.unwrap_err().to_string();
    assert!(
        refused.contains("used 0 of 0.1 slice-hours this week; resets Monday 00:00 (UTC)"),
        "{refused}"
    );
    assert!(lab.store.gpu_sessions_in(SessionState::ACTIVE).await.unwrap().is_empty(), "nothing queued");

    // Extra time makes the same launch possible.
    slicehub_core::quotas::grant_extra(&lab.store, lab.course_id, sam, "sam", "0.5", "makeup lab", "instructor", chrono::Utc::now().timestamp_millis())
        .await
        .unwrap();
    let session = lab.sessions.claim(lab.job(sam, &["true"])).await.unwrap();
    lab.until(&session.id, &[SessionState::Ended], LAUNCH).await;
    lab.clean_up().await;
}

async fn the_profile_cap_and_session_count_come_from_the_course(store: Store) {
    let lab = lab(store, "1 x H100-80GB", |_| {}).await;
    let tara = lab.student("tara").await;
    let mut whole = lab.job(tara, &["true"]);
    whole.profile = "7g.80gb".into();
    let refused = lab.sessions.claim(whole.clone()).await.unwrap_err().to_string();
    assert!(refused.contains("at most 4 compute slices"), "the default cap: {refused}");
    let first = lab.sessions.claim(lab.job(tara, &["sleep", "600"])).await.unwrap();
    let refused = lab.sessions.claim(lab.job(tara, &["sleep", "600"])).await.unwrap_err().to_string();
    assert!(refused.contains("(the limit is 1)"), "the default count: {refused}");

    // The course allows a whole GPU and two sessions at once.
    lab.set_quota("", 0, 0).await;
    let second = lab.sessions.claim(lab.job(tara, &["sleep", "600"])).await.unwrap();
    assert_eq!(second.state, SessionState::Allocating, "{}", second.reason);
    let refused = lab.sessions.claim(whole.clone()).await.unwrap_err().to_string();
    assert!(refused.contains("(the limit is 2)"), "{refused}");
    // Both run before they are stopped: a stop in the middle of a launch can leave its
    // MIG instance behind (see the closing note), which would keep the whole GPU busy.
    for id in [&first.id, &second.id] {
        lab.until(id, &[SessionState::Ready], LAUNCH).await;
    }
    lab.clean_up().await;
    let session = lab.sessions.claim(whole).await.unwrap();
    lab.until(&session.id, &[SessionState::Ended], LAUNCH).await;
    lab.clean_up().await;
}

/// A claim that waits in the queue while its student's budget runs out (here: the
/// instructor lowers the quota) does not start when its turn comes; the student reads why.
async fn a_claim_whose_budget_ran_out_while_it_waited_does_not_start(store: Store) {
    let lab = lab(store, "1 x H100-80GB", |c| {
        c.quotas.min_launch_minutes = 15;
        c.sessions.max_compute_slices = 7;
    })
    .await;
    let (ola, pia) = (lab.student("ola").await, lab.student("pia").await);
    lab.set_quota("10", 0, 0).await;
    let mut whole = lab.job(ola, &["sleep", "600"]);
    whole.profile = "7g.80gb".into();
    let whole = lab.sessions.claim(whole).await.unwrap();
    lab.until(&whole.id, &[SessionState::Ready], LAUNCH).await;
    let waiting = lab.sessions.claim(lab.job(pia, &["sleep", "600"])).await.unwrap();
    assert_eq!(waiting.state, SessionState::Queued);

    lab.set_quota("0.1", 0, 0).await;
    lab.sessions.stop(&whole.id, "done").await.unwrap();
    use SessionState::*;
    let turn = lab.until(&waiting.id, &[Failed, Ended, Creating, Starting, Ready], LAUNCH).await;
    assert_eq!(turn.state, Failed, "{}", turn.reason);
    assert!(turn.reason.contains("slice-hours left stopped covering 15 minutes"), "{}", turn.reason);
    assert!(turn.container.is_none() && turn.placement.is_none(), "nothing was started for it");
    lab.clean_up().await;
}

on_both_databases!(
    a_claim_whose_budget_ran_out_while_it_waited_does_not_start,
    a_budget_is_charged_from_the_ledger_and_stops_the_session_when_used_up,
    the_period_boundary_cuts_the_charge,
    a_launch_is_refused_when_the_budget_cannot_run_the_slice,
    the_profile_cap_and_session_count_come_from_the_course,
);
