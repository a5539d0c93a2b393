//! MIG instances the portal made for sessions that are over but that are still on a
//! dynamic GPU: left by a process that stopped a session while another one was creating
//! its instance, or by a crash between creating and recording. An instance an admin made
//! (at a placement the portal never created one at) is never touched.

use slicehub_mig::Placement;

use super::manager::Sessions;
use crate::fleet::{self, GpuMode};
use crate::CoreError;

impl Sessions {
    /// Destroys every instance on a dynamic GPU that no session holds and that the portal
    /// once created there. Runs under the allocation lock, so no placement can claim one
    /// while it goes. Returns how many were destroyed.
    pub(super) async fn destroy_leftover_instances(&self) -> Result<usize, CoreError> {
        let _placing = self.inner.allocation.lock().await;
        let _instances = self.inner.instances.lock().await;
        let store = &self.inner.store;
        let held = store.held_slices().await?;
        let gpus = self.inner.gpus.clone();
        let fleet_now = tokio::task::spawn_blocking(move || {
            let mut out = Vec::new();
            for info in gpus.list_gpus()? {
                let instances = gpus.instances(info.index)?;
                out.push((info, instances));
            }
            Ok::<_, CoreError>(out)
        })
        .await
        .map_err(|e| CoreError::Gpu(format!("GPU call crashed: {e}")))??;
        let mut destroyed = 0;
        for (info, instances) in fleet_now {
            if fleet::mode(store, &info.uuid).await? != GpuMode::Dynamic {
                continue;
            }
            for instance in instances {
                let at = instance.placement;
                let is_held = held
                    .iter()
                    .any(|h| h.gpu_uuid == info.uuid && Placement::new(h.profile_id, h.start) == at);
                if is_held || !store.portal_created_instance_at(&info.uuid, at.profile_id, at.start).await? {
                    continue;
                }
                let gpus = self.inner.gpus.clone();
                let index = info.index;
                let gone = tokio::task::spawn_blocking(move || gpus.destroy_instance(index, at))
                    .await
                    .map_err(|e| CoreError::Gpu(format!("GPU call crashed: {e}")))?;
                match gone {
                    Ok(()) => {
                        tracing::info!(gpu = index, instance = ?at, "destroyed a MIG instance no session holds");
                        destroyed += 1;
                    }
                    Err(e) => tracing::warn!(gpu = index, instance = ?at, error = %e, "leftover MIG instance not destroyed yet"),
                }
            }
        }
        Ok(destroyed)
    }
}
