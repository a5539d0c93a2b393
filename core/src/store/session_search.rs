//! Every course's sessions as the operations page filters them.

use super::gpu_sessions::{in_list, session_from, SELECT};
use super::Store;
use crate::sessions::{GpuSession, SessionState};
use crate::CoreError;
use crate::CourseId;

/// Sessions in `states` that are live or were asked for since `since_ms`, narrowed by
/// course, user and GPU where those are set; live ones first, newest first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionSearch {
    pub course_id: Option<CourseId>,
    pub username: String,
    pub gpu_uuid: String,
    pub states: Vec<SessionState>,
    pub since_ms: i64,
    pub limit: i64,
}

impl Store {
    pub async fn search_sessions(&self, q: &SessionSearch) -> Result<Vec<GpuSession>, CoreError> {
        if q.states.is_empty() {
            return Ok(Vec::new());
        }
        let rows = sqlx::query(&format!(
            "{SELECT} WHERE ($1 = 0 OR s.course_id = $1) AND ($2 = '' OR lower(u.username) = lower($2))
               AND ($3 = '' OR s.gpu_uuid = $3) AND s.state IN ({}) AND (s.live = 1 OR s.requested_at >= $4)
             ORDER BY s.live DESC, s.requested_at DESC, s.id LIMIT $5",
            in_list(&q.states)
        ))
        .bind(q.course_id.map_or(0, |c| c.0))
        .bind(q.username.clone())
        .bind(q.gpu_uuid.clone())
        .bind(q.since_ms)
        .bind(q.limit)
        .fetch_all(self.pool())
        .await?;
        rows.iter().map(session_from).collect()
    }
}
