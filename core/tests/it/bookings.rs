//! Booked lab sessions on the real Docker engine, on SQLite and PostgreSQL: booking refuses
//! what it cannot guarantee and never stops a running session; during the window all 40
//! students of the booked course get their slices while a second course floods claims,
//! and nothing of the second course runs on booked capacity; a window's MIG instances are
//! made before it opens and destroyed after it.


use std::collections::HashSet;
use std::time::Duration;

use crate::lab::{lab, now_ms, BUSYBOX};
use slicehub_core::sessions::SessionState::{Ended, Queued, Ready};
use slicehub_core::sessions::BookingRequest;
use slicehub_core::courses::{set_policy, PolicyForm, PolicyFormRules};
use slicehub_core::store::{Role, Store};
use slicehub_core::UserId;

const LAUNCH: Duration = Duration::from_secs(120);
const STUDENTS: usize = 40;


async fn a_booked_lab_gets_its_slices_while_another_course_floods(store: Store) {
    // Six H100s hold 42 1g slices.
    let lab = lab(store, "6 x H100-80GB", |c| {
        c.sessions.max_minutes = 60;
        c.sessions.max_per_user = 1;
    })
    .await;
    let known = lab.sessions.known_profiles().await.unwrap();
    let other = lab.store.insert_course("CS-201", "Other course").await.unwrap();
    let form = PolicyForm { images: BUSYBOX.into(), max_minutes: "60".into(), max_sessions: "1".into(), max_slices: "1".into(), internet: "on".into(), time_zone: "UTC".into(), ..PolicyForm::default() };
    for course in [lab.course_id, other.id] {
        set_policy(&lab.store, &lab.config, course, &form.parse(&known).unwrap(), &known, "admin").await.unwrap();
    }
    let mut flooders = Vec::new();
    for i in 0..20 {
        let id = lab.student(&format!("other{i:02}")).await;
        lab.store.set_member_role(other.id, id, Role::Student).await.unwrap();
        lab.store.remove_member(lab.course_id, id, Role::Student).await.unwrap();
        flooders.push(id);
    }
    let other_claim = |user: UserId| {
        let mut claim = lab.job(user, &["sleep", "600"]);
        claim.course_id = other.id;
        claim
    };

    // A session of the other course runs, its hour crossing the window.
    let running = lab.sessions.claim(other_claim(flooders[0])).await.unwrap();
    let running = lab.until(&running.id, &[Ready], LAUNCH).await;

    // Bad bookings are refused with the reason, and nothing is kept.
    let start = now_ms() + 5_000;
    let ask = |slices: u32, starts: i64, ends: i64, weeks: u32| BookingRequest {
        course_id: lab.course_id,
        profile: "1g.10gb".into(),
        slices,
        starts_at_ms: starts,
        ends_at_ms: ends,
        weeks,
        by: "vic".into(),
        override_running: false,
    };
    for (req, words) in [
        (ask(0, start, start + 600_000, 1), "1 to 64 slices"),
        (ask(4, start - 60_000, start + 600_000, 1), "has passed"),
        (ask(4, start, start - 1, 1), "end after it starts"),
        (ask(4, start, start + 600_000, 27), "1 to 26"),
        (BookingRequest { profile: "9g.999gb".into(), ..ask(1, start, start + 600_000, 1) }, "no GPU here offers the profile"),
        // 42 slices less the running session's: 42 cannot be guaranteed.
        (ask(42, start, start + 600_000, 1), "Only 41 of the 42"),
    ] {
        let refused = lab.sessions.book(&req).await.unwrap_err().to_string();
        assert!(refused.contains(words), "{refused} (expected {words:?})");
    }
    assert!(lab.sessions.bookings().await.unwrap().is_empty(), "a refused booking keeps nothing");

    let booking = lab.sessions.book(&ask(STUDENTS as u32, start, start + 600_000, 1)).await.unwrap();
    let bookings = lab.sessions.bookings().await.unwrap();
    assert_eq!(bookings.len(), 1);
    assert_eq!(bookings[0].row.id, booking);
    let booked: HashSet<(String, u8)> = bookings[0].slots.iter().cloned().collect();
    assert_eq!(booked.len(), STUDENTS);
    // An overlapping booking of the other course finds the GPUs taken.
    let clash = BookingRequest { course_id: other.id, ..ask(2, start + 60_000, start + 120_000, 1) };
    let refused = lab.sessions.book(&clash).await.unwrap_err().to_string();
    assert!(refused.contains("other bookings keep slices then"), "{refused}");

    // The other course floods claims; the booked course's 40 students claim as the lab starts.
    let mut floods = Vec::new();
    for &user in &flooders[1..] {
        floods.push(lab.sessions.claim(other_claim(user)).await.unwrap().id);
    }
    let mut mine = Vec::new();
    for i in 0..STUDENTS {
        let user = lab.student(&format!("student{i:02}")).await;
        mine.push(lab.sessions.claim(lab.job(user, &["sleep", "600"])).await.unwrap().id);
    }
    for id in &mine {
        lab.until(id, &[Ready], LAUNCH).await;
    }
    let mut others_running = 0;
    for id in &floods {
        let s = lab.sessions.session(id).await.unwrap();
        if let Some(p) = &s.placement {
            others_running += 1;
            let mask = 1u8 << p.start;
            assert!(
                !booked.iter().any(|(uuid, m)| uuid == &p.gpu_uuid && m & mask != 0),
                "a session of the other course runs on booked capacity: {p:?}"
            );
        } else {
            assert_eq!(s.state, Queued);
        }
    }
    assert!(others_running <= 1, "only the one free slice is left for the other course");
    // The session that ran before the booking was never stopped.
    assert_eq!(lab.sessions.session(&running.id).await.unwrap().state, Ready);

    // Cancelled, the booking keeps nothing more.
    lab.sessions.cancel_booking(lab.course_id, booking, "vic").await.unwrap();
    assert!(lab.sessions.bookings().await.unwrap().is_empty());
    assert!(lab.sessions.cancel_booking(lab.course_id, booking, "vic").await.is_err());
    lab.clean_up().await;
}

