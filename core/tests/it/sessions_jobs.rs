//! Training jobs on the real Docker engine, on SQLite and PostgreSQL: the whole lifecycle,
//! exit codes, logs, stop, a container killed from outside, and refused claims.


use std::time::{Duration, Instant};

use crate::lab::{lab, BUSYBOX};
use slicehub_core::sessions::{ClaimRequest, SessionState, Workload};
use slicehub_core::store::Store;
use slicehub_core::CoreError;

const LAUNCH: Duration = Duration::from_secs(30);

async fn a_job_runs_with_its_argv_and_frees_its_slice(store: Store) {
    let lab = lab(store, "1 x H100-80GB", |_| {}).await;
    let alice = lab.student("alice").await;
    // Shell metacharacters arrive as plain arguments: nothing here runs a shell.
    let claim = lab.job(alice, &["echo", "a;b", "$(id)", "|", "&&", "`x`"]);
    let session = lab.sessions.claim(claim).await.unwrap();
    assert_eq!(session.state, SessionState::Allocating, "{}", session.reason);
    let done = lab.until(&session.id, &[SessionState::Ended, SessionState::Failed], LAUNCH).await;
    assert_eq!(done.state, SessionState::Ended, "{}", done.reason);
    assert_eq!(done.exit_code, Some(0));
    assert!(done.reason.contains("exit code 0"), "{}", done.reason);
    assert!(done.log_tail.contains("a;b $(id) | && `x`"), "log: {:?}", done.log_tail);

    let steps: Vec<SessionState> = lab
        .store
        .session_events(&session.id)
        .await
        .unwrap()
        .into_iter()
        .map(|e| e.state)
        .collect();
    use SessionState::*;
    assert_eq!(steps, [Requested, Allocating, Creating, Starting, Ready, Stopping, Ended]);

    assert!(done.released);
    assert_eq!(lab.store.count_slice_holds().await.unwrap(), 0);
    assert_eq!(lab.instance_count(), 0, "the dynamic MIG instance is destroyed");
    assert!(!lab.container_exists(done.container.as_deref().unwrap()).await);
    let usage = lab.store.usage_rows().await.unwrap();
    assert_eq!(usage.len(), 1);
    assert_eq!(usage[0].profile, "1g.10gb");
    assert_eq!(usage[0].image, BUSYBOX);
    assert_eq!(usage[0].placement, done.placement.as_ref().unwrap().label);
    assert!(usage[0].ended_at_ms.unwrap() >= usage[0].started_at_ms);
    assert_eq!(usage[0].end_reason.as_deref(), Some(done.reason.as_str()));
}

async fn a_failing_job_keeps_its_exit_code_and_output(store: Store) {
    let lab = lab(store, "1 x H100-80GB", |_| {}).await;
    let bob = lab.student("bob").await;
    let claim = lab.job(bob, &["sh", "-c", "echo loading data; echo out of memory >&2; exit 3"]);
    let session = lab.sessions.claim(claim).await.unwrap();
    let done = lab.until(&session.id, &[SessionState::Ended, SessionState::Failed], LAUNCH).await;
    assert_eq!(done.state, SessionState::Failed);
    assert_eq!(done.exit_code, Some(3));
    assert!(done.reason.contains("code 3"), "{}", done.reason);
    assert!(done.log_tail.contains("out of memory"), "{:?}", done.log_tail);
    assert_eq!(lab.store.count_slice_holds().await.unwrap(), 0);
    assert_eq!(lab.instance_count(), 0);
}

async fn stop_removes_the_container_and_closes_usage(store: Store) {
    let lab = lab(store, "1 x H100-80GB", |_| {}).await;
    let carol = lab.student("carol").await;
    let session = lab.sessions.claim(lab.job(carol, &["sleep", "600"])).await.unwrap();
    let ready = lab.until(&session.id, &[SessionState::Ready], LAUNCH).await;
    let container = ready.container.clone().unwrap();
    assert!(lab.container_exists(&container).await);
    assert_eq!(lab.instance_count(), 1);

    let stopped = lab.sessions.stop(&session.id, "stopped by carol").await.unwrap();
    assert_eq!(stopped.state, SessionState::Ended);
    assert_eq!(stopped.reason, "stopped by carol");
    assert!(!lab.container_exists(&container).await);
    assert_eq!(lab.instance_count(), 0);
    let usage = lab.store.usage_rows().await.unwrap();
    assert_eq!(usage[0].end_reason.as_deref(), Some("stopped by carol"));
    let again = lab.sessions.stop(&session.id, "twice").await.unwrap_err();
    assert!(matches!(again, CoreError::Conflict(_)), "{again}");
}

