//! The administrator's share of the GPUs one course may take (`limits.course_share_percent`):
//! a course's sessions, running and waiting, hold at most that part of the compute slices
//! of the GPUs that take sessions, so one course cannot fill the fleet for every other.
//! During a lab the course booked, the slices it booked come on top of its share.

use super::service::Sessions;
use super::model::{SessionPool, SessionState};
use crate::quotas::{milli_slices, per_milli_text, weights::MILLI};
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
            .map(|gpu| {
                let catalog = &gpu.catalog;
                match catalog.profiles().first() {
                    // A GPU used whole or in shares counts its weight; a MIG GPU its 7 slices.
                    Some(p) if catalog.is_whole() => milli_slices(&p.name) * i64::from(p.max_instances),
                    _ => catalog.profiles().iter().map(|p| i64::from(p.compute_slices) * MILLI).max().unwrap_or(0),
                }
            })
            .sum();
        let now = self.now_ms();
        let booked: i64 = self
            .bookings()
            .await?
            .iter()
            .filter(|b| b.row.course_id == course_id && b.windows().any(|(from, until)| from <= now && now < until))
            .map(|b| milli_slices(&b.row.profile) * b.row.slices)
            .sum();
        let cap = (fleet * percent / 100).max(MILLI) + booked;
        let held: i64 = self
            .ctx
            .store
            .gpu_sessions_in(SessionState::ACTIVE)
            .await?
            .iter()
            .filter(|s| s.course_id == course_id && s.pool == SessionPool::Local)
            .map(|s| milli_slices(&s.profile))
            .sum();
        let wanted = milli_slices(profile);
        if held + wanted <= cap {
            return Ok(Some(one_at_a_time));
        }
        if wanted > cap {
            return Err(CoreError::InsufficientResources(format!(
                "A {profile} needs {} compute slices, more than {course_code} may hold at once ({}: {percent}% of these GPUs, the administrator's share per course); choose a smaller size.",
                per_milli_text(wanted),
                per_milli_text(cap)
            )));
        }
        Err(CoreError::InsufficientResources(format!(
            "{course_code} already holds or waits for {} of its {} compute slices ({percent}% of these GPUs, the administrator's share per course); a {profile} needs {}. Start again when a session of the course ends.",
            per_milli_text(held),
            per_milli_text(cap),
            per_milli_text(wanted)
        )))
    }
}
