//! A GPU used whole (no MIG) answers as a GPU with one instance that is always there: the
//! whole-GPU profile at start 0, whose device is the GPU itself.

use slicehub_mig::{Catalog, Placement, WHOLE_PROFILE_ID};

use super::MigInstance;
use crate::CoreError;

/// The one instance of a whole GPU, its device the GPU's own UUID.
pub fn whole_instance(gpu_index: u32, catalog: &Catalog, gpu_uuid: &str, memory_used_mib: Option<u64>) -> MigInstance {
    let profile = catalog.profiles().first();
    MigInstance {
        gpu_index,
        placement: Placement::new(WHOLE_PROFILE_ID, 0),
        profile_name: profile.map(|p| p.name.clone()).unwrap_or_default(),
        gpu_instance_id: 0,
        compute_instance_id: None,
        compute_instance_count: 1,
        mig_uuid: Some(gpu_uuid.to_string()),
        memory_used_mib,
        memory_total_mib: profile.map(|p| p.memory_mib),
    }
}

/// What creating a MIG instance on a whole GPU answers.
pub fn not_sliced(gpu_index: u32) -> CoreError {
    CoreError::InvalidRequest(format!(
        "GPU {gpu_index} is used whole (MIG is off or not offered): it has no MIG instances to create"
    ))
}

/// What destroying one answers: there is no such instance (MIG was turned off under it),
/// so whoever held it lets go, as after any instance that is gone.
pub fn no_instance(gpu_index: u32) -> CoreError {
    CoreError::NotFound(format!(
        "GPU {gpu_index} is used whole (MIG is off or not offered): it has no MIG instance to destroy"
    ))
}
