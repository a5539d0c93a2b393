//! Stopping running sessions whose student has used up the course's slice-hour budget.

use std::collections::BTreeMap;

use crate::sessions::service::Sessions;
use crate::sessions::model::SessionState;
use crate::courses::policy_of;
use crate::quotas::budget_at;
use crate::CoreError;
use crate::{CourseId, UserId};

impl Sessions {
    /// Stops every running session of a student whose budget in the session's course is
    /// used up at `now_ms`; returns how many were stopped. The reconciler calls it with
    /// the clock's time on every pass.
    pub async fn enforce_quotas_at(&self, now_ms: i64) -> Result<usize, CoreError> {
        let store = &self.ctx.store;
        let mut students: BTreeMap<(CourseId, UserId), Vec<String>> = BTreeMap::new();
        for session in store.gpu_sessions_in(&[SessionState::Ready]).await? {
            students.entry((session.course_id, session.user_id)).or_default().push(session.id);
        }
        let mut stopped = 0;
        let mut policies = BTreeMap::new();
        for ((course_id, user_id), ids) in students {
            if !policies.contains_key(&course_id) {
                policies.insert(course_id, policy_of(store, &self.ctx.config, course_id).await?);
            }
            let policy = &policies[&course_id];
            let Some(budget) = budget_at(store, policy, course_id, user_id, now_ms).await? else {
                continue;
            };
            if !budget.exhausted() {
                continue;
            }
            let reason = format!("quota used up ({})", budget.summary());
            for id in ids {
                match self.ctx.stop(&id, &reason).await {
                    Ok(_) => stopped += 1,
                    Err(e) => tracing::warn!(session = %id, error = %e, "could not stop at the quota"),
                }
            }
        }
        Ok(stopped)
    }
}
