//! On dynamic GPUs the MIG instances of a booked lab window are created shortly before it
//! opens, so that its first students start at once (creating one takes about a second on
//! an H100). The portal writes down each one it prepares before creating it; once no
//! window keeps it and no session holds it, the leftover pass destroys it.

use std::collections::HashSet;

use slicehub_mig::{Layout, Placement};

use crate::sessions::service::Sessions;
use crate::fleet::{self, GpuMode};
use crate::gpu::{GpuInfo, MigInstance, MigMode};
use crate::CoreError;

/// How long before a window opens its instances are made.
pub const PREPARE_LEAD_MS: i64 = 5 * 60_000;

/// (GPU UUID, placement) of a slice kept by a booking.
pub(super) type BookedPlacement = (String, Placement);

impl Sessions {
    /// The slices of every booked window open now or opening within the lead.
    pub(super) async fn booked_placements_now(&self, now_ms: i64) -> Result<HashSet<BookedPlacement>, CoreError> {
        Ok(self
            .bookings()
            .await?
            .into_iter()
            .filter(|b| b.windows().any(|(from, until)| from - PREPARE_LEAD_MS <= now_ms && now_ms < until))
            .flat_map(|b| b.placements)
            .collect())
    }

    /// Every GPU that can be read with its MIG instances as the driver reports them now
    /// (one that cannot is left alone this pass).
    pub(super) async fn instances_now(&self) -> Result<Vec<(GpuInfo, Vec<MigInstance>)>, CoreError> {
        self.ctx.on_gpus(|gpus| {
            let mut out = Vec::new();
            // Only GPUs with MIG on have instances to make or remove; one used whole has none.
            for info in gpus.list_gpus()?.into_iter().filter(|g| g.mig_mode == MigMode::Enabled) {
                match gpus.instances(info.index) {
                    Ok(instances) => out.push((info, instances)),
                    Err(e) => tracing::warn!(gpu = info.index, error = %e, "GPU unreadable; its instances are left as they are"),
                }
            }
            Ok(out)
        })
        .await
    }

    /// Creates the missing instances of `wanted` (the windows open now or about to open,
    /// [`Sessions::booked_placements_now`]) on dynamic GPUs that are not drained, where
    /// nothing else occupies their slices. Returns how many were created.
    pub(super) async fn prepare_booked_instances(&self, wanted: &HashSet<BookedPlacement>) -> Result<usize, CoreError> {
        if wanted.is_empty() {
            return Ok(0);
        }
        let _placing = self.ctx.allocation.lock().await;
        let _instances = self.ctx.instances.lock().await;
        let store = &self.ctx.store;
        let held = store.held_slices().await?;
        let mut created = 0;
        for (info, instances) in self.instances_now().await? {
            let mine: Vec<Placement> = wanted.iter().filter(|(uuid, _)| *uuid == info.uuid).map(|(_, at)| *at).collect();
            if mine.is_empty()
                || fleet::mode(store, &info.uuid).await? != GpuMode::Dynamic
                || fleet::drained_by(store, &info.uuid).await?.is_some()
            {
                continue;
            }
            let index = info.index;
            let catalog = self.ctx.on_gpus(move |gpus| gpus.catalog(index)).await?;
            // What is there now: its instances and the slices placed but not created yet.
            let mut layout = Layout::new();
            let placed = held.iter().filter(|h| h.gpu_uuid == info.uuid).map(|h| Placement::new(h.profile_id, h.start));
            for p in instances.iter().map(|i| i.placement).chain(placed) {
                if !layout.contains(p) && layout.insert(&catalog, p).is_err() {
                    tracing::warn!(gpu = index, instance = ?p, "the GPU's instances overlap; no booked instance made");
                }
            }
            for at in mine {
                if layout.contains(at) || layout.insert(&catalog, at).is_err() {
                    continue;
                }
                store.record_prepared_instance(&info.uuid, at.profile_id, at.start).await?;
                let made = self.ctx.on_gpus(move |gpus| gpus.create_instance(index, at)).await;
                match made {
                    Ok(_) => {
                        tracing::info!(gpu = index, instance = ?at, "made a booked lab's MIG instance ahead of its window");
                        created += 1;
                    }
                    Err(e) => {
                        tracing::warn!(gpu = index, instance = ?at, error = %e, "booked MIG instance not made yet");
                        // Not made by the portal (perhaps someone else made one there first).
                        store.forget_prepared_instance(&info.uuid, at.profile_id, at.start).await?;
                    }
                }
            }
        }
        Ok(created)
    }
}
