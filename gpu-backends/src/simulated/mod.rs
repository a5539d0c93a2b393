//! GPUs that exist only in configuration, for machines with no NVIDIA driver. They answer
//! like NVML: the same catalogs, the same errors, instances that survive a restart.

mod atomic_file;
mod state;
#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use slicehub_mig::{Catalog, Layout, Placement};

use slicehub_core::gpu::mig_rules::check_create;
use slicehub_core::gpu::whole::{no_instance, not_sliced, whole_instance};
use slicehub_core::gpu::{
    parse_inventory, BackendKind, GpuBackend, GpuHealth, GpuInfo, GpuUtilization, MigInstance,
    SimulatedModel,
};
use slicehub_core::CoreError;
use state::{InstanceRecord, Instances};

/// The state file's name inside `data_dir`.
pub const SIMULATED_STATE_FILE: &str = "simulated-gpus.json";

pub(super) struct SimulatedGpu {
    info: GpuInfo,
    model: SimulatedModel,
}

pub struct SimulatedBackend {
    spec: String,
    gpus: Vec<SimulatedGpu>,
    state_path: PathBuf,
    /// The state file's content as last read or written.
    instances: Mutex<Instances>,
}

impl SimulatedBackend {
    /// The inventory `spec` (e.g. `1 x A100-40GB, 2 x H100-80GB`) with the instances recorded
    /// in `state_path`. Reads the file if it exists and writes nothing until an instance is
    /// created or destroyed.
    pub fn open(spec: &str, state_path: impl Into<PathBuf>) -> Result<Self, CoreError> {
        let inventory = parse_inventory(spec).map_err(CoreError::Gpu)?;
        let spec = spec.trim().to_string();
        let gpus: Vec<SimulatedGpu> = inventory
            .iter()
            .flat_map(|entry| std::iter::repeat_n(entry.model, entry.count as usize))
            .enumerate()
            .map(|(index, model)| SimulatedGpu {
                info: gpu_info(index as u32, &model),
                model,
            })
            .collect();
        let state_path = state_path.into();
        let instances = state::load(&state_path, &gpus, &spec)?;
        Ok(SimulatedBackend {
            spec,
            gpus,
            state_path,
            instances: Mutex::new(instances),
        })
    }

    pub fn state_path(&self) -> &Path {
        &self.state_path
    }

    fn gpu(&self, gpu_index: u32) -> Result<&SimulatedGpu, CoreError> {
        self.gpus.get(gpu_index as usize).ok_or_else(|| {
            CoreError::NotFound(format!(
                "there is no GPU {gpu_index} (the simulated inventory `{}` has {})",
                self.spec,
                self.gpus.len()
            ))
        })
    }

    /// The instances as the state file has them now: another process (the CLI beside a
    /// running portal) may have changed them, as another process may on real hardware.
    fn current(&self) -> Result<MutexGuard<'_, Instances>, CoreError> {
        // The guarded value is replaced only after a successful write or read, so a panic
        // while it was held cannot have left it half-changed.
        let mut guard = self
            .instances
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        *guard = state::load(&self.state_path, &self.gpus, &self.spec)?;
        Ok(guard)
    }
}

fn gpu_info(index: u32, model: &SimulatedModel) -> GpuInfo {
    GpuInfo {
        index,
        // Stable across restarts, so state keyed by UUID survives them.
        uuid: format!("GPU-simulated-{index:02}-{}", model.key().to_lowercase()),
        name: model.product_name.to_string(),
        memory_mib: model.memory_mib,
        mig_mode: model.mig_mode,
        mig_mode_pending: model.mig_mode,
    }
}

fn describe(catalog: &Catalog, records: &[InstanceRecord]) -> String {
    Layout::from(
        records
            .iter()
            .map(InstanceRecord::placement)
            .collect::<Vec<_>>(),
    )
    .describe(catalog)
}

/// The smallest GPU-instance id not in use, from 1, as NVML hands them out.
fn free_gpu_instance_id(records: &[InstanceRecord]) -> u32 {
    (1..)
        .find(|id| records.iter().all(|r| r.gpu_instance_id != *id))
        .unwrap_or(u32::MAX)
}

