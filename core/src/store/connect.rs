use std::sync::Once;
use std::time::Duration;

use sqlx::any::AnyPoolOptions;
use sqlx::migrate::Migrator;

use super::{DbKind, Store};
use crate::CoreError;

static SQLITE_MIGRATIONS: Migrator = sqlx::migrate!("../migrations/sqlite");
static POSTGRES_MIGRATIONS: Migrator = sqlx::migrate!("../migrations/postgres");

static DRIVERS: Once = Once::new();

impl Store {
    /// Opens a pool and checks one connection works. A SQLite file's directory is created.
    pub async fn connect(url: &str, max_connections: u32) -> Result<Store, CoreError> {
        DRIVERS.call_once(sqlx::any::install_default_drivers);
        let url_redacted = redact_url(url.split('?').next().unwrap_or(url));
        let kind = if url.starts_with("sqlite:") {
            DbKind::Sqlite
        } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            DbKind::Postgres
        } else {
            return Err(CoreError::Config(format!(
                "database URL {url_redacted} is neither sqlite:… nor postgres://…"
            )));
        };
        if kind == DbKind::Sqlite {
            if let Some(dir) = sqlite_path(url).and_then(|p| p.parent().map(|d| d.to_path_buf())) {
                if !dir.as_os_str().is_empty() {
                    std::fs::create_dir_all(&dir).map_err(|e| CoreError::DatabaseUnreachable {
                        url: url_redacted.clone(),
                        reason: format!("cannot create directory {}: {e}", dir.display()),
                    })?;
                }
            }
        }
        let pool = AnyPoolOptions::new()
            .max_connections(max_connections)
            .acquire_timeout(Duration::from_secs(5))
            .after_connect(move |conn, _meta| {
                Box::pin(async move {
                    if kind == DbKind::Sqlite {
                        // WAL lets readers run beside the writer; the busy timeout makes
                        // concurrent writers wait instead of failing at once.
                        sqlx::query("PRAGMA journal_mode = WAL")
                            .execute(&mut *conn)
                            .await?;
                        // In WAL mode NORMAL stays consistent after a crash and syncs at
                        // checkpoints instead of at every commit.
                        sqlx::query("PRAGMA synchronous = NORMAL")
                            .execute(&mut *conn)
                            .await?;
                        sqlx::query("PRAGMA busy_timeout = 5000")
                            .execute(&mut *conn)
                            .await?;
                        sqlx::query("PRAGMA foreign_keys = ON")
                            .execute(&mut *conn)
                            .await?;
                    }
                    Ok(())
                })
            })
            .connect(url)
            .await
            .map_err(|e| CoreError::DatabaseUnreachable {
                url: url_redacted.clone(),
                reason: e.to_string(),
            })?;
        Ok(Store {
            pool,
            kind,
            url_redacted,
            access_changes: Default::default(),
        })
    }

    /// Applies pending migrations. Each one runs in its own transaction, so a failure
    /// leaves the database at the last migration that succeeded.
    pub async fn migrate(&self) -> Result<(), CoreError> {
        let migrator = match self.kind {
            DbKind::Sqlite => &SQLITE_MIGRATIONS,
            DbKind::Postgres => &POSTGRES_MIGRATIONS,
        };
        super::edited_migrations::catch_up_edited(&self.pool, self.kind, migrator).await?;
        migrator
            .run(&self.pool)
            .await
            .map_err(|e| CoreError::Migration(e.to_string()))?;
        self.rebuild_usage_rollups_if_asked().await
    }

    /// The newest migration applied, e.g. `1 initial`.
    pub async fn schema_version(&self) -> Result<Option<String>, CoreError> {
        let row: Option<(i64, String)> = sqlx::query_as(
            "SELECT version, description FROM _sqlx_migrations WHERE success ORDER BY version DESC LIMIT 1",
        )
        .fetch_optional(&self.pool)
        .await?;
        Ok(row.map(|(v, d)| format!("{v} {d}")))
    }

    pub async fn ping(&self) -> Result<(), CoreError> {
        sqlx::query("SELECT 1").execute(&self.pool).await?;
        Ok(())
    }

    pub(crate) fn pool(&self) -> &sqlx::AnyPool {
        &self.pool
    }

    /// A transaction that will write. On SQLite it takes the write lock at once: a
    /// transaction that reads first and then writes could not wait for a busy writer
    /// (SQLite refuses the lock upgrade with "database is locked" instead).
    pub(crate) async fn begin_write(
        &self,
    ) -> Result<sqlx::Transaction<'static, sqlx::Any>, CoreError> {
        Ok(match self.kind {
            super::DbKind::Sqlite => self.pool.begin_with("BEGIN IMMEDIATE").await?,
            super::DbKind::Postgres => self.pool.begin().await?,
        })
    }
}

/// The file a `sqlite:` URL names (None for memory databases and other URLs).
pub fn sqlite_path(url: &str) -> Option<std::path::PathBuf> {
    let rest = url
        .strip_prefix("sqlite://")
        .or_else(|| url.strip_prefix("sqlite:"))?;
    let path = rest.split('?').next()?;
    (!path.is_empty() && path != ":memory:").then(|| path.into())
}

/// `postgres://user:secret@host/db` → `postgres://user:***@host/db`
///
/// Split by hand on the last `@`, not by a URL parser: a password as people type it
/// (`2024/secret`, `a#b`, `p@ss`) makes a parser end the credentials early and find none,
/// and the redaction must hold whatever the password holds.
pub fn redact_url(text: &str) -> String {
    let Some((scheme, rest)) = text.split_once("://") else {
        return text.to_string();
    };
    // The last @ of the whole text: an @ in a query makes the line read oddly, but a
    // password may hold a ? or a /, and must never show.
    let Some((credentials, host)) = rest.rsplit_once('@') else {
        return text.to_string();
    };
    match credentials.split_once(':') {
        Some((user, _)) => format!("{scheme}://{user}:***@{host}"),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_never_reach_messages() {
        assert_eq!(
            redact_url("postgres://u:s3cret@db:5432/x"),
            "postgres://u:***@db:5432/x"
        );
        for (url, secret) in [
            ("postgres://app:2024/secret@db/x", "secret"),
            ("postgres://app:1234#x@db/x", "1234"),
            ("postgres://app:p@ss@db/x", "ss"),
            ("postgres://app:p?ss@db/x", "ss"),
        ] {
            let shown = redact_url(url);
            assert!(!shown.contains(secret), "{shown}");
            assert!(shown.ends_with("@db/x"), "{shown}");
        }
        assert_eq!(
            redact_url("sqlite://data/slicehub.db"),
            "sqlite://data/slicehub.db"
        );
    }

    #[test]
    fn sqlite_paths_are_read_from_urls() {
        assert_eq!(
            sqlite_path("sqlite://data/x.db?mode=rwc"),
            Some("data/x.db".into())
        );
        assert_eq!(sqlite_path("sqlite::memory:"), None);
    }
}

impl Store {
    /// Runs one statement outside any migration, e.g. `CREATE DATABASE` for tests and setup.
    pub async fn execute_admin(&self, sql: &str) -> Result<(), CoreError> {
        sqlx::query(sql).execute(&self.pool).await?;
        Ok(())
    }
}
