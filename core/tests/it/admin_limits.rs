//! The administrator's ceilings, on SQLite and PostgreSQL with the real Docker engine: a
//! course's policy stays within them (a save past one is refused by field; a ceiling
//! lowered later applies to a stored policy at once), one course's sessions hold at most
//! its share of the GPUs however many classmates claim at once, and booked labs stay within
//! the horizon and the weekly budget of compute-slice-hours.


use std::time::Duration;

use crate::lab::{lab, now_ms, BUSYBOX};
use slicehub_core::sessions::{BookingRequest, SessionState};
use slicehub_core::courses::{admin_limit_problems, policy_of, set_policy, PolicyForm, PolicyFormRules};
use slicehub_core::store::{NewBooking, Role, Store};
use slicehub_core::CoreError;

const DAY_MS: i64 = 86_400_000;

on_both_databases!(
    policies_stay_within_the_administrators_ceilings,
    one_course_holds_at_most_its_share_even_when_classmates_claim_at_once,
    booked_labs_stay_within_the_horizon_and_the_weekly_budget,
);


async fn policies_stay_within_the_administrators_ceilings(store: Store) {
    let lab = lab(store, "1 x H100-80GB", |c| {
        c.limits.session_minutes = 120;
        c.limits.sessions_per_student = 2;
        c.limits.compute_slices = 3;
    })
    .await;
    let known = lab.sessions.known_profiles().await.unwrap();
    let greedy = PolicyForm {
        images: BUSYBOX.into(),
        max_minutes: "10080".into(),
        max_sessions: "64".into(),
        max_slices: "7".into(),
        internet: "on".into(),
        time_zone: "UTC".into(),
        ..PolicyForm::default()
    };
    let policy = greedy.parse(&known).expect("within the portal's own bounds");
    let mut refused: Vec<(String, String)> = admin_limit_problems(&lab.config, &policy)
        .into_iter()
        .map(|p| (p.field, p.message))
        .collect();
    refused.sort();
    let fields: Vec<&str> = refused.iter().map(|(f, _)| f.as_str()).collect();
    assert_eq!(fields, ["max_minutes", "max_sessions", "max_slices"], "{refused:?}");
    assert!(refused[0].1.contains("at most 120"), "{refused:?}");

    let refused = set_policy(&lab.store, &lab.config, lab.course_id, &policy, &known, "instructor").await.unwrap_err();
    assert!(refused.to_string().contains("max_minutes: A session's length"), "the save itself refuses: {refused}");

    // Stored before the ceilings were lowered: the course lives by the ceilings at once.
    let mut before = (*lab.config).clone();
    (before.limits.session_minutes, before.limits.sessions_per_student, before.limits.compute_slices) = (10_080, 64, 7);
    set_policy(&lab.store, &before, lab.course_id, &policy, &known, "instructor").await.unwrap();
    let lived = policy_of(&lab.store, &lab.config, lab.course_id).await.unwrap();
    assert_eq!((lived.max_minutes, lived.max_sessions, lived.max_slices), (120, 2, 3));
    let student = lab.student("greedy-gil").await;
    let mut big = lab.job(student, &["true"]);
    big.profile = "7g.80gb".into();
    let err = lab.sessions.claim(big).await.unwrap_err();
    assert!(err.to_string().contains("at most 3 compute slices"), "{err}");
}

