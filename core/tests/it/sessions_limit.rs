//! One student presses Start 50 times at once with a limit of one session: exactly one
//! session is written, the other 49 are told about the limit, on both databases.


use crate::common;

use std::sync::Arc;

use slicehub_core::sessions::{SessionKind, SessionPool, SessionState};
use slicehub_core::store::{NewGpuSession, NewUserRow, Store};
use slicehub_core::CoreError;

const CLAIMS: usize = 50;

async fn fifty_simultaneous_claims_by_one_student_with_a_limit_of_one(store: Store) {
    let course = store
        .insert_course("CS-101", "Deep Learning")
        .await
        .unwrap();
    let user = store
        .insert_user(&NewUserRow {
            username: "eager",
            display_name: "Eager Student",
            email: None,
            password_hash: "not-a-real-hash",
            is_admin: false,
            must_change_password: false,
        })
        .await
        .unwrap();
    let store = Arc::new(store);
    let barrier = Arc::new(tokio::sync::Barrier::new(CLAIMS));
    let claims: Vec<_> = (0..CLAIMS)
        .map(|i| {
            let (store, barrier) = (store.clone(), barrier.clone());
            tokio::spawn(async move {
                let (id, token) = (format!("session-{i:02}"), format!("token-{i:02}"));
                let new = NewGpuSession {
                    id: &id,
                    user_id: user.id,
                    course_id: course.id,
                    kind: SessionKind::Job,
                    pool: SessionPool::Local,
                    profile: "1g.10gb",
                    image: "slicehub/busybox:offline",
                    argv: &["true".to_string()],
                    token: &token,
                    deadline_at_ms: i64::MAX,
                };
                barrier.wait().await;
                store.insert_gpu_session(&new, 1).await
            })
        })
        .collect();
    let mut written = 0;
    for claim in claims {
        match claim.await.unwrap() {
            Ok(event) => {
                assert_eq!(event.state, SessionState::Requested);
                written += 1;
            }
            Err(CoreError::Conflict(message)) => assert_eq!(
                message,
                "you already have 1 session running or waiting (the limit is 1); stop one first"
            ),
            Err(other) => panic!("a claim over the limit is refused, not failed: {other}"),
        }
    }
    assert_eq!(written, 1, "exactly one claim is written");
    let live = store.gpu_sessions_in(SessionState::ACTIVE).await.unwrap();
    assert_eq!(live.len(), 1, "exactly one live session in the database");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sqlite() {
    let fresh = common::sqlite().await;
    fifty_simultaneous_claims_by_one_student_with_a_limit_of_one(fresh.store.clone()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn postgres() {
    if let Some(fresh) = common::postgres().await {
        fifty_simultaneous_claims_by_one_student_with_a_limit_of_one(fresh.store.clone()).await;
    }
}
