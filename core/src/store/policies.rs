//! What each course lets its students run.

use super::{now_ms, Store};
use crate::CoreError;

/// A course's stored policy; lists as written (comma-separated).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyRow {
    pub allowed_images: String,
    pub allowed_profiles: String,
    pub max_session_minutes: i64,
}

impl Store {
    pub async fn course_policy(&self, course_id: i64) -> Result<Option<PolicyRow>, CoreError> {
        let row: Option<(String, String, i64)> = sqlx::query_as(
            "SELECT allowed_images, allowed_profiles, max_session_minutes FROM course_policies
             WHERE course_id = $1",
        )
        .bind(course_id)
        .fetch_optional(self.pool())
        .await?;
        Ok(row.map(|(allowed_images, allowed_profiles, max_session_minutes)| PolicyRow {
            allowed_images,
            allowed_profiles,
            max_session_minutes,
        }))
    }

    pub async fn set_course_policy(&self, course_id: i64, policy: &PolicyRow) -> Result<(), CoreError> {
        let mut tx = self.begin_write().await?;
        sqlx::query("DELETE FROM course_policies WHERE course_id = $1")
            .bind(course_id)
            .execute(&mut *tx)
            .await?;
        sqlx::query(
            "INSERT INTO course_policies (course_id, allowed_images, allowed_profiles,
                                          max_session_minutes, updated_at)
             VALUES ($1, $2, $3, $4, $5)",
        )
        .bind(course_id)
        .bind(&policy.allowed_images)
        .bind(&policy.allowed_profiles)
        .bind(policy.max_session_minutes)
        .bind(now_ms())
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(())
    }
}
