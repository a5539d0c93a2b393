//! What a backup and a restore need of the database itself: a consistent copy of a SQLite
//! database taken while the portal writes, its check, and whether a restore target is empty.
//! (PostgreSQL is copied with its own `pg_dump`, by the CLI.)

use std::path::Path;

use sqlx::Connection;

use super::{DbKind, Store};
use crate::CoreError;

impl Store {
    pub fn is_sqlite(&self) -> bool {
        self.kind == DbKind::Sqlite
    }

    /// SQLite: the whole database as one file at `path` (which must not exist), consistent
    /// while others go on writing (`VACUUM INTO`), then checked.
    pub async fn copy_sqlite_into(&self, path: &Path) -> Result<(), CoreError> {
        let target = path.to_str().ok_or_else(|| CoreError::InvalidRequest(format!("{} is not a UTF-8 path", path.display())))?;
        sqlx::query("VACUUM INTO $1").bind(target).execute(self.pool()).await?;
        sqlite_file_is_sound(path).await
    }

    /// Whether the database has no tables yet: the only kind a restore writes into.
    pub async fn has_no_tables(&self) -> Result<bool, CoreError> {
        let sql = match self.kind {
            DbKind::Sqlite => "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table'",
            // pg_tables lists every table, not only those this user may read.
            DbKind::Postgres => "SELECT COUNT(*) FROM pg_catalog.pg_tables WHERE schemaname = current_schema()",
        };
        let tables: i64 = sqlx::query_scalar(sql).fetch_one(self.pool()).await?;
        Ok(tables == 0)
    }
}

/// SQLite's own check of a database file (`PRAGMA integrity_check`), opened without
/// changing it.
pub async fn sqlite_file_is_sound(path: &Path) -> Result<(), CoreError> {
    let options = sqlx::sqlite::SqliteConnectOptions::new().filename(path).read_only(true);
    let mut connection = sqlx::SqliteConnection::connect_with(&options).await?;
    let verdict: String = sqlx::query_scalar("PRAGMA integrity_check").fetch_one(&mut connection).await?;
    connection.close().await?;
    match verdict.as_str() {
        "ok" => Ok(()),
        other => Err(CoreError::InvalidRequest(format!("{} is damaged: {other}", path.display()))),
    }
}