fn instance(index: u32, gpu: &SimulatedGpu, record: &InstanceRecord) -> MigInstance {
    let profile = gpu.model.catalog.profile_by_id(record.profile_id).ok();
    let suffix = gpu.info.uuid.strip_prefix("GPU-").unwrap_or(&gpu.info.uuid);
    MigInstance {
        gpu_index: index,
        placement: record.placement(),
        profile_name: profile.map(|p| p.name.clone()).unwrap_or_default(),
        gpu_instance_id: record.gpu_instance_id,
        compute_instance_id: Some(record.compute_instance_id),
        compute_instance_count: 1,
        mig_uuid: Some(format!(
            "MIG-{suffix}-{}-{}",
            record.gpu_instance_id, record.compute_instance_id
        )),
        memory_used_mib: Some(0),
        memory_total_mib: profile.map(|p| p.memory_mib),
    }
}

impl GpuBackend for SimulatedBackend {
    fn kind(&self) -> BackendKind {
        BackendKind::Simulated
    }

    fn describe(&self) -> String {
        format!("simulated: {}", self.spec)
    }

    fn list_gpus(&self) -> Result<Vec<GpuInfo>, CoreError> {
        Ok(self.gpus.iter().map(|g| g.info.clone()).collect())
    }

    fn catalog(&self, gpu_index: u32) -> Result<Catalog, CoreError> {
        Ok(self.gpu(gpu_index)?.model.catalog.clone())
    }

    fn instances(&self, gpu_index: u32) -> Result<Vec<MigInstance>, CoreError> {
        let gpu = self.gpu(gpu_index)?;
        if gpu.model.catalog.is_whole() {
            return Ok(vec![whole_instance(gpu_index, gpu.model.catalog, &gpu.info.uuid, Some(0))]);
        }
        let all = self.current()?;
        Ok(all[gpu_index as usize]
            .iter()
            .map(|r| instance(gpu_index, gpu, r))
            .collect())
    }

    fn create_instance(
        &self,
        gpu_index: u32,
        placement: Placement,
    ) -> Result<MigInstance, CoreError> {
        let gpu = self.gpu(gpu_index)?;
        if gpu.model.catalog.is_whole() {
            return Err(not_sliced(gpu_index));
        }
        let mut all = self.current()?;
        let current = &all[gpu_index as usize];
        let existing: Vec<Placement> = current.iter().map(InstanceRecord::placement).collect();
        check_create(gpu_index, gpu.model.catalog, &existing, placement)?;
        let record = InstanceRecord {
            profile_id: placement.profile_id,
            start: placement.start,
            gpu_instance_id: free_gpu_instance_id(current),
            // The only compute instance of a GPU instance gets id 0 on NVML too.
            compute_instance_id: 0,
        };
        let mut next = all.clone();
        let list = &mut next[gpu_index as usize];
        list.push(record);
        list.sort_by_key(|r| (r.start, r.profile_id));
        state::save(&self.state_path, &self.gpus, &next)?;
        *all = next;
        Ok(instance(gpu_index, gpu, &record))
    }

    fn destroy_instance(&self, gpu_index: u32, placement: Placement) -> Result<(), CoreError> {
        let gpu = self.gpu(gpu_index)?;
        if gpu.model.catalog.is_whole() {
            return Err(no_instance(gpu_index));
        }
        let mut all = self.current()?;
        let current = &all[gpu_index as usize];
        let Some(position) = current.iter().position(|r| r.placement() == placement) else {
            let catalog = gpu.model.catalog;
            return Err(CoreError::NotFound(format!(
                "GPU {gpu_index} has no MIG instance {} (it has: {})",
                placement.describe(catalog),
                describe(catalog, current)
            )));
        };
        let mut next = all.clone();
        next[gpu_index as usize].remove(position);
        state::save(&self.state_path, &self.gpus, &next)?;
        *all = next;
        Ok(())
    }

    fn utilization(&self, gpu_index: u32) -> Result<GpuUtilization, CoreError> {
        self.gpu(gpu_index)?;
        Ok(GpuUtilization::default())
    }

    fn health(&self, gpu_index: u32) -> Result<GpuHealth, CoreError> {
        self.gpu(gpu_index)?;
        Ok(GpuHealth::from_problems(Vec::new()))
    }
}
