//! MIG instances the portal made that are still on a dynamic GPU with nobody using them:
//! left by a process that stopped a session while another one was creating its instance,
//! by a crash between creating and recording, or made ahead of a booked window that is
//! over. An instance an admin made (at a placement the portal never created one at) is
//! never touched.

use std::collections::HashSet;

use slicehub_mig::Placement;

use super::booked_instances::BookedPlacement;

use crate::sessions::service::Sessions;
use crate::fleet::{self, GpuMode};
use crate::CoreError;

impl Sessions {
    /// Destroys every instance on a dynamic GPU that no session holds, no open booked
    /// window keeps (`kept`, [`Sessions::booked_placements_now`]), and that the portal once
    /// created there. Runs under the allocation lock, so no placement can claim one while
    /// it goes. Returns how many were destroyed.
    pub(super) async fn destroy_leftover_instances(&self, kept: &HashSet<BookedPlacement>) -> Result<usize, CoreError> {
        let _placing = self.ctx.allocation.lock().await;
        let _instances = self.ctx.instances.lock().await;
        let store = &self.ctx.store;
        let held = store.held_slices().await?;
        let mut prepared = store.prepared_instances().await?;
        let fleet_now = self.instances_now().await?;
        let mut destroyed = 0;
        for (info, instances) in &fleet_now {
            if fleet::mode(store, &info.uuid).await? != GpuMode::Dynamic {
                continue;
            }
            for instance in instances {
                let at = instance.placement;
                let is_held = held
                    .iter()
                    .any(|h| h.gpu_uuid == info.uuid && Placement::new(h.profile_id, h.start) == at);
                if is_held || kept.contains(&(info.uuid.clone(), at)) {
                    continue;
                }
                let was_prepared = prepared.contains(&(info.uuid.clone(), at.profile_id, at.start));
                if !was_prepared && !store.portal_created_instance_at(&info.uuid, at.profile_id, at.start).await? {
                    continue;
                }
                let index = info.index;
                let gone = self.ctx.on_gpus(move |gpus| gpus.destroy_instance(index, at)).await;
                match gone {
                    Ok(()) => {
                        tracing::info!(gpu = index, instance = ?at, "destroyed a MIG instance no session holds");
                        destroyed += 1;
                        if was_prepared {
                            // At once: an admin may make an instance here before the next pass.
                            store.forget_prepared_instance(&info.uuid, at.profile_id, at.start).await?;
                            prepared.retain(|p| *p != (info.uuid.clone(), at.profile_id, at.start));
                        }
                    }
                    Err(e) => tracing::warn!(gpu = index, instance = ?at, error = %e, "leftover MIG instance not destroyed yet"),
                }
            }
        }
        // A prepared instance that is gone and no longer kept needs no record.
        let present = |uuid: &str, profile: u32, start: u8| {
            fleet_now.iter().any(|(info, instances)| {
                info.uuid == uuid && instances.iter().any(|i| i.placement == Placement::new(profile, start))
            })
        };
        prepared.retain(|(uuid, profile, start)| {
            !present(uuid, *profile, *start) && !kept.contains(&(uuid.clone(), Placement::new(*profile, *start)))
        });
        for (uuid, profile, start) in prepared {
            store.forget_prepared_instance(&uuid, profile, start).await?;
        }
        Ok(destroyed)
    }
}
