//! Helpers shared by the portal's test binaries.

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
