//! Two migrations were changed after databases had applied them (0003: a comment; 0012:
//! `slurm_node` added). sqlx refuses a database whose recorded checksum differs from the
//! file, so a portal migrated at those commits would no longer start. Each such database
//! is caught up here, before the migrations run: what the edit added is applied and the
//! recorded checksum becomes today's. Migrations are never edited again.

use sqlx::migrate::Migrator;

use super::DbKind;
use crate::CoreError;

struct Edited {
    version: i64,
    /// SHA-384 of the file as first committed, in hex.
    earlier: &'static str,
    /// What the edit added to the schema: columns of `gpu_sessions`, each with the
    /// statement that adds it.
    catch_up: &'static [(&'static str, &'static str)],
}

const SLURM_NODE: &[(&str, &str)] = &[("slurm_node", "ALTER TABLE gpu_sessions ADD COLUMN slurm_node TEXT")];
/// PostgreSQL says "if not exists" itself, which also holds against a portal starting beside
/// this one (SQLite takes the write lock for the whole catch-up instead).
const SLURM_NODE_PG: &[(&str, &str)] = &[("slurm_node", "ALTER TABLE gpu_sessions ADD COLUMN IF NOT EXISTS slurm_node TEXT")];
const EARLIER_0012: &str = "4678cb543d6a11fc16922a552aba660945aa7fdfad4d8d34b8fbbf3dc0a3b3bc69d308b94abf5cfa6b1971277bccbf92";

const SQLITE: &[Edited] = &[
    Edited {
        version: 3,
        earlier: "e1262c69c3290a99f7c0829b58ff6433e2c8c97f867199b3898775fda3e62ff831abcb6d4b5735270126cdff2ec4da77",
        catch_up: &[],
    },
    Edited { version: 12, earlier: EARLIER_0012, catch_up: SLURM_NODE },
];

const POSTGRES: &[Edited] = &[
    Edited {
        version: 3,
        earlier: "49c7aff41c63a875c8152748e31196036425e370dbf4d0baef3dcdc5c328574fcef4e9f1f86ff9544e6d59beba2b7ea6",
        catch_up: &[],
    },
    Edited { version: 12, earlier: EARLIER_0012, catch_up: SLURM_NODE_PG },
];

pub(super) async fn catch_up_edited(pool: &sqlx::AnyPool, kind: DbKind, migrator: &Migrator) -> Result<(), CoreError> {
    let (edited, has_table) = match kind {
        DbKind::Sqlite => (SQLITE, "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = '_sqlx_migrations'"),
        DbKind::Postgres => (
            POSTGRES,
            "SELECT COUNT(*) FROM information_schema.tables WHERE table_name = '_sqlx_migrations' AND table_schema = current_schema()",
        ),
    };
    let (tables,): (i64,) = sqlx::query_as(has_table).fetch_one(pool).await?;
    if tables == 0 {
        return Ok(());
    }
    for edit in edited {
        let Some(today) = migrator.iter().find(|m| m.version == edit.version) else { continue };
        let has_column = match kind {
            DbKind::Sqlite => "SELECT COUNT(*) FROM pragma_table_info('gpu_sessions') WHERE name = $1",
            DbKind::Postgres => {
                "SELECT COUNT(*) FROM information_schema.columns WHERE table_name = 'gpu_sessions' AND column_name = $1 AND table_schema = current_schema()"
            }
        };
        // Read and changed in one transaction (on SQLite holding the write lock from the
        // start), so of two portals starting at once one catches up and the other finds it
        // done.
        let mut tx = match kind {
            DbKind::Sqlite => pool.begin_with("BEGIN IMMEDIATE").await?,
            DbKind::Postgres => pool.begin().await?,
        };
        let recorded: Option<(Vec<u8>,)> = sqlx::query_as("SELECT checksum FROM _sqlx_migrations WHERE version = $1")
            .bind(edit.version)
            .fetch_optional(&mut *tx)
            .await?;
        if recorded.is_none_or(|(recorded,)| hex::encode(&recorded) != edit.earlier) {
            continue;
        }
        for (column, statement) in edit.catch_up {
            // Added by hand already, or by a portal starting beside this one.
            let (present,): (i64,) = sqlx::query_as(has_column).bind(*column).fetch_one(&mut *tx).await?;
            if present == 0 {
                sqlx::query(statement).execute(&mut *tx).await?;
            }
        }
        sqlx::query("UPDATE _sqlx_migrations SET checksum = $1 WHERE version = $2")
            .bind(today.checksum.to_vec())
            .bind(edit.version)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        tracing::info!(version = edit.version, "caught up a migration edited after it was applied");
    }
    Ok(())
}
