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
        // Live ones first, then the recent ended ones: two reads that each seek the state
        // index, where one ordered by liveness walked every session ever asked for.
        let (over, live): (Vec<SessionState>, Vec<SessionState>) = q.states.iter().copied().partition(|s| s.is_final());
        let mut found = self.search_part(q, &live, None, q.limit).await?;
        let left = q.limit - found.len() as i64;
        if left > 0 {
            found.extend(self.search_part(q, &over, Some(q.since_ms), left).await?);
        }
        Ok(found)
    }

    /// The live sessions in `states` the search names, or (`asked_since`) those over that
    /// were asked for since then.
    async fn search_part(
        &self,
        q: &SessionSearch,
        states: &[SessionState],
        asked_since: Option<i64>,
        limit: i64,
    ) -> Result<Vec<GpuSession>, CoreError> {
        if states.is_empty() {
            return Ok(Vec::new());
        }
        let part = match asked_since {
            None => "s.live = 1",
            Some(_) => "s.live = 0 AND s.requested_at >= $5",
        };
        let sql = format!(
            "{SELECT} WHERE ($1 = 0 OR s.course_id = $1) AND ($2 = '' OR lower(u.username) = lower($2))
               AND ($3 = '' OR s.gpu_uuid = $3) AND s.state IN ({}) AND {part}
             ORDER BY s.requested_at DESC, s.id LIMIT $4",
            in_list(states)
        );
        let mut query = sqlx::query(&sql)
            .bind(q.course_id.map_or(0, |c| c.0))
            .bind(q.username.clone())
            .bind(q.gpu_uuid.clone())
            .bind(limit);
        if let Some(since) = asked_since {
            query = query.bind(since);
        }
        let rows = query.fetch_all(self.pool()).await?;
        rows.iter().map(session_from).collect()
    }
}
