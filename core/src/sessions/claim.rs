//! A student's claim: checked against the course's policy, quota and the GPUs or cluster,
//! written, then placed by the queue (or submitted to Slurm).

use super::model::{GpuSession, SessionKind, MAX_IMAGE_CHARS, MAX_PROFILE_CHARS};
use super::pools;
use super::service::Sessions;
use crate::auth::tokens::new_session_token;
use crate::courses::policy_of;
use crate::store::{NewGpuSession, Store};
use crate::CoreError;
use crate::{CourseId, UserId};

/// What a student asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimRequest {
    pub user_id: UserId,
    pub course_id: CourseId,
    pub profile: String,
    pub image: String,
    pub workload: Workload,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Workload {
    Notebook,
    /// The command as argv; it is never handed to a shell.
    Job(Vec<String>),
}

impl Sessions {
    /// Records the claim, places it on a slice now if one is free (otherwise it waits in
    /// the queue) and starts launching it in the background. The caller has already been
    /// authorized to launch in the course.
    pub async fn claim(&self, request: ClaimRequest) -> Result<GpuSession, CoreError> {
        check_claim_text(&request)?;
        self.wait_recovered().await?;
        let store = &self.ctx.store;
        let policy = policy_of(store, &self.ctx.config, request.course_id).await?;
        if !policy.allows_image(&request.image) {
            return Err(CoreError::InvalidRequest(format!(
                "this course does not allow the image {:?}; allowed: {}",
                request.image,
                policy.images.join(", ")
            )));
        }
        let slices = crate::quotas::compute_slices(&request.profile);
        if !policy.allows_profile(&request.profile) && slices > policy.max_slices {
            return Err(CoreError::InvalidRequest(format!(
                "this course lets one student take at most {} compute slices at once; {} has {slices} (ask your instructor)",
                policy.max_slices, request.profile
            )));
        }
        if !policy.allows_profile(&request.profile) {
            return Err(CoreError::InvalidRequest(format!(
                "this course does not allow the profile {:?}; allowed: {}",
                request.profile,
                policy.profiles.join(", ")
            )));
        }
        let now = self.now_ms();
        let budget = crate::quotas::budget_at(store, &policy, request.course_id, request.user_id, now).await?;
        if let Some(budget) = budget {
            if !self.budget_starts(&budget, &request.profile) {
                return Err(CoreError::InvalidRequest(format!(
                    "Not enough slice-hours left to run a {} for {} minutes: {}.",
                    request.profile,
                    self.ctx.config.quotas.min_launch_minutes,
                    budget.summary()
                )));
            }
        }
        let code = course_code(store, request.course_id).await?;
        let pool = pools::pool_for_course(&self.ctx.config, &code);
        pools::pool(pool).require_profile(self, &request.profile).await?;
        let (kind, argv) = match &request.workload {
            Workload::Notebook => (SessionKind::Notebook, Vec::new()),
            Workload::Job(argv) if argv.is_empty() || argv[0].trim().is_empty() => {
                return Err(CoreError::InvalidRequest(
                    "a training job needs a command to run".into(),
                ))
            }
            Workload::Job(argv) => (SessionKind::Job, argv.clone()),
        };
        let id = super::ids::new_session_id()?;
        let token = new_session_token()?;
        let deadline = super::lifecycle::deadline_at_claim(now, policy.max_minutes);
        let new = NewGpuSession {
            id: &id,
            user_id: request.user_id,
            course_id: request.course_id,
            kind,
            pool,
            profile: &request.profile,
            image: &request.image,
            argv: &argv,
            token: &token,
            deadline_at_ms: deadline,
        };
        let sharing = pools::pool(pool).hold_course_share(self, request.course_id, &code, &request.profile).await?;
        let event = store
            .insert_gpu_session(&new, policy.max_sessions)
            .await?;
        drop(sharing);
        self.ctx.publish(Some(event));
        pools::pool(pool).take_claim(self, &id, policy.max_minutes).await?;
        self.session(&id).await
    }

    /// Refuses a profile no GPU offers, naming those they do.
    pub(super) async fn require_known_profile(&self, profile: &str) -> Result<(), CoreError> {
        let known = self.known_profiles().await?;
        if known.iter().any(|k| k == profile) {
            return Ok(());
        }
        Err(CoreError::InvalidRequest(format!(
            "no GPU here offers the profile {:?}; there are {}",
            crate::auth::validate::excerpt(profile),
            known.join(", ")
        )))
    }

    /// Whether `budget` pays for the shortest start of `profile` (`quotas.min_launch_minutes`):
    /// the rule a claim is refused by, and what the launch card shows before one is made.
    pub fn budget_starts(&self, budget: &crate::quotas::Budget, profile: &str) -> bool {
        let minutes = i64::from(self.ctx.config.quotas.min_launch_minutes);
        budget.affords(profile, minutes)
    }
}

/// A claim's text before anything else looks at it: a bounded profile and image on one
/// line, and a command whose words hold no control character but line breaks and tabs.
fn check_claim_text(request: &ClaimRequest) -> Result<(), CoreError> {
    use crate::auth::validate::{check_text, Lines};
    check_text("the profile", &request.profile, MAX_PROFILE_CHARS, Lines::One).map_err(CoreError::InvalidRequest)?;
    check_text("the image", &request.image, MAX_IMAGE_CHARS, Lines::One).map_err(CoreError::InvalidRequest)?;
    if let Workload::Job(argv) = &request.workload {
        for word in argv {
            check_text("the command", word, crate::argv::MAX_COMMAND_BYTES, Lines::Many).map_err(CoreError::InvalidRequest)?;
        }
    }
    Ok(())
}

/// The course's code (Slurm pools are chosen by course).
async fn course_code(store: &Store, course_id: CourseId) -> Result<String, CoreError> {
    Ok(store
        .course_by_id(course_id)
        .await?
        .ok_or_else(|| CoreError::NotFound(format!("there is no course {course_id}")))?
        .code)
}
