//! The queue on the real Docker engine, on SQLite and PostgreSQL: a waiting 7g keeps its
//! place against newer smaller claims that would run past its latest start, a claim short
//! enough to end before then starts at once (backfilling), every waiting claim is told
//! when it starts (about, at the latest), the latest start only moves earlier as sessions
//! end, and it survives a restart of the portal.


use std::time::Duration;

use crate::lab::{lab, Lab, BUSYBOX};
use slicehub_core::gpu::GpuBackend;
use slicehub_core::sessions::SessionState::{Allocating, Creating, Queued, Ready, Starting};
use slicehub_core::sessions::Sessions;
use slicehub_core::courses::{set_policy, PolicyForm, PolicyFormRules};
use slicehub_core::store::{Role, Store};
use slicehub_core::CourseId;
use slicehub_core::UserId;

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

const LAUNCH: Duration = Duration::from_secs(30);
const MIN: i64 = 60_000;

/// Sessions of the course stop after `minutes`; any size up to a whole GPU.
async fn set_limit(lab: &Lab, course_id: CourseId, minutes: u32) {
    let known = lab.sessions.known_profiles().await.unwrap();
    let form = PolicyForm {
        images: BUSYBOX.into(),
        max_minutes: minutes.to_string(),
        max_sessions: "1".into(),
        max_slices: "7".into(),
        internet: "on".into(),
        time_zone: "UTC".into(),
        ..PolicyForm::default()
    };
    let policy = form.parse(&known).unwrap();
    set_policy(&lab.store, &lab.config, course_id, &policy, &known, "instructor")
        .await
        .unwrap();
}

/// A second course whose sessions stop after `minutes`; `user` joins it as a student.
async fn short_course(lab: &Lab, minutes: u32, user: UserId) -> CourseId {
    let course = lab
        .store
        .insert_course("CS-LAB", "Short lab")
        .await
        .unwrap();
    set_limit(lab, course.id, minutes).await;
    lab.store
        .set_member_role(course.id, user, Role::Student)
        .await
        .unwrap();
    course.id
}

