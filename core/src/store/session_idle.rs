//! When each running session was last active and the idle warning it holds (migration 0011).

use std::collections::HashMap;

use super::flag::Flag;
use super::Store;
use crate::CoreError;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IdleRow {
    pub last_active_at: i64,
    /// The warning's stop; `None`: no warning.
    pub stops_at: Option<i64>,
    /// The stop comes early because students wait for the session's size.
    pub early: bool,
    /// False: a job the course only reports.
    pub stops: bool,
}

/// [`IdleRow`] as the table holds it, with its session's id: flags as 0 or 1.
#[derive(sqlx::FromRow)]
struct IdleColumns {
    session_id: String,
    last_active_at: i64,
    stops_at: Option<i64>,
    #[sqlx(try_from = "i64")]
    early: Flag,
    #[sqlx(try_from = "i64")]
    stops: Flag,
}

impl From<IdleColumns> for (String, IdleRow) {
    fn from(c: IdleColumns) -> (String, IdleRow) {
        let row = IdleRow { last_active_at: c.last_active_at, stops_at: c.stops_at, early: c.early.0, stops: c.stops.0 };
        (c.session_id, row)
    }
}

impl Store {
    /// The idle state of every session that has one, by session id.
    pub async fn idle_rows(&self) -> Result<HashMap<String, IdleRow>, CoreError> {
        let rows: Vec<IdleColumns> =
            sqlx::query_as("SELECT session_id, last_active_at, stops_at, early, stops FROM session_idle")
                .fetch_all(self.pool())
                .await?;
        Ok(rows.into_iter().map(<(String, IdleRow)>::from).collect())
    }

    pub async fn idle_row(&self, session_id: &str) -> Result<Option<IdleRow>, CoreError> {
        let row: Option<IdleColumns> =
            sqlx::query_as("SELECT session_id, last_active_at, stops_at, early, stops FROM session_idle WHERE session_id = $1")
                .bind(session_id)
                .fetch_optional(self.pool())
                .await?;
        Ok(row.map(|row| <(String, IdleRow)>::from(row).1))
    }

    pub async fn save_idle(&self, session_id: &str, row: &IdleRow) -> Result<(), CoreError> {
        sqlx::query(
            "INSERT INTO session_idle (session_id, last_active_at, stops_at, early, stops)
             VALUES ($1, $2, $3, $4, $5)
             ON CONFLICT (session_id) DO UPDATE SET last_active_at = excluded.last_active_at,
                 stops_at = excluded.stops_at, early = excluded.early, stops = excluded.stops",
        )
        .bind(session_id)
        .bind(row.last_active_at)
        .bind(row.stops_at)
        .bind(i64::from(row.early))
        .bind(i64::from(row.stops))
        .execute(self.pool())
        .await?;
        Ok(())
    }

    /// Writes `row` only if the session's idle state is still `before` (what the pass read):
    /// a "Keep it running" written meanwhile wins. True when written.
    pub async fn save_idle_if_unchanged(&self, session_id: &str, before: Option<IdleRow>, row: &IdleRow) -> Result<bool, CoreError> {
        let done = match before {
            None => sqlx::query(
                "INSERT INTO session_idle (session_id, last_active_at, stops_at, early, stops)
                 VALUES ($1, $2, $3, $4, $5) ON CONFLICT (session_id) DO NOTHING",
            ),
            Some(_) => sqlx::query(
                "UPDATE session_idle SET last_active_at = $2, stops_at = $3, early = $4, stops = $5
                 WHERE session_id = $1 AND last_active_at = $6 AND COALESCE(stops_at, -1) = $7",
            ),
        }
        .bind(session_id)
        .bind(row.last_active_at)
        .bind(row.stops_at)
        .bind(i64::from(row.early))
        .bind(i64::from(row.stops));
        let done = match before {
            None => done,
            Some(b) => done.bind(b.last_active_at).bind(b.stops_at.unwrap_or(-1)),
        }
        .execute(self.pool())
        .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Forgets the idle state of sessions that are over.
    pub async fn forget_idle_of_ended(&self) -> Result<(), CoreError> {
        sqlx::query(
            "DELETE FROM session_idle WHERE EXISTS
             (SELECT 1 FROM gpu_sessions s WHERE s.id = session_idle.session_id AND s.state IN ('ended', 'failed'))",
        )
        .execute(self.pool())
        .await?;
        Ok(())
    }
}
