//! The administrator's share of the GPUs one course may take (`limits.course_share_percent`):
//! a course's sessions, running and waiting, hold at most that part of the compute slices
//! of the GPUs that take sessions, so one course cannot fill the fleet for every other.
//! During a lab the course booked, the slices it booked come on top of its share.

use super::service::Sessions;
use super::model::{SessionPool, SessionState};
use crate::quotas::compute_slices;
use crate::CoreError;
use crate::CourseId;

impl Sessions {
    /// Refuses, with words, a local claim of `profile` that would take the course past its
    /// share. When a share is set, the answer holds `course_claims` until the caller has
    /// recorded the claim, so classmates claiming at once cannot pass it together.
    pub(super) async fn require_course_share(
        &self,
        course_id: CourseId,
        course_code: &str,
        profile: &str,
    ) -> Result<Option<tokio::sync::MutexGuard<'_, ()>>, CoreError> {
        let percent = i64::from(self.ctx.config.limits.course_share_percent);
        if percent >= 100 {
            return Ok(None);
        }
        let one_at_a_time = self.ctx.course_claims.lock().await;
        let fleet: i64 = self
            .fleet_now()
            .await?
            .iter()
            .map(|gpu| gpu.catalog.profiles().iter().map(|p| i64::from(p.compute_slices)).max().unwrap_or(0))
            .sum();
        let now = self.now_ms();
        let booked: i64 = self
            .bookings()
            .await?
            .iter()
            .filter(|b| b.row.course_id == course_id && b.windows().any(|(from, until)| from <= now && now < until))
            .map(|b| compute_slices(&b.row.profile) * b.row.slices)
            .sum();
        let cap = (fleet * percent / 100).max(1) + booked;
        let held: i64 = self
            .ctx
            .store
            .gpu_sessions_in(SessionState::ACTIVE)
            .await?
            .iter()
            .filter(|s| s.course_id == course_id && s.pool == SessionPool::Local)
            .map(|s| compute_slices(&s.profile))
            .sum();
        let wanted = compute_slices(profile);
        if held + wanted <= cap {
            return Ok(Some(one_at_a_time));
        }
        if wanted > cap {
            return Err(CoreError::InsufficientResources(format!(
                "A {profile} needs {wanted} compute slices, more than {course_code} may hold at once ({cap}: {percent}% of these GPUs, the administrator's share per course); choose a smaller size."
            )));
        }
        Err(CoreError::InsufficientResources(format!(
            "{course_code} already holds or waits for {held} of its {cap} compute slices ({percent}% of these GPUs, the administrator's share per course); a {profile} needs {wanted}. Start again when a session of the course ends."
        )))
    }
}
