//! The usage ledger: one row per session that got a slice, opened before its container
//! starts and closed exactly once (`usage_rollups.rs` closes it).

use serde::Serialize;

use super::{now_ms, Store};
use crate::sessions::GpuSession;
use crate::CoreError;
use crate::{CourseId, UserId};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, sqlx::FromRow)]
pub struct UsageRow {
    pub session_id: String,
    pub user_id: UserId,
    pub course_id: CourseId,
    pub gpu_uuid: String,
    pub profile: String,
    pub placement: String,
    pub image: String,
    pub kind: String,
    #[sqlx(rename = "started_at")]
    pub started_at_ms: i64,
    #[sqlx(rename = "ended_at")]
    pub ended_at_ms: Option<i64>,
    pub end_reason: Option<String>,
}

impl Store {
    /// Opens the session's usage interval now; a second call changes nothing.
    pub async fn open_usage(&self, session: &GpuSession) -> Result<(), CoreError> {
        let Some(placement) = &session.placement else {
            return Err(CoreError::InvalidRequest(format!(
                "session {} holds no slice to count",
                session.id
            )));
        };
        self.open_usage_on(session, &placement.gpu_uuid, &placement.label).await
    }

    /// [`Store::open_usage`] on a slice the portal did not place: `gpu` and `placement`
    /// say where it is (`slurm:NODE`, `job 12 on NODE`).
    pub async fn open_usage_on(&self, session: &GpuSession, gpu: &str, placement: &str) -> Result<(), CoreError> {
        let exists: Option<(String,)> =
            sqlx::query_as("SELECT session_id FROM usage_ledger WHERE session_id = $1")
                .bind(&session.id)
                .fetch_optional(self.pool())
                .await?;
        if exists.is_some() {
            return Ok(());
        }
        sqlx::query(
            "INSERT INTO usage_ledger (session_id, user_id, course_id, gpu_uuid, profile,
                                       placement, image, kind, started_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
        )
        .bind(&session.id)
        .bind(session.user_id)
        .bind(session.course_id)
        .bind(gpu)
        .bind(&session.profile)
        .bind(placement)
        .bind(&session.image)
        .bind(session.kind.as_str())
        .bind(now_ms())
        .execute(self.pool())
        .await?;
        Ok(())
    }

    /// Intervals still open whose session is over (left by a crash between the two writes).
    pub async fn open_usage_of_final_sessions(&self) -> Result<Vec<(String, i64, String)>, CoreError> {
        let rows: Vec<(String, Option<i64>, String)> = sqlx::query_as(
            "SELECT u.session_id, s.ended_at, s.reason FROM usage_ledger u
             JOIN gpu_sessions s ON s.id = u.session_id
             WHERE u.ended_at IS NULL AND s.live = 0",
        )
        .fetch_all(self.pool())
        .await?;
        Ok(rows
            .into_iter()
            .map(|(id, ended, reason)| (id, ended.unwrap_or_else(now_ms), reason))
            .collect())
    }

    /// Sessions whose usage interval is open.
    pub async fn open_usage_ids(&self) -> Result<Vec<String>, CoreError> {
        let rows: Vec<(String,)> =
            sqlx::query_as("SELECT session_id FROM usage_ledger WHERE ended_at IS NULL")
                .fetch_all(self.pool())
                .await?;
        Ok(rows.into_iter().map(|(id,)| id).collect())
    }

    pub async fn usage_rows(&self) -> Result<Vec<UsageRow>, CoreError> {
        Ok(sqlx::query_as(
            "SELECT session_id, user_id, course_id, gpu_uuid, profile, placement, image, kind,
                    started_at, ended_at, end_reason FROM usage_ledger ORDER BY started_at",
        )
        .fetch_all(self.pool())
        .await?)
    }
}
