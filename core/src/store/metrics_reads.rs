//! What a metrics scrape counts, each as one grouped query.

use super::Store;
use crate::CoreError;

/// Live sessions of one state in one course.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct StateCount {
    /// The state's word, as stored (a row edited by hand is still counted).
    pub state: String,
    pub course: String,
    pub sessions: i64,
}

/// Claims of one profile waiting, and since when the oldest waits.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct QueueCount {
    pub profile: String,
    pub waiting: i64,
    pub oldest_requested_at: i64,
}

/// Slices of one profile held on one GPU.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct HeldCount {
    pub gpu_index: i64,
    pub profile: String,
    pub held: i64,
}

impl Store {
    /// The course code of every live session, by session id.
    pub async fn live_session_courses(&self) -> Result<std::collections::HashMap<String, String>, CoreError> {
        let rows: Vec<(String, String)> = sqlx::query_as(
            "SELECT s.id, c.code FROM gpu_sessions s JOIN courses c ON c.id = s.course_id WHERE s.live = 1",
        )
        .fetch_all(self.pool())
        .await?;
        Ok(rows.into_iter().collect())
    }

    pub async fn live_session_counts(&self) -> Result<Vec<StateCount>, CoreError> {
        Ok(sqlx::query_as(
            "SELECT s.state AS state, c.code AS course, COUNT(*) AS sessions
             FROM gpu_sessions s JOIN courses c ON c.id = s.course_id
             WHERE s.live = 1 GROUP BY c.code, s.state",
        )
        .fetch_all(self.pool())
        .await?)
    }

    pub async fn queue_counts(&self) -> Result<Vec<QueueCount>, CoreError> {
        Ok(sqlx::query_as(
            "SELECT profile, COUNT(*) AS waiting, MIN(requested_at) AS oldest_requested_at
             FROM gpu_sessions WHERE live = 1 AND state = 'queued' GROUP BY profile",
        )
        .fetch_all(self.pool())
        .await?)
    }

    pub async fn held_counts(&self) -> Result<Vec<HeldCount>, CoreError> {
        Ok(sqlx::query_as(
            "SELECT gpu_index, profile, COUNT(*) AS held
             FROM gpu_sessions WHERE released = 0 AND gpu_index IS NOT NULL
             GROUP BY gpu_index, profile",
        )
        .fetch_all(self.pool())
        .await?)
    }
}
