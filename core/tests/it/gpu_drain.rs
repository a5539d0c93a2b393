//! Draining a GPU on the real Docker engine, on SQLite and PostgreSQL: no new session is
//! placed on it (claims wait rather than land there), the sessions already on it run on,
//! and back in service it takes the waiting claim at once.


use std::time::Duration;

use crate::lab::lab;
use slicehub_core::fleet;
use slicehub_core::sessions::SessionState::{Queued, Ready};
use slicehub_core::store::Store;
use slicehub_core::UserId;

const LAUNCH: Duration = Duration::from_secs(30);

async fn a_drained_gpu_takes_no_new_session_and_keeps_its_own(store: Store) {
    let lab = lab(store, "2 x H100-80GB", |_| {}).await;
    let three_g = |user: UserId| {
        let mut claim = lab.job(user, &["sleep", "600"]);
        claim.profile = "3g.40gb".into();
        claim
    };
    let [ann, ben, cat, dan] = [lab.student("ann").await, lab.student("ben").await, lab.student("cat").await, lab.student("dan").await];
    let anns = lab.sessions.claim(three_g(ann)).await.unwrap();
    let anns = lab.until(&anns.id, &[Ready], LAUNCH).await;
    let drained = anns.placement.clone().unwrap().gpu_uuid;
    fleet::mark_drained(&lab.store, &drained, true, "admin").await.unwrap();
    assert_eq!(fleet::drained_by(&lab.store, &drained).await.unwrap().as_deref(), Some("admin"));

    // Two 3g fit on the other GPU; the third waits although the drained GPU has room.
    let bens = lab.sessions.claim(three_g(ben)).await.unwrap();
    let cats = lab.sessions.claim(three_g(cat)).await.unwrap();
    let dans = lab.sessions.claim(three_g(dan)).await.unwrap();
    for id in [&bens.id, &cats.id] {
        let s = lab.until(id, &[Ready], LAUNCH).await;
        assert_ne!(s.placement.unwrap().gpu_uuid, drained, "a new session landed on the drained GPU");
    }
    assert_eq!(lab.until(&dans.id, &[Queued], LAUNCH).await.state, Queued);
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(lab.sessions.session(&dans.id).await.unwrap().state, Queued, "still waiting");
    let free_3g = lab.sessions.availability(&["3g.40gb".to_string()]).await.unwrap();
    assert_eq!(free_3g[0].free, 0, "a drained GPU's room is not offered");

    // ann's session on the drained GPU goes on.
    let ann_now = lab.sessions.session(&anns.id).await.unwrap();
    assert_eq!(ann_now.state, Ready);
    assert!(lab.container_exists(ann_now.container.as_deref().unwrap()).await);

    // Back in service, the waiting claim is placed there.
    fleet::mark_drained(&lab.store, &drained, false, "admin").await.unwrap();
    assert_eq!(fleet::drained_by(&lab.store, &drained).await.unwrap(), None);
    lab.sessions.dispatch().await.unwrap();
    let dans = lab.until(&dans.id, &[Ready], LAUNCH).await;
    assert_eq!(dans.placement.unwrap().gpu_uuid, drained);
    let audit = lab.store.recent_audit(None, 10).await.unwrap();
    let actions: Vec<&str> = audit.iter().map(|a| a.action.as_str()).collect();
    assert!(actions.contains(&"gpu.drain") && actions.contains(&"gpu.undrain"), "{actions:?}");
    lab.clean_up().await;
}

on_both_databases!(a_drained_gpu_takes_no_new_session_and_keeps_its_own);