on_both_databases!(a_booked_lab_gets_its_slices_while_another_course_floods);

async fn booked_lab_time_is_not_charged_when_the_course_says_so(store: Store) {
    use slicehub_core::quotas::budget_at;
    use slicehub_core::courses::policy_of;
    let lab = lab(store, "1 x H100-80GB", |_| {}).await;
    let known = lab.sessions.known_profiles().await.unwrap();
    let day = |days: i64| (chrono::Utc::now() + chrono::Duration::days(days)).format("%Y-%m-%d").to_string();
    let form = |booked_time: &str| PolicyForm {
        images: BUSYBOX.into(),
        max_minutes: "600".into(),
        max_sessions: "1".into(),
        max_slices: "7".into(),
        internet: "on".into(),
        quota_hours: "5".into(),
        period: "term".into(),
        term_starts: day(-30),
        term_ends: day(30),
        time_zone: "UTC".into(),
        booked_time: booked_time.into(),
        ..PolicyForm::default()
    };
    assert!(form("maybe").parse(&known).is_err(), "a third answer is refused");
    set_policy(&lab.store, &lab.config, lab.course_id, &form("free").parse(&known).unwrap(), &known, "vic").await.unwrap();
    let rosa = lab.student("rosa").await;
    let starts = now_ms() + 5_000;
    let ends = starts + 10 * 60_000;
    let booking = BookingRequest {
        course_id: lab.course_id,
        profile: "1g.10gb".into(),
        slices: 1,
        starts_at_ms: starts,
        ends_at_ms: ends,
        weeks: 1,
        by: "vic".into(),
        override_running: false,
    };
    lab.sessions.book(&booking).await.unwrap();
    let session = lab.sessions.claim(lab.job(rosa, &["sleep", "600"])).await.unwrap();
    lab.until(&session.id, &[Ready], LAUNCH).await;
    let started = lab.store.usage_rows().await.unwrap()[0].started_at_ms;

    // Half an hour in: the ten booked minutes are free.
    let at = started + 30 * 60_000;
    let inside = ends.min(at) - starts.max(started);
    let policy = policy_of(&lab.store, &lab.config, lab.course_id).await.unwrap();
    let free = budget_at(&lab.store, &policy, lab.course_id, rosa, at).await.unwrap().unwrap();
    assert_eq!(free.used_ms, 30 * 60_000 - inside);

    // The booking cancelled after its lab took place: the lab time used stays free.
    lab.store
        .execute_admin(&format!("UPDATE bookings SET cancelled_at = {} WHERE course_id = {}", ends + 60_000, lab.course_id))
        .await
        .unwrap();
    let after_cancel = budget_at(&lab.store, &policy, lab.course_id, rosa, at).await.unwrap().unwrap();
    assert_eq!(after_cancel.used_ms, free.used_ms, "a cancellation charges no lab time that was free");
    // Cancelled before it began, none of it is free.
    lab.store
        .execute_admin(&format!("UPDATE bookings SET cancelled_at = {} WHERE course_id = {}", starts - 1_000, lab.course_id))
        .await
        .unwrap();
    let cancelled_early = budget_at(&lab.store, &policy, lab.course_id, rosa, at).await.unwrap().unwrap();
    assert_eq!(cancelled_early.used_ms, 30 * 60_000);

    // With booked time counting, the same half hour is charged whole.
    set_policy(&lab.store, &lab.config, lab.course_id, &form("counts").parse(&known).unwrap(), &known, "vic").await.unwrap();
    let policy = policy_of(&lab.store, &lab.config, lab.course_id).await.unwrap();
    let counted = budget_at(&lab.store, &policy, lab.course_id, rosa, at).await.unwrap().unwrap();
    assert_eq!(counted.used_ms, 30 * 60_000);
    lab.clean_up().await;
}

