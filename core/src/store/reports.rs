//! The usage ledger read for reports: every interval that overlaps a period, streamed one
//! row at a time so a term of data never sits in memory.

use futures_util::TryStreamExt;

use super::Store;
use crate::CoreError;

/// One ledger row with the names a report shows and when its session was asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageSpan {
    pub session_id: String,
    pub user_id: i64,
    pub username: String,
    pub course_id: i64,
    pub course_code: String,
    pub gpu_uuid: String,
    pub profile: String,
    pub image: String,
    pub requested_at_ms: i64,
    pub started_at_ms: i64,
    pub ended_at_ms: Option<i64>,
    pub end_reason: Option<String>,
}

type SpanRow = (String, i64, String, i64, String, String, String, String, i64, i64, Option<i64>, Option<String>);

impl Store {
    /// Calls `each` for every ledger interval that overlaps `[from_ms, to_ms)`, limited to
    /// `courses` when given (an empty list matches nothing).
    pub async fn each_usage_span(
        &self,
        from_ms: i64,
        to_ms: i64,
        courses: Option<&[i64]>,
        mut each: impl FnMut(UsageSpan),
    ) -> Result<(), CoreError> {
        if courses.is_some_and(|c| c.is_empty()) {
            return Ok(());
        }
        let course_filter = match courses {
            Some(ids) => {
                let marks: Vec<String> = (0..ids.len()).map(|i| format!("${}", i + 3)).collect();
                format!(" AND u.course_id IN ({})", marks.join(", "))
            }
            None => String::new(),
        };
        let sql = format!(
            "SELECT u.session_id, u.user_id, us.username, u.course_id, c.code, u.gpu_uuid,
                    u.profile, u.image, s.requested_at, u.started_at, u.ended_at, u.end_reason
             FROM usage_ledger u
             JOIN gpu_sessions s ON s.id = u.session_id
             JOIN users us ON us.id = u.user_id
             JOIN courses c ON c.id = u.course_id
             WHERE u.started_at < $1 AND (u.ended_at IS NULL OR u.ended_at >= $2){course_filter}"
        );
        let mut query = sqlx::query_as::<_, SpanRow>(&sql).bind(to_ms).bind(from_ms);
        for id in courses.unwrap_or_default() {
            query = query.bind(*id);
        }
        let mut rows = query.fetch(self.pool());
        while let Some(r) = rows.try_next().await? {
            each(UsageSpan {
                session_id: r.0,
                user_id: r.1,
                username: r.2,
                course_id: r.3,
                course_code: r.4,
                gpu_uuid: r.5,
                profile: r.6,
                image: r.7,
                requested_at_ms: r.8,
                started_at_ms: r.9,
                ended_at_ms: r.10,
                end_reason: r.11,
            });
        }
        Ok(())
    }
}
