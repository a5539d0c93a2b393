//! The instructor's class view on the real Docker engine, on SQLite and PostgreSQL: who
//! runs what, where each waiting claim stands in its profile's queue, each student's
//! slice-hours at a chosen instant, and a CSV whose numbers are the page's and add up to
//! the ledger.


use std::time::Duration;

use crate::lab::lab;
use slicehub_core::courses::{class_view, usage_csv};
use slicehub_core::quotas::{charged_ms, hours};
use slicehub_core::sessions::SessionState;
use slicehub_core::store::Store;

const LAUNCH: Duration = Duration::from_secs(30);
const MINUTE: i64 = 60_000;

async fn the_class_view_shows_sessions_queue_places_and_use(store: Store) {
    let lab = lab(store, "1 x H100-80GB", |_| {}).await;
    // Ten slice-hours a week, up to a whole GPU, resetting next Monday.
    lab.set_quota("10", 0, 0).await;
    let [ann, ben, cat, dan, eve] = [
        lab.student("ann").await,
        lab.student("ben").await,
        lab.student("cat").await,
        lab.student("dan").await,
        lab.student("eve").await,
    ];

    // ann and ben fill the GPU (4g + 3g = all 8 memory slices); cat and dan wait for a 1g.
    let mut big = lab.job(ann, &["sleep", "600"]);
    big.profile = "4g.40gb".into();
    let anns = lab.sessions.claim(big).await.unwrap();
    let mut mid = lab.job(ben, &["sleep", "600"]);
    mid.profile = "3g.40gb".into();
    let bens = lab.sessions.claim(mid).await.unwrap();
    lab.until(&anns.id, &[SessionState::Ready], LAUNCH).await;
    lab.until(&bens.id, &[SessionState::Ready], LAUNCH).await;
    let cats = lab.sessions.claim(lab.job(cat, &["sleep", "600"])).await.unwrap();
    let dans = lab.sessions.claim(lab.job(dan, &["sleep", "600"])).await.unwrap();
    assert_eq!(lab.until(&cats.id, &[SessionState::Queued], LAUNCH).await.state, SessionState::Queued);
    lab.until(&dans.id, &[SessionState::Queued], LAUNCH).await;

    let started = lab.store.usage_rows().await.unwrap().iter().map(|u| u.started_at_ms).max().unwrap();
    let at = started + 30 * MINUTE;
    let view = class_view(&lab.store, &lab.config, lab.course_id, at).await.unwrap();

    let place = |id: &str| view.sessions.iter().find(|c| c.session.id == id).map(|c| c.queue_position);
    assert_eq!(place(&anns.id), Some(None), "a running session has no queue place");
    assert_eq!(place(&bens.id), Some(None));
    assert_eq!(place(&cats.id), Some(Some(1)), "the older 1g claim is next");
    assert_eq!(place(&dans.id), Some(Some(2)));
    assert_eq!(view.sessions.len(), 4, "eve has nothing running");

    // Half an hour on a 4g is two slice-hours; on a 3g one and a half; waiting costs nothing.
    let used = |name: &str| view.students.iter().find(|s| s.username == name).unwrap().clone();
    assert!(used("ann").used_ms >= 120 * MINUTE && used("ann").used_ms < 121 * MINUTE, "{}", used("ann").used_ms);
    assert!(used("ben").used_ms >= 90 * MINUTE && used("ben").used_ms < 91 * MINUTE);
    assert_eq!(used("cat").used_ms, 0);
    assert_eq!(used("eve").used_ms, 0);
    assert_eq!(used("ann").running_slices, 4);
    assert_eq!(used("ann").budget.as_ref().unwrap().total_ms, 600 * MINUTE);
    // Ten slice-hours on a 4g last 2.5 hours: the budget stops ann before the 600-minute
    // limit, and the instructor is told the same time as she is.
    let anns_end = view.sessions.iter().find(|c| c.session.id == anns.id).unwrap().ends_at_ms.unwrap();
    assert_eq!(Some(anns_end), used("ann").budget.as_ref().unwrap().runs_out_at_ms());
    assert!(anns_end < lab.sessions.session(&anns.id).await.unwrap().deadline_at_ms);
    assert_eq!(view.students.len(), 5);
    let _ = eve;

    // The CSV carries the page's numbers, and they add up to the ledger.
    let csv = usage_csv("CS-101", &view);
    let mut reader = csv::Reader::from_reader(csv.as_bytes());
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), 5, "{csv}");
    let header = reader.headers().unwrap().clone();
    let column = |name: &str| header.iter().position(|h| h == name).unwrap();
    let ann_row = rows.iter().find(|r| &r[column("username")] == "ann").unwrap();
    assert_eq!(&ann_row[column("slice_hours_used")], hours(used("ann").used_ms));
    assert_eq!(&ann_row[column("slice_hours_budget")], "10");
    let ledger_ms: i64 = lab
        .store
        .usage_intervals(lab.course_id, ann, view.period.start_ms, at)
        .await
        .map(|i| charged_ms(&i, view.period.start_ms, at))
        .unwrap();
    assert_eq!(ledger_ms, used("ann").used_ms, "the page is the ledger");

    // An instructor's stop with a reason reaches the student, and the queue moves up.
    lab.sessions.stop(&anns.id, "stopped by ivy: the lab is over").await.unwrap();
    let ended = lab.until(&anns.id, &[SessionState::Ended], LAUNCH).await;
    assert_eq!(ended.reason, "stopped by ivy: the lab is over");
    lab.until(&cats.id, &[SessionState::Ready], LAUNCH).await;
    lab.until(&dans.id, &[SessionState::Ready], LAUNCH).await;
    let view = class_view(&lab.store, &lab.config, lab.course_id, at).await.unwrap();
    assert!(view.sessions.iter().all(|c| c.queue_position.is_none()), "nobody waits any more");
    assert!(view.sessions.iter().all(|c| c.session.id != anns.id), "ann's session is over");
    lab.clean_up().await;
}

on_both_databases!(the_class_view_shows_sessions_queue_places_and_use);