on_both_databases!(booked_lab_time_is_not_charged_when_the_course_says_so);

async fn a_booked_windows_instances_are_ready_at_its_start_and_go_after_it(store: Store) {
    use slicehub_core::gpu::{GpuBackend, Placement};
    let lab = lab(store, "2 x H100-80GB", |c| {
        c.sessions.max_minutes = 60;
    })
    .await;
    let two_g = lab.gpus.catalog(0).unwrap().profile_by_name("2g.20gb").unwrap().id;
    let instances_on = |gpu: u32| -> HashSet<Placement> {
        lab.gpus.instances(gpu).unwrap().into_iter().map(|i| i.placement).collect()
    };
    // The window opens in 2 s (within the lead: made on the next pass) and lasts 12 s.
    let start = now_ms() + 2_000;
    let ends = start + 12_000;
    let booking = BookingRequest {
        course_id: lab.course_id,
        profile: "1g.10gb".into(),
        slices: 2,
        starts_at_ms: start,
        ends_at_ms: ends,
        weeks: 1,
        by: "vic".into(),
        override_running: false,
    };
    lab.sessions.book(&booking).await.unwrap();
    let placements = lab.sessions.bookings().await.unwrap()[0].placements.clone();
    assert_eq!(placements.len(), 2);
    let booked_gpu = lab.gpus.list_gpus().unwrap().into_iter().find(|g| g.uuid == placements[0].0).unwrap().index;
    let other_gpu = 1 - booked_gpu;
    // An instance an admin made by hand on the other GPU.
    let admins = Placement::new(two_g, 0);
    lab.gpus.create_instance(other_gpu, admins).unwrap();

    assert!(instances_on(booked_gpu).is_empty(), "nothing is made at booking time");
    let report = lab.sessions.reconcile().await.unwrap();
    assert_eq!(report.instances_prepared, 2, "{report:?}");
    let booked: HashSet<Placement> = placements.iter().map(|(_, at)| *at).collect();
    assert_eq!(instances_on(booked_gpu), booked, "the window's instances are there before it opens");

    // A student of the booked course takes one that is there: nothing is created for them.
    let rosa = lab.student("rosa").await;
    let session = lab.sessions.claim(lab.job(rosa, &["sleep", "600"])).await.unwrap();
    let session = lab.until(&session.id, &[Ready], LAUNCH).await;
    assert_eq!(instances_on(booked_gpu), booked, "the session used a prepared instance");
    assert!(session.created_instance, "the portal made it: the session's release destroys it");
    let at = session.placement.clone().unwrap();
    assert!(booked.contains(&Placement::new(at.profile_id, at.start)), "{at:?}");
    // While the window is open a pass keeps the one nobody holds.
    lab.sessions.reconcile().await.unwrap();
    assert_eq!(instances_on(booked_gpu), booked);

    // After the window: the unheld one goes, the held one stays until its session ends,
    // and the admin's instance is never touched.
    tokio::time::sleep(Duration::from_millis((ends - now_ms()).max(0) as u64 + 200)).await;
    let report = lab.sessions.reconcile().await.unwrap();
    assert_eq!(report.instances_destroyed, 1, "{report:?}");
    assert_eq!(report.instances_prepared, 0, "{report:?}");
    assert_eq!(instances_on(booked_gpu), HashSet::from([Placement::new(at.profile_id, at.start)]));
    lab.sessions.stop(&session.id, "done").await.unwrap();
    lab.until(&session.id, &[Ended], LAUNCH).await;
    // Gone with its session, as the queue planned, not only at the next pass.
    assert!(instances_on(booked_gpu).is_empty(), "the booked instances are gone after the window");
    assert_eq!(instances_on(other_gpu), HashSet::from([admins]), "an admin's instance stays");
    lab.clean_up().await;
}

on_both_databases!(a_booked_windows_instances_are_ready_at_its_start_and_go_after_it);
