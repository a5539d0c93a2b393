//! What each course lets its students run.

use super::flag::Flag;
use super::{now_ms, Store};
use crate::CoreError;
use crate::CourseId;

/// A course's stored policy; lists as written (comma-separated), `None` for "the
/// configured default" (limits) or "none" (quota, term dates).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyRow {
    pub allowed_images: String,
    pub allowed_profiles: String,
    pub max_session_minutes: i64,
    pub internet: bool,
    pub max_sessions: Option<i64>,
    pub max_slices: Option<i64>,
    pub quota_slice_minutes: Option<i64>,
    /// `week` or `term`.
    pub quota_period: String,
    pub reset_weekday: i64,
    pub reset_minute: i64,
    pub term_starts: Option<String>,
    pub term_ends: Option<String>,
    pub time_zone: String,
    /// Time in the course's booked lab windows is not charged to quotas.
    pub booked_time_free: bool,
    /// The idle policy as JSON; `None`: the defaults.
    pub idle_policy: Option<String>,
}

/// [`PolicyRow`] as the table holds it: its flags as 0 or 1.
#[derive(sqlx::FromRow)]
struct PolicyColumns {
    allowed_images: String,
    allowed_profiles: String,
    max_session_minutes: i64,
    #[sqlx(try_from = "i64")]
    internet: Flag,
    max_sessions: Option<i64>,
    max_slices: Option<i64>,
    quota_slice_minutes: Option<i64>,
    quota_period: String,
    reset_weekday: i64,
    reset_minute: i64,
    term_starts: Option<String>,
    term_ends: Option<String>,
    time_zone: String,
    #[sqlx(try_from = "i64")]
    booked_time_free: Flag,
    idle_policy: Option<String>,
}

impl From<PolicyColumns> for PolicyRow {
    fn from(c: PolicyColumns) -> PolicyRow {
        PolicyRow {
            allowed_images: c.allowed_images,
            allowed_profiles: c.allowed_profiles,
            max_session_minutes: c.max_session_minutes,
            internet: c.internet.0,
            max_sessions: c.max_sessions,
            max_slices: c.max_slices,
            quota_slice_minutes: c.quota_slice_minutes,
            quota_period: c.quota_period,
            reset_weekday: c.reset_weekday,
            reset_minute: c.reset_minute,
            term_starts: c.term_starts,
            term_ends: c.term_ends,
            time_zone: c.time_zone,
            booked_time_free: c.booked_time_free.0,
            idle_policy: c.idle_policy,
        }
    }
}

impl Store {
    pub async fn course_policy(&self, course_id: CourseId) -> Result<Option<PolicyRow>, CoreError> {
        let row: Option<PolicyColumns> = sqlx::query_as(
            "SELECT allowed_images, allowed_profiles, max_session_minutes, internet,
                    max_sessions, max_slices, quota_slice_minutes, quota_period,
                    reset_weekday, reset_minute, term_starts, term_ends, time_zone, booked_time_free, idle_policy
             FROM course_policies
             WHERE course_id = $1",
        )
        .bind(course_id)
        .fetch_optional(self.pool())
        .await?;
        Ok(row.map(PolicyRow::from))
    }

    pub async fn set_course_policy(&self, course_id: CourseId, policy: &PolicyRow) -> Result<(), CoreError> {
        let mut tx = self.begin_write().await?;
        sqlx::query("DELETE FROM course_policies WHERE course_id = $1")
            .bind(course_id)
            .execute(&mut *tx)
            .await?;
        sqlx::query(
            "INSERT INTO course_policies (course_id, allowed_images, allowed_profiles,
                                          max_session_minutes, internet, updated_at,
                                          max_sessions, max_slices, quota_slice_minutes,
                                          quota_period, reset_weekday, reset_minute,
                                          term_starts, term_ends, time_zone, booked_time_free, idle_policy)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)",
        )
        .bind(course_id)
        .bind(&policy.allowed_images)
        .bind(&policy.allowed_profiles)
        .bind(policy.max_session_minutes)
        .bind(i64::from(policy.internet))
        .bind(now_ms())
        .bind(policy.max_sessions)
        .bind(policy.max_slices)
        .bind(policy.quota_slice_minutes)
        .bind(&policy.quota_period)
        .bind(policy.reset_weekday)
        .bind(policy.reset_minute)
        .bind(&policy.term_starts)
        .bind(&policy.term_ends)
        .bind(&policy.time_zone)
        .bind(i64::from(policy.booked_time_free))
        .bind(&policy.idle_policy)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(())
    }
}