async fn one_course_holds_at_most_its_share_even_when_classmates_claim_at_once(store: Store) {
    // An H100 has 7 compute slices; 30% of them is 2.1.
    let lab = lab(store, "1 x H100-80GB", |c| {
        c.limits.course_share_percent = 30;
        c.sessions.max_per_user = 1;
    })
    .await;
    let mut claims = Vec::new();
    for i in 0..5 {
        let student = lab.student(&format!("share-{i}")).await;
        let sessions = lab.sessions.clone();
        let claim = lab.job(student, &["sleep", "300"]);
        claims.push(tokio::spawn(async move { sessions.claim(claim).await }));
    }
    let mut taken = 0;
    for claim in claims {
        match claim.await.unwrap() {
            Ok(_) => taken += 1,
            Err(CoreError::InsufficientResources(words)) => {
                assert!(words.contains("CS-101 already holds or waits for 2 of its 2.1 compute slices"), "{words}");
            }
            Err(other) => panic!("unexpected refusal: {other}"),
        }
    }
    assert_eq!(taken, 2, "exactly the share, however the claims interleave");

    // Another course is not held back by the first one's share.
    let other = lab.store.insert_course("ML-200", "Other").await.unwrap();
    let outsider = lab.student("share-other").await;
    lab.store.set_member_role(other.id, outsider, Role::Student).await.unwrap();
    let mut claim = lab.job(outsider, &["sleep", "300"]);
    claim.course_id = other.id;
    let theirs = lab.sessions.claim(claim).await.expect("the other course starts");
    lab.until(&theirs.id, &[SessionState::Ready], Duration::from_secs(60)).await;

    // A session of the course ends: its slice counts no more.
    let live = lab.store.gpu_sessions_in(SessionState::ACTIVE).await.unwrap();
    let first = live.iter().find(|s| s.course_id == lab.course_id).unwrap();
    lab.sessions.stop(&first.id, "test").await.unwrap();
    let late = lab.student("share-late").await;
    lab.sessions.claim(lab.job(late, &["sleep", "300"])).await.expect("room again within the share");
    // A size larger than the whole share is told so, not to wait.
    let mut big = lab.job(lab.student("share-big").await, &["true"]);
    big.profile = "3g.40gb".into();
    let words = lab.sessions.claim(big).await.unwrap_err().to_string();
    assert!(words.contains("choose a smaller size"), "{words}");

    // During a lab the course booked, its booked slices come on top of the share.
    let now = now_ms();
    let slots: Vec<(String, u32, u8, u8)> = (0..2).map(|i| ("GPU-elsewhere".to_string(), 19, i, 1)).collect();
    lab.store
        .insert_booking(&NewBooking {
            course_id: lab.course_id,
            profile: "1g.10gb",
            starts_at: now - 60_000,
            ends_at: now + 3_600_000,
            weeks: 1,
            created_by: "vic",
            slots: &slots,
        })
        .await
        .unwrap();
    let mut in_lab = 0;
    for i in 0..3 {
        let student = lab.student(&format!("share-lab-{i}")).await;
        if lab.sessions.claim(lab.job(student, &["sleep", "300"])).await.is_ok() {
            in_lab += 1;
        }
    }
    assert_eq!(in_lab, 2, "the two booked slices, and no more");
    lab.clean_up().await;
}

async fn booked_labs_stay_within_the_horizon_and_the_weekly_budget(store: Store) {
    let lab = lab(store, "1 x H100-80GB", |c| {
        c.limits.booking_days_ahead = 30;
        c.limits.booking_slice_hours_per_week = 10;
    })
    .await;
    // Monday 10:00 UTC, two weeks from now: every window below falls in one calendar week.
    let today = now_ms() / DAY_MS * DAY_MS;
    let weekday = (today / DAY_MS + 3) % 7; // 0 = Monday
    let monday = today + (14 - weekday) * DAY_MS + 10 * 3_600_000;
    let ask = |slices: u32, starts: i64, hours: i64, weeks: u32| BookingRequest {
        course_id: lab.course_id,
        profile: "1g.10gb".into(),
        slices,
        starts_at_ms: starts,
        ends_at_ms: starts + hours * 3_600_000,
        weeks,
        by: "vic".into(),
        override_running: false,
    };
    let far = lab.sessions.book(&ask(1, now_ms() + 40 * DAY_MS, 1, 1)).await.unwrap_err().to_string();
    assert!(far.contains("at most 30 days ahead"), "{far}");
    let repeats_past = lab.sessions.book(&ask(1, monday, 1, 5)).await.unwrap_err().to_string();
    assert!(repeats_past.contains("at most 30 days ahead"), "the last weekly window counts: {repeats_past}");

    lab.sessions.book(&ask(2, monday, 4, 1)).await.expect("8 of 10 compute-slice-hours");
    let over = lab.sessions.book(&ask(1, monday + DAY_MS, 3, 1)).await.unwrap_err().to_string();
    assert!(over.contains("would keep 11 compute-slice-hours") && over.contains("allows 10"), "{over}");
    lab.sessions.book(&ask(1, monday + 7 * DAY_MS, 3, 1)).await.expect("the next week has its own budget");
    assert_eq!(lab.sessions.bookings().await.unwrap().len(), 2, "the refused ones kept nothing");

    // A lab of this week that has ended already still counts for this week.
    let now = now_ms();
    let (ended_from, ended_to, next_from) = (now - 3_600_000, now - 1_800_000, now + 600_000);
    let same_week = |a: i64, b: i64| (a - 4 * DAY_MS).div_euclid(7 * DAY_MS) == (b - 4 * DAY_MS).div_euclid(7 * DAY_MS);
    if same_week(ended_from, next_from + 3_600_000) {
        // Sixteen 1g slices of a GPU long gone: only the count matters here.
        let slots: Vec<(String, u32, u8, u8)> = (0..16).map(|i| ("GPU-gone".to_string(), 19, i, 1)).collect();
        lab.store
            .insert_booking(&NewBooking {
                course_id: lab.course_id,
                profile: "1g.10gb",
                starts_at: ended_from,
                ends_at: ended_to,
                weeks: 1,
                created_by: "vic",
                slots: &slots,
            })
            .await
            .unwrap();
        // 16 × 1g for half an hour (8) before, 3 × 1g for an hour (3) now: 11 of 10.
        let refused = lab.sessions.book(&ask(3, next_from, 1, 1)).await.unwrap_err().to_string();
        assert!(refused.contains("would keep 11 compute-slice-hours"), "{refused}");
    }
}
