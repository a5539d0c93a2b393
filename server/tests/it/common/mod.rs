//! Helpers shared by the portal's test binaries.
pub mod answer;

use std::time::{SystemTime, UNIX_EPOCH};

/// A fresh PostgreSQL database for one portal, or None when the run leaves PostgreSQL out.
pub async fn postgres_database() -> Option<String> {
    let server = std::env::var("SLICEHUB_TEST_DATABASE_URL").ok().filter(|u| !u.is_empty())?;
    let admin = slicehub_core::store::Store::connect(&server, 1).await.expect("postgres reachable");
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default().as_nanos();
    let name = format!("slicehub_test_{}_{nanos}", std::process::id());
    admin.execute_admin(&format!("CREATE DATABASE {name}")).await.expect("create database");
    admin.close().await;
    let (base, _) = server.rsplit_once('/').unwrap();
    Some(format!("{base}/{name}"))
}

/// Runs `run` on SQLite (`None`), then on a fresh PostgreSQL database, unless the run
/// leaves PostgreSQL out on purpose (`SLICEHUB_SKIP_POSTGRES=1`).
pub async fn on_sqlite_then_postgres<F, Fut>(run: F)
where
    F: Fn(Option<String>) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    run(None).await;
    match postgres_database().await {
        Some(url) => run(Some(url)).await,
        None => assert_eq!(
            std::env::var("SLICEHUB_SKIP_POSTGRES").as_deref(),
            Ok("1"),
            "SLICEHUB_TEST_DATABASE_URL is not set: run the tests through scripts/test.sh"
        ),
    }
}

/// Every session as `slicehub session list --json` gives them.
pub fn listed_sessions(portal: &slicehub_end2end::Portal) -> Vec<serde_json::Value> {
    serde_json::from_str(&portal.cli(&["session", "list", "--json"], "")).expect("the session list as JSON")
}

/// The state of session `id` as `slicehub session list` gives it.
pub fn listed_state(portal: &slicehub_end2end::Portal, id: &str) -> String {
    let all = listed_sessions(portal);
    let session = all.iter().find(|s| s["id"] == id).expect("listed");
    session["state"].as_str().unwrap_or_default().to_string()
}