async fn a_big_claim_keeps_its_place_and_its_latest_start(store: Store) {
    let lab = lab(store, "1 x H100-80GB", |c| c.sessions.max_minutes = 60).await;
    set_limit(&lab, lab.course_id, 60).await;
    let [ann, ben, cat, dan] = [
        lab.student("ann").await,
        lab.student("ben").await,
        lab.student("cat").await,
        lab.student("dan").await,
    ];
    let sized = |user: UserId, profile: &str| {
        let mut claim = lab.job(user, &["sleep", "600"]);
        claim.profile = profile.into();
        claim
    };
    let anns = lab.sessions.claim(sized(ann, "4g.40gb")).await.unwrap();
    let anns = lab.until(&anns.id, &[Ready], LAUNCH).await;

    // ben's 7g waits for ann's 4g: at the latest when her hour is up.
    let bens = lab.sessions.claim(sized(ben, "7g.80gb")).await.unwrap();
    assert_eq!(bens.state, Queued);
    let estimates = lab.sessions.queue_estimates().await.unwrap();
    let first = *estimates
        .get(&bens.id)
        .unwrap_or_else(|| panic!("no estimate for ben: {estimates:?}, {:?}", bens.reason));
    assert!(
        first.latest_ms >= anns.deadline_at_ms,
        "{first:?} before ann's limit {}",
        anns.deadline_at_ms
    );
    assert!(
        first.latest_ms <= anns.deadline_at_ms + 5 * MIN,
        "{first:?}"
    );
    assert!(first.about_ms <= first.latest_ms);

    // cat's 3g would fit on the free half now, but for an hour it would push ben back.
    let cats = lab.sessions.claim(sized(cat, "3g.40gb")).await.unwrap();
    assert_eq!(cats.state, Queued, "a newer claim jumped a waiting 7g");
    let cat_waits = lab.sessions.queue_estimates().await.unwrap()[&cats.id];
    assert!(
        cat_waits.latest_ms > first.latest_ms,
        "cat starts after ben's hour: {cat_waits:?}"
    );

    // dan's course stops sessions after 5 minutes: his 3g ends before ben's start, so it
    // starts now on the free half.
    let dan_course = short_course(&lab, 5, dan).await;
    let mut dan_claim = sized(dan, "3g.40gb");
    dan_claim.course_id = dan_course;
    let dans = lab.sessions.claim(dan_claim).await.unwrap();
    let dans = lab.until(&dans.id, &[Ready], LAUNCH).await;
    assert_eq!(lab.sessions.session(&bens.id).await.unwrap().state, Queued);
    assert_eq!(lab.sessions.session(&cats.id).await.unwrap().state, Queued);

    // A 7g asked now would wait behind both.
    let offer = lab
        .sessions
        .availability_for(&["7g.80gb".to_string()], 60, None, true)
        .await
        .unwrap();
    assert_eq!(offer[0].free, 0);
    let wait = offer[0].wait.expect("a wait is offered before claiming");
    assert!(
        wait.latest_ms >= cat_waits.latest_ms,
        "{wait:?} vs cat's {cat_waits:?}"
    );

    // A restarted portal reads the same promises.
    let backend: std::sync::Arc<dyn GpuBackend> = lab.gpus.clone();
    let restarted = Sessions::new(
        lab.store.clone(),
        backend,
        lab.engine.clone(),
        lab.config.clone(),
    );
    restarted.never_dispatch();
    let after_restart = restarted.queue_estimates().await.unwrap();
    assert_eq!(after_restart[&bens.id].latest_ms, first.latest_ms);
    assert_eq!(after_restart[&cats.id].latest_ms, cat_waits.latest_ms);

    // ann leaves early: ben's latest start moves up to the end of dan's 5 minutes.
    // (The stop starts a queue pass of its own: a dispatch called meanwhile leaves the
    // work to it, so the new window is waited for.)
    lab.sessions.stop(&anns.id, "done").await.unwrap();
    lab.sessions.dispatch().await.unwrap();
    let started = std::time::Instant::now();
    let moved = loop {
        let moved = lab.sessions.queue_estimates().await.unwrap()[&bens.id];
        if moved.latest_ms < first.latest_ms || started.elapsed() > Duration::from_secs(10) {
            break moved;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert!(
        moved.latest_ms < first.latest_ms,
        "{moved:?} not earlier than {first:?}"
    );
    assert!(
        moved.latest_ms >= dans.deadline_at_ms && moved.latest_ms <= dans.deadline_at_ms + 5 * MIN,
        "{moved:?}"
    );

    // dan stops too: ben starts at once, well before the first promise, and cat waits on.
    lab.sessions.stop(&dans.id, "done").await.unwrap();
    lab.sessions.dispatch().await.unwrap();
    let placed = lab
        .until(&bens.id, &[Allocating, Creating, Starting, Ready], LAUNCH)
        .await;
    assert!(now_ms() <= first.latest_ms);
    assert!(placed.placement.is_some());
    assert_eq!(lab.sessions.session(&cats.id).await.unwrap().state, Queued);
    lab.clean_up().await;
}

/// The launch card's "at the latest" is what the claim is then promised: another course's
/// booked lab keeps the GPU from in 10 minutes, and its sessions may run on past the
/// window's end by that course's limit; the card counts that tail, as the promise does.
async fn the_card_promises_no_earlier_than_the_claim_then_gets(store: Store) {
    let lab = lab(store, "1 x H100-80GB", |c| c.sessions.max_minutes = 60).await;
    set_limit(&lab, lab.course_id, 60).await;
    let (eve, lab_student) = (lab.student("eve").await, lab.student("lab-student").await);
    let other = short_course(&lab, 60, lab_student).await;
    let starts = now_ms() + 10 * MIN;
    lab.sessions
        .book(&slicehub_core::sessions::BookingRequest {
            course_id: other,
            profile: "1g.10gb".into(),
            slices: 7,
            starts_at_ms: starts,
            ends_at_ms: starts + 30 * MIN,
            weeks: 1,
            by: "vic".into(),
            override_running: false,
        })
        .await
        .unwrap();
    let card = lab
        .sessions
        .availability_for(&["1g.10gb".to_string()], 60, Some(lab.course_id), true)
        .await
        .unwrap();
    assert_eq!(card[0].free, 0, "an hour from now would run into the booked lab");
    let card = card[0].wait.expect("the card says when");
    let claim = lab.sessions.claim(lab.job(eve, &["sleep", "600"])).await.unwrap();
    assert_eq!(claim.state, Queued);
    let promised = lab.sessions.queue_estimates().await.unwrap()[&claim.id];
    assert!(
        card.latest_ms + MIN >= promised.latest_ms,
        "the card said {} min, the claim was promised {} min",
        (card.latest_ms - now_ms()) / MIN,
        (promised.latest_ms - now_ms()) / MIN
    );
    lab.sessions.stop(&claim.id, "done").await.unwrap();
    lab.clean_up().await;
}

/// An administrator's instance on a dynamic GPU outlives the session that took it: a 7g
/// behind a 4g running there is not promised the GPU when the 4g's time is up (the instance
/// stays, so no 7g could start then); it used to be.
async fn a_claim_behind_an_admins_instance_is_not_promised_its_slices(store: Store) {
    let lab = lab(store, "1 x H100-80GB", |c| c.sessions.max_minutes = 60).await;
    set_limit(&lab, lab.course_id, 60).await;
    let catalog = lab.gpus.catalog(0).unwrap();
    let four_g = catalog.profile_by_name("4g.40gb").unwrap();
    let admins = slicehub_core::gpu::Placement::new(four_g.id, four_g.starts[0]);
    lab.gpus.create_instance(0, admins).unwrap();
    let (ann, ben) = (lab.student("adm-ann").await, lab.student("adm-ben").await);
    let mut claim = lab.job(ann, &["sleep", "600"]);
    claim.profile = "4g.40gb".into();
    let anns = lab.sessions.claim(claim).await.unwrap();
    let anns = lab.until(&anns.id, &[Ready], LAUNCH).await;
    let at = anns.placement.clone().unwrap();
    assert_eq!((at.profile_id, at.start, anns.created_instance), (admins.profile_id, admins.start, false), "ann took the admin's instance");
    let mut claim = lab.job(ben, &["sleep", "600"]);
    claim.profile = "7g.80gb".into();
    let bens = lab.sessions.claim(claim).await.unwrap();
    assert_eq!(bens.state, Queued);
    let estimates = lab.sessions.queue_estimates().await.unwrap();
    assert!(!estimates.contains_key(&bens.id), "promised {:?}, but the admin's 4g stays after ann", estimates.get(&bens.id));
    lab.sessions.stop(&anns.id, "done").await.unwrap();
    lab.sessions.reconcile().await.unwrap();
    assert_eq!(lab.sessions.session(&bens.id).await.unwrap().state, Queued, "no 7g fits beside the admin's instance");
    let left: Vec<_> = lab.gpus.instances(0).unwrap().into_iter().map(|i| i.placement).collect();
    assert_eq!(left, vec![admins], "the admin's instance stays");
    lab.sessions.stop(&bens.id, "done").await.unwrap();
    lab.clean_up().await;
}

on_both_databases!(a_claim_behind_an_admins_instance_is_not_promised_its_slices, a_big_claim_keeps_its_place_and_its_latest_start, the_card_promises_no_earlier_than_the_claim_then_gets);
