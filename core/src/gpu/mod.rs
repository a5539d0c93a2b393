//! The GPU boundary: one trait, [`GpuBackend`]. Its implementations (NVML on real hardware,
//! a simulated fleet, a machine whose driver NVML cannot use) are the `slicehub-gpu` crate.
//!
//! Every method is synchronous and may block (NVML calls, a state-file write): async callers
//! go through [`on_gpus`] (off the runtime, with a time limit). Both backends answer with the same errors for the same
//! situations, so code tested against the simulated backend behaves the same on hardware.

mod blocking;
mod inventory;
pub mod mig_rules;
mod shares;
mod types;
pub mod whole;

pub use blocking::on_gpus;
pub use inventory::{parse_inventory, InventoryEntry, SimulatedModel};
pub use mig_rules::placement_by_name;
pub use shares::SharedGpus;
pub use whole::whole_instance;
pub use types::{BackendKind, GpuFallback, GpuHealth, GpuInfo, GpuProcess, GpuUtilization, MigInstance, MigMode};

pub use slicehub_mig::{Catalog, Placement, Profile, Shares, Sharing};

use crate::CoreError;

pub trait GpuBackend: Send + Sync {
    fn kind(&self) -> BackendKind;

    /// One line for logs and pages, e.g. `NVML, driver 580.65.06` or `simulated: 1 x A100-40GB`.
    fn describe(&self) -> String;

    fn list_gpus(&self) -> Result<Vec<GpuInfo>, CoreError>;

    /// The MIG profiles of GPU `gpu_index` with their placements: read from NVML on real
    /// hardware, the built-in catalog of the model when simulated.
    fn catalog(&self, gpu_index: u32) -> Result<Catalog, CoreError>;

    /// The GPU instances that exist on GPU `gpu_index` now, ordered by start.
    fn instances(&self, gpu_index: u32) -> Result<Vec<MigInstance>, CoreError>;

    /// Creates the GPU instance at exactly `placement` and one compute instance spanning it.
    /// A placement that is taken, not allowed, or over the GPU's limits is
    /// [`CoreError::InsufficientResources`]; a profile this GPU lacks is
    /// [`CoreError::InvalidRequest`].
    fn create_instance(
        &self,
        gpu_index: u32,
        placement: Placement,
    ) -> Result<MigInstance, CoreError>;

    /// Destroys the compute instances of the GPU instance at `placement`, then the GPU instance;
    /// nothing else. [`CoreError::NotFound`] when no instance is there.
    fn destroy_instance(&self, gpu_index: u32, placement: Placement) -> Result<(), CoreError>;

    /// Busy percentages where the GPU reports them (not with MIG enabled on most drivers).
    fn utilization(&self, gpu_index: u32) -> Result<GpuUtilization, CoreError>;

    /// Whether the GPU keeps GPM samples (Hopper and newer), which can tell each MIG
    /// instance's activity apart. The simulated backend has none.
    fn gpm_supported(&self, _gpu_index: u32) -> bool {
        false
    }

    /// How busy GPU `gpu_index` (or one of its MIG instances) was since the previous call
    /// about the same one, in percent of time its graphics engine was active; `None` on the
    /// first call or where the hardware keeps no such figure (no GPM).
    fn busy_since_last(&self, _gpu_index: u32, _instance: Option<&MigInstance>) -> Result<Option<u32>, CoreError> {
        Ok(None)
    }

    /// The processes using GPU `gpu_index`, with their memory and activity since the last
    /// call about it; empty where the backend cannot say (simulated GPUs).
    fn processes(&self, _gpu_index: u32) -> Result<Vec<GpuProcess>, CoreError> {
        Ok(Vec::new())
    }

    /// Whether GPU `gpu_index` is in exclusive-process compute mode (only one process, the
    /// MPS server on a GPU shared through MPS, may hold a context); `None` where the
    /// backend cannot say.
    fn exclusive_process(&self, _gpu_index: u32) -> Option<bool> {
        None
    }

    /// Problems the driver knows of cheaply (pages or rows waiting for retirement or remapping).
    fn health(&self, gpu_index: u32) -> Result<GpuHealth, CoreError>;

    /// GPUs the last [`GpuBackend::list_gpus`] left out because they could not be read (an
    /// XID, a pending reset), by index, with why.
    fn unreadable_gpus(&self) -> Vec<(u32, String)> {
        Vec::new()
    }

    /// The UUID of GPU `gpu_index`, if there is one (cheaper than a whole listing where the
    /// driver can ask one GPU).
    fn uuid_at(&self, gpu_index: u32) -> Result<Option<String>, CoreError> {
        Ok(self.list_gpus()?.into_iter().find(|g| g.index == gpu_index).map(|g| g.uuid))
    }
}

/// The index GPU `uuid` has now: indexes follow the bus order and change when a GPU is
/// removed or after a reboot, so a placement acts on its GPU by UUID. `NotFound` when this
/// backend has no such GPU (it is gone, or the placement was made by another backend).
/// `last_index` is where the GPU was when the placement was made: if the GPU at that index
/// cannot be read now, this may be it, and that is no answer yet.
pub fn index_of(backend: &dyn GpuBackend, uuid: &str, last_index: u32) -> Result<u32, CoreError> {
    // Mostly the GPU is still where it was: one question instead of a listing.
    if backend.uuid_at(last_index).ok().flatten().as_deref() == Some(uuid) {
        return Ok(last_index);
    }
    if let Some(gpu) = backend.list_gpus()?.into_iter().find(|g| g.uuid == uuid) {
        return Ok(gpu.index);
    }
    if let Some((index, why)) = backend.unreadable_gpus().into_iter().find(|(index, _)| *index == last_index) {
        return Err(CoreError::Gpu(format!("GPU {uuid} is not listed while GPU {index} cannot be read ({why})")));
    }
    Err(CoreError::NotFound(format!("no GPU {uuid} here (it is gone, or another GPU backend placed the slice)")))
}

/// The names of the profiles at least one GPU offers, in catalog order. A GPU that
/// cannot be read is left out (while another answers).
pub fn profile_names(backend: &dyn GpuBackend) -> Result<Vec<String>, CoreError> {
    let mut names: Vec<String> = Vec::new();
    let mut unreadable = None;
    let gpus = backend.list_gpus()?;
    for gpu in &gpus {
        let catalog = match backend.catalog(gpu.index) {
            Ok(catalog) => catalog,
            Err(e) => {
                unreadable = Some(e);
                continue;
            }
        };
        for profile in catalog.profiles() {
            if !names.contains(&profile.name) {
                names.push(profile.name.clone());
            }
        }
    }
    match unreadable {
        Some(e) if names.is_empty() => Err(e),
        _ => Ok(names),
    }
}
