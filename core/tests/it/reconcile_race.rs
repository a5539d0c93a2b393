//! The reconciler racing launches, on SQLite and PostgreSQL: a pass that listed the
//! containers before a job's container started, and reads the job as ready after, must
//! not end it. (A running container reports exit code 0, so such a job used to end as
//! "finished" seconds after it began.)


use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::lab::lab;
use slicehub_core::sessions::SessionState::Ready;
use slicehub_core::store::Store;

const LAUNCH: Duration = Duration::from_secs(60);

async fn passes_racing_launches_end_no_running_job(store: Store) {
    let lab = lab(store, "1 x H100-80GB", |_| {}).await;
    let done = Arc::new(AtomicBool::new(false));
    let passes = {
        let (sessions, done) = (lab.sessions.clone(), done.clone());
        tokio::spawn(async move {
            let mut n = 0;
            while !done.load(Ordering::SeqCst) {
                let _ = sessions.reconcile().await;
                n += 1;
            }
            n
        })
    };
    let mut ids = Vec::new();
    for i in 0..7 {
        let student = lab.student(&format!("race-{i}")).await;
        ids.push(lab.sessions.claim(lab.job(student, &["sleep", "600"])).await.unwrap().id);
    }
    for id in &ids {
        lab.until(id, &[Ready], LAUNCH).await;
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    done.store(true, Ordering::SeqCst);
    let passes = passes.await.unwrap();
    for id in &ids {
        let s = lab.sessions.session(id).await.unwrap();
        assert_eq!(s.state, Ready, "{id} after {passes} racing passes: {}", s.reason);
    }
    lab.clean_up().await;
}

on_both_databases!(passes_racing_launches_end_no_running_job);
