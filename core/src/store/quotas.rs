//! What quotas read and write: usage intervals of one student and grants of extra time.

use std::collections::HashMap;

use super::Store;
use crate::CoreError;
use crate::{CourseId, UserId};

/// One session's time on a slice, as the usage ledger holds it.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct UsageInterval {
    pub user_id: UserId,
    pub profile: String,
    #[sqlx(rename = "started_at")]
    pub started_at_ms: i64,
    /// `None` while the session still runs.
    #[sqlx(rename = "ended_at")]
    pub ended_at_ms: Option<i64>,
}

impl Store {
    /// The student's intervals in the course that overlap `[from, until)`.
    pub async fn usage_intervals(
        &self,
        course_id: CourseId,
        user_id: UserId,
        from_ms: i64,
        until_ms: i64,
    ) -> Result<Vec<UsageInterval>, CoreError> {
        let rows = sqlx::query_as(&overlapping("course_id = $1 AND user_id = $2", "$3", "$4"))
            .bind(course_id)
            .bind(user_id)
            .bind(from_ms)
            .bind(until_ms)
            .fetch_all(self.pool())
            .await?;
        Ok(started_before(rows, until_ms))
    }

    /// Every student's intervals in the course that overlap `[from, until)`.
    pub async fn course_usage_intervals(
        &self,
        course_id: CourseId,
        from_ms: i64,
        until_ms: i64,
    ) -> Result<Vec<UsageInterval>, CoreError> {
        let rows = sqlx::query_as(&overlapping("course_id = $1", "$2", "$3"))
            .bind(course_id)
            .bind(from_ms)
            .bind(until_ms)
            .fetch_all(self.pool())
            .await?;
        Ok(started_before(rows, until_ms))
    }

    /// Extra slice-minutes granted in the course within `[from, until)`, per student.
    pub async fn course_granted_minutes(
        &self,
        course_id: CourseId,
        from_ms: i64,
        until_ms: i64,
    ) -> Result<HashMap<UserId, i64>, CoreError> {
        let rows: Vec<(UserId, Option<i64>)> = sqlx::query_as(
            "SELECT user_id, CAST(SUM(slice_minutes) AS BIGINT) FROM quota_grants
             WHERE course_id = $1 AND granted_at >= $2 AND granted_at < $3 GROUP BY user_id",
        )
        .bind(course_id)
        .bind(from_ms)
        .bind(until_ms)
        .fetch_all(self.pool())
        .await?;
        Ok(rows.into_iter().map(|(user, sum)| (user, sum.unwrap_or(0))).collect())
    }

    /// Extra slice-minutes granted to the student in the course within `[from, until)`.
    pub async fn granted_minutes(
        &self,
        course_id: CourseId,
        user_id: UserId,
        from_ms: i64,
        until_ms: i64,
    ) -> Result<i64, CoreError> {
        let (sum,): (Option<i64>,) = sqlx::query_as(
            "SELECT CAST(SUM(slice_minutes) AS BIGINT) FROM quota_grants
             WHERE course_id = $1 AND user_id = $2 AND granted_at >= $3 AND granted_at < $4",
        )
        .bind(course_id)
        .bind(user_id)
        .bind(from_ms)
        .bind(until_ms)
        .fetch_one(self.pool())
        .await?;
        Ok(sum.unwrap_or(0))
    }

    pub async fn add_quota_grant(
        &self,
        course_id: CourseId,
        user_id: UserId,
        slice_minutes: i64,
        reason: &str,
        granted_by: &str,
        granted_at_ms: i64,
    ) -> Result<(), CoreError> {
        sqlx::query(
            "INSERT INTO quota_grants (course_id, user_id, slice_minutes, reason, granted_by, granted_at)
             VALUES ($1, $2, $3, $4, $5, $6)",
        )
        .bind(course_id)
        .bind(user_id)
        .bind(slice_minutes)
        .bind(reason)
        .bind(granted_by)
        .bind(granted_at_ms)
        .execute(self.pool())
        .await?;
        Ok(())
    }
}

/// Ledger rows matching `filter` that overlap `[from, until)`, the two placeholders named,
/// but for open rows started at or after `until` ([`started_before`] drops those).
/// Ended and open rows are read apart so each part seeks the `(…, ended_at)` indexes:
/// "ended after `from` or still open" in one condition made both databases walk every
/// row the course or student ever had, and a start bound on the open rows made SQLite
/// seek by course and start, which is the course's whole history too.
fn overlapping(filter: &str, from: &str, until: &str) -> String {
    format!(
        "SELECT user_id, profile, started_at, ended_at FROM usage_ledger
         WHERE {filter} AND ended_at > {from} AND started_at < {until}
         UNION ALL
         SELECT user_id, profile, started_at, ended_at FROM usage_ledger
         WHERE {filter} AND ended_at IS NULL"
    )
}

fn started_before(mut rows: Vec<UsageInterval>, until_ms: i64) -> Vec<UsageInterval> {
    rows.retain(|r| r.started_at_ms < until_ms);
    rows
}
