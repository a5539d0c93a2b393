//! A Slurm cluster: the claim becomes a job; Slurm keeps the queue and the placement, and
//! the watcher (`slurm_watch.rs`) follows the job.

use std::collections::HashSet;

use async_trait::async_trait;

use super::SlicePool;
use crate::sessions::service::Sessions;
use crate::CoreError;
use crate::CourseId;

pub(in crate::sessions) struct SlurmPool;

#[async_trait]
impl SlicePool for SlurmPool {
    async fn require_profile(&self, sessions: &Sessions, profile: &str) -> Result<(), CoreError> {
        let known = sessions.slurm_profiles().await?;
        if known.iter().any(|k| k == profile) {
            return Ok(());
        }
        Err(CoreError::InvalidRequest(format!(
            "no node of the Slurm cluster offers the profile {profile:?}; there are {}",
            known.join(", ")
        )))
    }

    async fn hold_course_share<'a>(
        &self,
        _sessions: &'a Sessions,
        _course_id: CourseId,
        _course_code: &str,
        _profile: &str,
    ) -> Result<Option<tokio::sync::MutexGuard<'a, ()>>, CoreError> {
        // The share is of this host's GPUs; the cluster's are shared by Slurm's own rules.
        Ok(None)
    }

    async fn take_claim(&self, sessions: &Sessions, id: &str, limit_minutes: i64) -> Result<(), CoreError> {
        sessions.submit_to_slurm(id, limit_minutes).await
    }

    async fn waiting_profiles(&self, sessions: &Sessions) -> Result<HashSet<String>, CoreError> {
        Ok(sessions.slurm_waits().into_values().map(|w| w.profile).collect())
    }

    fn runs_here(&self) -> bool {
        false
    }

    /// A job's only signal would be its slice, which no node reports yet.
    fn reports_job_activity(&self) -> bool {
        false
    }
}
