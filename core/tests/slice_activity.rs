//! Slice activity on simulated GPUs, from the real containers' CPU use, on SQLite and
//! PostgreSQL: a session spinning a core reads busy, one sleeping reads idle, both report
//! their memory, and a stopped session's samples are dropped.

// A binary of its own: it measures how much of a core a spinning container gets, which
// the other modules' tests running beside it on a small machine would take away.
#[macro_use]
#[path = "it/common/mod.rs"]
mod common;
#[path = "it/lab/mod.rs"]
mod lab;

use std::time::Duration;

use crate::lab::lab;
use slicehub_core::sessions::SessionState::Ready;
use slicehub_core::store::Store;

const LAUNCH: Duration = Duration::from_secs(30);

async fn a_busy_slice_reads_busy_and_an_idle_one_idle(store: Store) {
    let lab = lab(store, "1 x H100-80GB", |_| {}).await;
    let (ann, ben) = (lab.student("ann").await, lab.student("ben").await);
    let busy = lab.sessions.claim(lab.job(ann, &["sh", "-c", "while :; do :; done"])).await.unwrap();
    let idle = lab.sessions.claim(lab.job(ben, &["sleep", "600"])).await.unwrap();
    lab.until(&busy.id, &[Ready], LAUNCH).await;
    lab.until(&idle.id, &[Ready], LAUNCH).await;

    assert_eq!(lab.sessions.sample_slices().await.unwrap(), 2);
    let first = lab.sessions.slice_samples(&busy.id);
    assert_eq!(first.len(), 1);
    assert_eq!(first[0].busy_percent, None, "one reading says nothing of activity yet");
    tokio::time::sleep(Duration::from_secs(2)).await;
    lab.sessions.sample_slices().await.unwrap();

    let latest = lab.sessions.latest_slice_samples();
    let spinning = latest[&busy.id].sample;
    let sleeping = latest[&idle.id].sample;
    assert_eq!(latest[&busy.id].slice, format!("1g.10gb@{}", lab.sessions.session(&busy.id).await.unwrap().placement.unwrap().start));
    assert!(spinning.busy_percent.unwrap() >= 40, "a spinning loop: {spinning:?}");
    assert!(sleeping.busy_percent.unwrap() <= 10, "a sleeping job: {sleeping:?}");
    assert!(spinning.memory_mib.is_some() && sleeping.memory_mib.is_some());
    assert_eq!(lab.sessions.slice_samples(&idle.id).len(), 2);
    assert_eq!(lab.sessions.gpu_busy().len(), 1, "one GPU read per pass");

    lab.sessions.stop(&busy.id, "test over").await.unwrap();
    lab.until(&busy.id, &[slicehub_core::sessions::SessionState::Ended], LAUNCH).await;
    lab.sessions.sample_slices().await.unwrap();
    assert!(lab.sessions.slice_samples(&busy.id).is_empty(), "a stopped session keeps no samples");
    assert_eq!(lab.sessions.slice_samples(&idle.id).len(), 3);
    lab.clean_up().await;
}

on_both_databases!(a_busy_slice_reads_busy_and_an_idle_one_idle);
