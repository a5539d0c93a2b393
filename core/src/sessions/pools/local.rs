//! This host's GPUs: the portal's own allocator places the claim (or it waits in the
//! portal's queue) and the portal starts its container. A course's share of these GPUs
//! is `course_share.rs`.

use std::collections::HashSet;

use async_trait::async_trait;

use super::SlicePool;
use crate::sessions::model::SessionState;
use crate::sessions::service::Sessions;
use crate::CoreError;
use crate::CourseId;

pub(in crate::sessions) struct LocalPool;

#[async_trait]
impl SlicePool for LocalPool {
    async fn require_profile(&self, sessions: &Sessions, profile: &str) -> Result<(), CoreError> {
        sessions.require_known_profile(profile).await
    }

    async fn hold_course_share<'a>(
        &self,
        sessions: &'a Sessions,
        course_id: CourseId,
        course_code: &str,
        profile: &str,
    ) -> Result<Option<tokio::sync::MutexGuard<'a, ()>>, CoreError> {
        sessions.require_course_share(course_id, course_code, profile).await
    }

    async fn take_claim(&self, sessions: &Sessions, id: &str, _limit_minutes: i64) -> Result<(), CoreError> {
        // The claim is written: from here on it waits for its turn whatever the GPUs
        // answer now (the next pass places it), rather than reporting an error for a
        // session that exists. The pass launches what it places.
        if let Err(e) = sessions.serve_queue(Some(id)).await {
            tracing::warn!(session = %id, error = %e, "claim written but not placed yet; the next pass tries again");
        }
        Ok(())
    }

    async fn waiting_profiles(&self, sessions: &Sessions) -> Result<HashSet<String>, CoreError> {
        Ok(sessions
            .ctx
            .store
            .waiting_claims()
            .await?
            .into_iter()
            .filter(|c| c.state == SessionState::Queued.as_str())
            .map(|c| c.profile)
            .collect())
    }

    fn runs_here(&self) -> bool {
        true
    }

    fn reports_job_activity(&self) -> bool {
        true
    }
}
