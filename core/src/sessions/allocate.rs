//! Choosing a slice for a session: the pure allocator over every GPU as it is now (its
//! instances, plus placements held but not created yet), with the database as the final
//! word on who holds which memory slice.

use serde::Serialize;
use slicehub_mig::{place_now, Layout, Mode, Placement, Policy};

use std::sync::OnceLock;

use super::queue_now::{ExpectedPlan, GpuNow, QueueNow};
use super::queue_state::QueueEstimate;
use super::service::Sessions;
use crate::fleet::{self, GpuMode};
use crate::store::HeldSlice;
use crate::CoreError;
use crate::CourseId;

/// How many more sessions of a profile fit right now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProfileAvailability {
    pub profile: String,
    pub free: u32,
    /// Sessions of this profile waiting in the queue.
    pub queued: u32,
    /// When a claim made now would start, if none is free.
    pub wait: Option<QueueEstimate>,
    /// What a session of the profile is guaranteed, from the first GPU offering it.
    pub guarantees: Option<String>,
}

impl Sessions {
    /// Reads every GPU that takes new sessions (not drained): its instances and mode, and
    /// the slices sessions hold. A GPU that cannot be read, or whose instances overlap,
    /// sits this decision out (logged; its holds stay) while the others serve.
    pub(super) async fn fleet_now(&self) -> Result<Vec<GpuNow>, CoreError> {
        let held = self.ctx.store.held_slices().await?;
        let read = self.ctx.on_gpus(|gpus| {
            let mut out = Vec::new();
            for info in gpus.list_gpus()? {
                match gpus.catalog(info.index).and_then(|c| Ok((c, gpus.instances(info.index)?))) {
                    Ok((catalog, instances)) => out.push((info, catalog, instances)),
                    Err(e) => tracing::warn!(gpu = info.index, uuid = %info.uuid, error = %e, "GPU unreadable; it takes no session until it answers"),
                }
            }
            Ok(out)
        })
        .await?;
        let mut fleet_now = Vec::with_capacity(read.len());
        for (info, catalog, instances) in read {
            // A drained GPU takes no new session; those on it run to their end.
            if fleet::drained_by(&self.ctx.store, &info.uuid).await?.is_some() {
                continue;
            }
            // A whole GPU is a static GPU whose one instance is always there.
            let mode = match fleet::mode(&self.ctx.store, &info.uuid).await? {
                _ if catalog.is_whole() => Mode::Static,
                GpuMode::Dynamic => Mode::Dynamic,
                GpuMode::Static(_) => Mode::Static,
            };
            let mine: Vec<Placement> = held
                .iter()
                .filter(|h: &&HeldSlice| h.gpu_uuid == info.uuid)
                .map(|h| Placement::new(h.profile_id, h.start))
                .collect();
            let mut layout = Layout::new();
            let mut overlap = None;
            for p in instances.iter().map(|i| i.placement).chain(mine.iter().copied()) {
                if !layout.contains(p) {
                    if let Err(e) = layout.insert(&catalog, p) {
                        overlap = Some(e);
                        break;
                    }
                }
            }
            if let Some(e) = overlap {
                tracing::warn!(gpu = info.index, uuid = %info.uuid, error = %e, "GPU's instances overlap the portal's holds; it takes no session until they are sorted out");
                continue;
            }
            fleet_now.push(GpuNow {
                info,
                catalog,
                mode,
                layout,
                held: mine,
            });
        }
        Ok(fleet_now)
    }

    /// For each profile, how many more sessions with the instance's default time limit
    /// would start now and how many wait.
    pub async fn availability(
        &self,
        profiles: &[String],
    ) -> Result<Vec<ProfileAvailability>, CoreError> {
        let minutes = i64::from(self.ctx.config.sessions.max_minutes);
        self.availability_for(profiles, minutes, None, false).await
    }

    /// For each profile, how many more sessions of `max_minutes` would start now without
    /// pushing back a waiting one, how many wait, and (with `with_waits`, for profiles
    /// with none free) when a claim made now would start.
    pub async fn availability_for(
        &self,
        profiles: &[String],
        max_minutes: i64,
        course: Option<CourseId>,
        with_waits: bool,
    ) -> Result<Vec<ProfileAvailability>, CoreError> {
        let mut all = self.availability_per_course(profiles, &[(course, max_minutes)], with_waits).await?;
        Ok(all.pop().unwrap_or_default())
    }

    /// [`Sessions::availability_for`] for several (course, time limit) pairs, from one
    /// read of the GPUs and the queue.
    pub async fn availability_per_course(
        &self,
        profiles: &[String],
        courses: &[(Option<CourseId>, i64)],
        with_waits: bool,
    ) -> Result<Vec<Vec<ProfileAvailability>>, CoreError> {
        let queue = self.queue_now(with_waits).await?;
        Ok(self.availability_from(&queue, &OnceLock::new(), profiles, courses, with_waits))
    }

    /// [`Sessions::availability_per_course`] with waits, from the queue as last read for
    /// the launch form (see `shared_queue.rs`): what the launch form and waiting pages ask.
    pub async fn launch_availability(
        &self,
        profiles: &[String],
        courses: &[(Option<CourseId>, i64)],
    ) -> Result<Vec<Vec<ProfileAvailability>>, CoreError> {
        let shared = self.shared_queue().await?;
        Ok(self.availability_from(&shared.queue, &shared.plan, profiles, courses, true))
    }

    fn availability_from(
        &self,
        queue: &QueueNow,
        plan: &OnceLock<ExpectedPlan>,
        profiles: &[String],
        courses: &[(Option<CourseId>, i64)],
        with_waits: bool,
    ) -> Vec<Vec<ProfileAvailability>> {
        courses
            .iter()
            .map(|&(course, max_minutes)| self.availability_in(queue, plan, profiles, max_minutes, course, with_waits))
            .collect()
    }

    fn availability_in(
        &self,
        queue: &QueueNow,
        plan: &OnceLock<ExpectedPlan>,
        profiles: &[String],
        max_minutes: i64,
        course: Option<CourseId>,
        with_waits: bool,
    ) -> Vec<ProfileAvailability> {
        let hold_ms = self.hold_for_minutes(max_minutes);
        let windows = queue.windows_against(course);
        let mut out = Vec::with_capacity(profiles.len());
        for profile in profiles {
            let mut states = queue.states();
            let mut free = 0u32;
            while free < 64 {
                let Ok(decision) = place_now(
                    &states,
                    &windows,
                    profile,
                    queue.now_ms,
                    hold_ms,
                    Policy::default(),
                ) else {
                    break;
                };
                if states[decision.gpu_index].apply(&decision).is_err() {
                    break;
                }
                free += 1;
            }
            let wait = if with_waits && free == 0 {
                let plan = plan.get_or_init(|| self.expected(queue));
                self.wait_in(queue, plan, profile, hold_ms, course)
            } else {
                None
            };
            let guarantees = queue.fleet.iter().find_map(|gpu| {
                let p = gpu.catalog.profile_by_name(profile).ok()?;
                Some(gpu.catalog.guarantees(p))
            });
            out.push(ProfileAvailability {
                guarantees,
                profile: profile.clone(),
                free,
                queued: queue
                    .waiting
                    .iter()
                    .filter(|s| &s.profile == profile)
                    .count() as u32,
                wait,
            });
        }
        out
    }
}