async fn a_container_killed_from_outside_ends_its_session(store: Store) {
    let lab = lab(store, "1 x H100-80GB", |_| {}).await;
    let _tasks = lab.sessions.start_background().await;
    let dave = lab.student("dave").await;
    let session = lab.sessions.claim(lab.job(dave, &["sleep", "600"])).await.unwrap();
    let ready = lab.until(&session.id, &[SessionState::Ready], LAUNCH).await;
    let client = lab.engine.client().await.unwrap();
    let killed_at = Instant::now();
    client
        .kill_container(ready.container.as_deref().unwrap(), None::<bollard::query_parameters::KillContainerOptions>)
        .await
        .unwrap();
    let over = lab
        .until(&session.id, &[SessionState::Ended, SessionState::Failed], Duration::from_secs(5))
        .await;
    while lab.store.count_slice_holds().await.unwrap() > 0 || lab.instance_count() > 0 {
        assert!(killed_at.elapsed() < Duration::from_secs(5), "slice still held 5 s after the kill");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(over.state, SessionState::Failed, "killed by SIGKILL: {}", over.reason);
    assert_eq!(over.exit_code, Some(137));
}

async fn a_session_past_its_time_limit_is_stopped(store: Store) {
    let lab = lab(store.clone(), "1 x H100-80GB", |_| {}).await;
    let gil = lab.student("gil").await;
    let session = lab.sessions.claim(lab.job(gil, &["sleep", "600"])).await.unwrap();
    let ready = lab.until(&session.id, &[SessionState::Ready], LAUNCH).await;
    assert!(ready.deadline_at_ms > ready.ready_at_ms.unwrap(), "the limit counts from ready");
    let report = lab.sessions.reconcile().await.unwrap();
    assert_eq!(report.stopped_at_time_limit, 0);
    // A day later, as far as the portal's clock knows.
    lab.clock.skip_ms(24 * 3_600_000);
    let report = lab.sessions.reconcile().await.unwrap();
    assert_eq!(report.stopped_at_time_limit, 1);
    let over = lab.sessions.session(&session.id).await.unwrap();
    assert_eq!(over.state, SessionState::Ended);
    assert!(over.reason.contains("time limit"), "{}", over.reason);
    assert!(!lab.container_exists(ready.container.as_deref().unwrap()).await);
    assert_eq!(lab.instance_count(), 0);
}

async fn bad_claims_get_clear_refusals(store: Store) {
    let lab = lab(store, "1 x H100-80GB", |_| {}).await;
    let erin = lab.student("erin").await;
    let refused = |r: Result<_, CoreError>| r.map(|_: slicehub_core::sessions::GpuSession| ()).unwrap_err().to_string();

    let mut claim = lab.job(erin, &["true"]);
    claim.image = "evil/miner:latest".into();
    let msg = refused(lab.sessions.claim(claim).await);
    assert!(msg.contains("does not allow the image \"evil/miner:latest\""), "{msg}");

    let policy = slicehub_core::courses::CoursePolicy {
        images: vec![BUSYBOX.into()],
        profiles: vec!["1g.10gb".into()],
        max_minutes: 60,
        ..slicehub_core::courses::CoursePolicy::defaults(&lab.config)
    };
    let known = lab.sessions.known_profiles().await.unwrap();
    slicehub_core::courses::set_policy(&lab.store, &lab.config, lab.course_id, &policy, &known, "test")
        .await
        .unwrap();
    let mut claim = lab.job(erin, &["true"]);
    claim.profile = "3g.40gb".into();
    let msg = refused(lab.sessions.claim(claim).await);
    assert!(msg.contains("does not allow the profile \"3g.40gb\""), "{msg}");

    let bad_policy = slicehub_core::courses::CoursePolicy {
        profiles: vec!["9g.99gb".into()],
        ..policy.clone()
    };
    let msg = slicehub_core::courses::set_policy(&lab.store, &lab.config, lab.course_id, &bad_policy, &known, "test")
        .await
        .unwrap_err()
        .to_string();
    assert!(msg.contains("No GPU here offers \"9g.99gb\""), "{msg}");

    let msg = refused(
        lab.sessions
            .claim(ClaimRequest {
                workload: Workload::Job(vec![]),
                ..lab.job(erin, &[])
            })
            .await,
    );
    assert!(msg.contains("needs a command"), "{msg}");

    let first = lab.sessions.claim(lab.job(erin, &["sleep", "600"])).await.unwrap();
    let msg = refused(lab.sessions.claim(lab.job(erin, &["sleep", "600"])).await);
    assert!(msg.contains("the limit is 1"), "{msg}");

    let msg = lab.sessions.stop("s-doesnotexist", "x").await.unwrap_err();
    assert!(matches!(msg, CoreError::NotFound(_)), "{msg}");

    lab.sessions.stop(&first.id, "done").await.unwrap();
    lab.clean_up().await;
}

async fn the_database_refuses_a_second_hold_on_a_slice(store: Store) {
    use slicehub_core::sessions::SlicePlacement;
    use slicehub_core::store::NewGpuSession;
    use slicehub_core::sessions::{SessionKind, SessionPool};
    let lab = lab(store.clone(), "1 x H100-80GB", |_| {}).await;
    let mut ids = Vec::new();
    for (n, name) in ["fay", "gus"].iter().enumerate() {
        let user = lab.student(name).await;
        let id = format!("s-hold{n}");
        store
            .insert_gpu_session(
                &NewGpuSession {
                    id: &id,
                    user_id: user,
                    course_id: lab.course_id,
                    kind: SessionKind::Job,
                    pool: SessionPool::Local,
                    profile: "2g.20gb",
                    image: BUSYBOX,
                    argv: &["true".to_string()],
                    token: "t",
                    deadline_at_ms: i64::MAX / 2,
                },
                1,
            )
            .await
            .unwrap();
        ids.push(id);
    }
    let at = |start: u8| SlicePlacement {
        gpu_uuid: "GPU-x".into(),
        gpu_index: 0,
        profile_id: 14,
        start,
        label: format!("2g.20gb@{start}"),
    };
    assert!(store.hold_slice(&ids[0], &at(2), &[2, 3], true, "first").await.unwrap().is_some());
    // Overlapping at slice 3, as a racing allocator might choose: refused, nothing kept.
    let err = store.hold_slice(&ids[1], &at(3), &[3, 4], true, "second").await.unwrap_err();
    assert!(matches!(err, CoreError::Conflict(_)), "{err}");
    assert_eq!(store.count_slice_holds().await.unwrap(), 2);
    let second = store.gpu_session(&ids[1]).await.unwrap().unwrap();
    assert_eq!(second.state, SessionState::Requested);
    assert!(second.placement.is_none());
}

/// A progress bar redrawn 20,000 times is one line of output to a terminal, and is kept as
/// its last state, not as megabytes of redraws.
async fn progress_bars_are_kept_as_a_terminal_shows_them(store: Store) {
    let lab = lab(store, "1 x H100-80GB", |_| {}).await;
    let erin = lab.student("erin").await;
    let script = "i=0; while [ $i -lt 20000 ]; do printf '\\rstep %05d of 20000' $i; i=$((i+1)); done; echo; echo trained";
    let session = lab.sessions.claim(lab.job(erin, &["sh", "-c", script])).await.unwrap();
    let done = lab.until(&session.id, &[SessionState::Ended, SessionState::Failed], LAUNCH).await;
    assert_eq!(done.state, SessionState::Ended, "{}", done.reason);
    assert_eq!(done.log_tail, "step 19999 of 20000\ntrained\n");
}

/// A job that outgrows its memory limit is killed by the kernel; the student is told it ran
/// out of memory, and its slice is free at once.
async fn a_job_out_of_memory_says_so_and_frees_its_slice(store: Store) {
    let lab = lab(store, "1 x H100-80GB", |_| {}).await;
    let gina = lab.student("gina").await;
    let grow = "x=aaaaaaaaaaaaaaaa; while true; do x=$x$x; done";
    let session = lab.sessions.claim(lab.job(gina, &["sh", "-c", grow])).await.unwrap();
    let done = lab.until(&session.id, &[SessionState::Ended, SessionState::Failed], LAUNCH).await;
    assert_eq!(done.state, SessionState::Failed);
    assert!(done.reason.starts_with("out of memory"), "{}", done.reason);
    let freed = Instant::now() + Duration::from_secs(5);
    while lab.store.count_slice_holds().await.unwrap() > 0 {
        assert!(Instant::now() < freed, "the slice is still held 5 s later");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(lab.instance_count(), 0);
}

on_both_databases!(
    a_job_out_of_memory_says_so_and_frees_its_slice,
    progress_bars_are_kept_as_a_terminal_shows_them,
    a_job_runs_with_its_argv_and_frees_its_slice,
    a_failing_job_keeps_its_exit_code_and_output,
    stop_removes_the_container_and_closes_usage,
    a_container_killed_from_outside_ends_its_session,
    a_session_past_its_time_limit_is_stopped,
    bad_claims_get_clear_refusals,
    the_database_refuses_a_second_hold_on_a_slice,
);
