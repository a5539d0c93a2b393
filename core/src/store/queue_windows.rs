//! Windows of memory slices kept for waiting sessions (mig/src/queue.rs).

use sqlx::FromRow;

use super::Store;
use crate::CoreError;
use crate::{CourseId, UserId};

/// The slices kept for one waiting session.
#[derive(Debug, Clone, PartialEq, Eq, FromRow)]
pub struct QueueWindow {
    pub session_id: String,
    pub gpu_uuid: String,
    pub mask: i64,
    pub from_at: i64,
    pub until_at: i64,
    pub first_from_at: i64,
}

impl Store {
    /// The windows of sessions still waiting (requested or queued).
    pub async fn queue_windows(&self) -> Result<Vec<QueueWindow>, CoreError> {
        Ok(sqlx::query_as(
            "SELECT w.session_id, w.gpu_uuid, w.mask, w.from_at, w.until_at, w.first_from_at
             FROM queue_windows w JOIN gpu_sessions s ON s.id = w.session_id
             WHERE s.state IN ('requested', 'queued')",
        )
        .fetch_all(self.pool())
        .await?)
    }

    /// Keeps (or moves) a session's window; the first latest start stays as first written.
    pub async fn keep_queue_window(
        &self,
        session_id: &str,
        gpu_uuid: &str,
        mask: u8,
        from_at: i64,
        until_at: i64,
    ) -> Result<(), CoreError> {
        sqlx::query(
            "INSERT INTO queue_windows (session_id, gpu_uuid, mask, from_at, until_at, first_from_at)
             VALUES ($1, $2, $3, $4, $5, $4)
             ON CONFLICT (session_id) DO UPDATE SET gpu_uuid = excluded.gpu_uuid,
                 mask = excluded.mask, from_at = excluded.from_at, until_at = excluded.until_at",
        )
        .bind(session_id)
        .bind(gpu_uuid)
        .bind(i64::from(mask))
        .bind(from_at)
        .bind(until_at)
        .execute(self.pool())
        .await?;
        Ok(())
    }

    /// Forgets the windows of sessions that no longer wait.
    pub async fn drop_stale_queue_windows(&self) -> Result<(), CoreError> {
        sqlx::query(
            "DELETE FROM queue_windows WHERE session_id NOT IN
             (SELECT id FROM gpu_sessions WHERE state IN ('requested', 'queued'))",
        )
        .execute(self.pool())
        .await?;
        Ok(())
    }
}

impl Store {
    /// How long the most recent sessions of each profile ran, newest first (at most
    /// `limit` rows in all, ended after `since_ms`).
    pub async fn recent_session_lengths(
        &self,
        since_ms: i64,
        limit: i64,
    ) -> Result<Vec<(String, i64)>, CoreError> {
        Ok(sqlx::query_as(
            "SELECT profile, ended_at - started_at FROM usage_ledger
             WHERE ended_at IS NOT NULL AND ended_at > $1 ORDER BY ended_at DESC LIMIT $2",
        )
        .bind(since_ms)
        .bind(limit)
        .fetch_all(self.pool())
        .await?)
    }
}

/// A session waiting for a slice, with only what the queue needs.
#[derive(Debug, Clone, PartialEq, Eq, FromRow)]
pub struct WaitingClaim {
    pub id: String,
    pub user_id: UserId,
    pub course_id: CourseId,
    pub state: String,
    pub profile: String,
    pub requested_at: i64,
    pub deadline_at: i64,
}

impl Store {
    pub async fn count_queued(&self) -> Result<i64, CoreError> {
        let (n,): (i64,) =
            sqlx::query_as("SELECT COUNT(*) FROM gpu_sessions WHERE state = 'queued' AND pool = ''")
                .fetch_one(self.pool())
                .await?;
        Ok(n)
    }

    /// Requested and queued sessions of this machine's GPUs, oldest request first (the
    /// order they are served in); Slurm orders its own.
    pub async fn waiting_claims(&self) -> Result<Vec<WaitingClaim>, CoreError> {
        Ok(sqlx::query_as(
            "SELECT id, user_id, course_id, state, profile, requested_at, deadline_at FROM gpu_sessions
             WHERE state IN ('requested', 'queued') AND pool = '' ORDER BY requested_at, id",
        )
        .fetch_all(self.pool())
        .await?)
    }
}
