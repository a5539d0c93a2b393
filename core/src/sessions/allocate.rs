//! Choosing a slice for a session: the pure allocator over every GPU as it is now (its
//! instances, plus placements held but not created yet), with the database as the final
//! word on who holds which memory slice.

use serde::Serialize;
use slicehub_mig::{allocate, Catalog, GpuState, Layout, MigError, Mode, Placement};

use super::manager::Sessions;
use super::model::{SessionState, SlicePlacement};
use crate::fleet::{self, GpuMode};
use crate::gpu::GpuInfo;
use crate::store::HeldSlice;
use crate::CoreError;

/// How many more sessions of a profile fit right now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProfileAvailability {
    pub profile: String,
    pub free: u32,
    /// Sessions of this profile waiting in the queue.
    pub queued: u32,
}

/// What [`Sessions::place`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Placed {
    /// The session holds a slice and is `allocating`.
    Yes,
    /// No slice of its profile is free; it is `queued`.
    NoRoom,
    /// It was no longer waiting (stopped, or placed by someone else).
    NotWaiting,
}

/// One GPU with everything a decision needs.
struct GpuNow {
    info: GpuInfo,
    catalog: Catalog,
    mode: Mode,
    layout: Layout,
    held: Vec<Placement>,
}

/// The GPUs as the pure allocator takes them.
fn allocator_states(fleet_now: &[GpuNow]) -> Vec<GpuState<'_>> {
    fleet_now
        .iter()
        .map(|g| GpuState {
            catalog: &g.catalog,
            mode: g.mode,
            layout: g.layout.clone(),
            held: g.held.clone(),
        })
        .collect()
}

impl Sessions {
    /// Reads every GPU that takes new sessions (not drained): its instances and mode, and
    /// the slices sessions hold.
    async fn fleet_now(&self) -> Result<Vec<GpuNow>, CoreError> {
        let held = self.inner.store.held_slices().await?;
        let gpus = self.inner.gpus.clone();
        let read = tokio::task::spawn_blocking(move || {
            let mut out = Vec::new();
            for info in gpus.list_gpus()? {
                let catalog = gpus.catalog(info.index)?;
                let instances = gpus.instances(info.index)?;
                out.push((info, catalog, instances));
            }
            Ok::<_, CoreError>(out)
        })
        .await
        .map_err(|e| CoreError::Gpu(format!("GPU call crashed: {e}")))??;
        let mut fleet_now = Vec::with_capacity(read.len());
        for (info, catalog, instances) in read {
            // A drained GPU takes no new session; those on it run to their end.
            if fleet::drained_by(&self.inner.store, &info.uuid).await?.is_some() {
                continue;
            }
            let mode = match fleet::mode(&self.inner.store, &info.uuid).await? {
                GpuMode::Dynamic => Mode::Dynamic,
                GpuMode::Static(_) => Mode::Static,
            };
            let mine: Vec<Placement> = held
                .iter()
                .filter(|h: &&HeldSlice| h.gpu_uuid == info.uuid)
                .map(|h| Placement::new(h.profile_id, h.start))
                .collect();
            let mut layout = Layout::new();
            for p in instances.iter().map(|i| i.placement).chain(mine.iter().copied()) {
                if !layout.contains(p) {
                    layout
                        .insert(&catalog, p)
                        .map_err(|e| CoreError::Gpu(format!("GPU {}: {e}", info.index)))?;
                }
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

    /// Places a requested or queued session on a free slice, holding it in the database.
    pub(super) async fn place(&self, id: &str) -> Result<Placed, CoreError> {
        let _one_at_a_time = self.inner.allocation.lock().await;
        let session = self.session(id).await?;
        if !matches!(session.state, SessionState::Requested | SessionState::Queued) {
            return Ok(Placed::NotWaiting);
        }
        let fleet_now = self.fleet_now().await?;
        let states = allocator_states(&fleet_now);
        let decision = match allocate(&states, &session.profile) {
            Ok(decision) => decision,
            Err(MigError::NoRoom { reason, .. }) => {
                if session.state == SessionState::Requested {
                    let detail = format!("no {} slice is free ({reason}); waiting in the queue", session.profile);
                    let event = self.inner.store.transition(id, SessionState::Queued, &detail).await?;
                    self.publish(event);
                }
                return Ok(Placed::NoRoom);
            }
            Err(e) => {
                self.fail(id, &format!("cannot place {}: {e}", session.profile)).await?;
                return Ok(Placed::NotWaiting);
            }
        };
        let gpu = &fleet_now[decision.gpu_index];
        let profile = gpu
            .catalog
            .profile_by_id(decision.placement.profile_id)
            .map_err(|e| CoreError::Gpu(e.to_string()))?;
        let mask = profile.mask_at(decision.placement.start).unwrap_or(0);
        let slices: Vec<u8> = (0..8u8).filter(|bit| mask & (1 << bit) != 0).collect();
        let placement = SlicePlacement {
            gpu_uuid: gpu.info.uuid.clone(),
            gpu_index: gpu.info.index,
            profile_id: decision.placement.profile_id,
            start: decision.placement.start,
            label: decision.placement.describe(&gpu.catalog),
        };
        let created = decision.action == slicehub_mig::Action::Create;
        let detail = format!("GPU {} slice {}: {}", gpu.info.index, placement.label, decision.explanation);
        let event = self
            .inner
            .store
            .hold_slice(id, &placement, &slices, created, &detail)
            .await?;
        Ok(if self.publish(event) {
            Placed::Yes
        } else {
            Placed::NotWaiting
        })
    }

    /// For each profile, how many more sessions would fit now and how many wait.
    pub async fn availability(
        &self,
        profiles: &[String],
    ) -> Result<Vec<ProfileAvailability>, CoreError> {
        let fleet_now = self.fleet_now().await?;
        let queued = self.inner.store.gpu_sessions_in(&[SessionState::Queued]).await?;
        let mut out = Vec::with_capacity(profiles.len());
        for profile in profiles {
            let mut states = allocator_states(&fleet_now);
            let mut free = 0u32;
            while free < 64 {
                let Ok(decision) = allocate(&states, profile) else { break };
                if states[decision.gpu_index].apply(&decision).is_err() {
                    break;
                }
                free += 1;
            }
            out.push(ProfileAvailability {
                profile: profile.clone(),
                free,
                queued: queued.iter().filter(|s| &s.profile == profile).count() as u32,
            });
        }
        Ok(out)
    }
}
