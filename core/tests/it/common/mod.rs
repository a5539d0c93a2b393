//! Fresh databases for tests: a SQLite file in a temp dir, or a new database on the
//! PostgreSQL server named by SLICEHUB_TEST_DATABASE_URL (scripts/test.sh starts one).

// Each test crate uses a part of these helpers.
#![allow(dead_code)]

use slicehub_core::store::Store;

pub struct Fresh {
    pub store: Store,
    /// What the store was opened with (a test may open the database beside it).
    pub url: String,
    _dir: Option<tempfile::TempDir>,
}

pub async fn sqlite() -> Fresh {
    let fresh = sqlite_unmigrated().await;
    fresh.store.migrate().await.expect("sqlite migrates");
    fresh
}

pub async fn sqlite_unmigrated() -> Fresh {
    let dir = tempfile::tempdir().unwrap();
    let url = format!(
        "sqlite://{}?mode=rwc",
        dir.path().join("nested/slicehub.db").display()
    );
    let store = Store::connect(&url, 5).await.expect("sqlite connects");
    Fresh {
        store,
        url,
        _dir: Some(dir),
    }
}

/// The PostgreSQL server URL, or None when the run explicitly skips PostgreSQL.
pub fn postgres_server() -> Option<String> {
    match std::env::var("SLICEHUB_TEST_DATABASE_URL") {
        Ok(url) if !url.is_empty() => Some(url),
        _ if std::env::var("SLICEHUB_SKIP_POSTGRES").as_deref() == Ok("1") => None,
        _ => panic!(
            "SLICEHUB_TEST_DATABASE_URL is not set: run the tests through scripts/test.sh, \
             or set SLICEHUB_SKIP_POSTGRES=1 to leave PostgreSQL out knowingly"
        ),
    }
}

pub async fn postgres() -> Option<Fresh> {
    let fresh = postgres_unmigrated().await?;
    fresh.store.migrate().await.expect("postgres migrates");
    Some(fresh)
}

pub async fn postgres_unmigrated() -> Option<Fresh> {
    let server = postgres_server()?;
    let admin = Store::connect(&server, 1)
        .await
        .expect("postgres server reachable");
    let name = format!(
        "slicehub_test_{}_{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    );
    admin
        .execute_admin(&format!("CREATE DATABASE {name}"))
        .await
        .expect("create database");
    admin.close().await;
    let (base, _) = server.rsplit_once('/').expect("URL has a database part");
    let url = format!("{base}/{name}");
    let store = Store::connect(&url, 5).await.expect("fresh db connects");
    Some(Fresh { store, url, _dir: None })
}

/// Runs one async test case against SQLite and against PostgreSQL.
#[macro_export]
macro_rules! on_both_databases {
    ($($case:ident),* $(,)?) => {
        $(
            mod $case {
                #[tokio::test]
                async fn sqlite() {
                    let fresh = $crate::common::sqlite().await;
                    super::$case(fresh.store.clone()).await;
                }
                #[tokio::test]
                async fn postgres() {
                    if let Some(fresh) = $crate::common::postgres().await {
                        super::$case(fresh.store.clone()).await;
                    }
                }
            }
        )*
    };
}
