//! The simulated GPUs' MIG instances as stored in `data_dir/simulated-gpus.json`, so that a
//! restarted portal finds the instances it left, as it would on real hardware.
//!
//! ```json
//! {"version": 1, "gpus": [{"uuid": "GPU-simulated-00-h100-80gb", "model": "H100-80GB",
//!   "instances": [{"profile_id": 9, "start": 4, "gpu_instance_id": 1, "compute_instance_id": 0}]}]}
//! ```

use std::io;
use std::path::Path;

use serde::{Deserialize, Serialize};
use slicehub_mig::{Layout, Placement};

use super::atomic_file::write_atomically;
use super::SimulatedGpu;
use slicehub_core::CoreError;

const VERSION: u32 = 1;

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct StateFile {
    version: u32,
    gpus: Vec<GpuRecord>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct GpuRecord {
    uuid: String,
    model: String,
    instances: Vec<InstanceRecord>,
}

/// One GPU instance with its one compute instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct InstanceRecord {
    pub profile_id: u32,
    pub start: u8,
    pub gpu_instance_id: u32,
    pub compute_instance_id: u32,
}

impl InstanceRecord {
    pub fn placement(&self) -> Placement {
        Placement::new(self.profile_id, self.start)
    }
}

/// Instances per GPU, indexed like the inventory, each list ordered by start.
pub(super) type Instances = Vec<Vec<InstanceRecord>>;

/// Reads the state for `gpus`; no file means no instances. Never writes.
pub(super) fn load(path: &Path, gpus: &[SimulatedGpu], spec: &str) -> Result<Instances, CoreError> {
    let bad = |reason: String| CoreError::GpuStateFile {
        path: path.display().to_string(),
        reason,
    };
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(vec![Vec::new(); gpus.len()]),
        Err(e) => return Err(bad(format!("cannot be read: {e}"))),
    };
    let file: StateFile = serde_json::from_slice(&bytes)
        .map_err(|e| bad(format!("is not a valid state file: {e}")))?;
    if file.version != VERSION {
        return Err(bad(format!(
            "has version {}, this SliceHub reads version {VERSION}",
            file.version
        )));
    }
    let mut instances: Instances = vec![Vec::new(); gpus.len()];
    let mut seen = vec![false; gpus.len()];
    for record in file.gpus {
        let Some(index) = gpus.iter().position(|g| g.info.uuid == record.uuid) else {
            if record.instances.is_empty() {
                continue;
            }
            return Err(bad(format!(
                "lists {} MIG instance(s) on {}, which the simulated inventory `{spec}` does not \
                 have (was gpu.simulated changed?)",
                record.instances.len(),
                record.uuid
            )));
        };
        let gpu = &gpus[index];
        if std::mem::replace(&mut seen[index], true) {
            return Err(bad(format!("lists {} twice", record.uuid)));
        }
        if !record.model.eq_ignore_ascii_case(gpu.model.key()) {
            return Err(bad(format!(
                "says {} is a {}, the simulated inventory `{spec}` says {}",
                record.uuid,
                record.model,
                gpu.model.key()
            )));
        }
        let catalog = gpu.model.catalog;
        if catalog.is_whole() && !record.instances.is_empty() {
            return Err(bad(format!(
                "lists {} MIG instance(s) on {}, which the simulated inventory `{spec}` has with MIG off \
                 (turning MIG off destroys a GPU's instances: remove the file, or turn MIG on again)",
                record.instances.len(),
                record.uuid
            )));
        }
        Layout::from_placements(
            catalog,
            record.instances.iter().map(InstanceRecord::placement),
        )
        .map_err(|e| bad(format!("{} ({}): {e}", record.uuid, catalog.key())))?;
        let mut ids: Vec<u32> = record.instances.iter().map(|i| i.gpu_instance_id).collect();
        ids.sort_unstable();
        if ids.first() == Some(&0) || ids.windows(2).any(|w| w[0] == w[1]) {
            return Err(bad(format!(
                "{}: GPU-instance ids must be distinct and at least 1, found {ids:?}",
                record.uuid
            )));
        }
        let mut list = record.instances;
        list.sort_by_key(|i| (i.start, i.profile_id));
        instances[index] = list;
    }
    Ok(instances)
}

/// Writes the state for `gpus` atomically.
pub(super) fn save(
    path: &Path,
    gpus: &[SimulatedGpu],
    instances: &Instances,
) -> Result<(), CoreError> {
    let file = StateFile {
        version: VERSION,
        gpus: gpus
            .iter()
            .zip(instances)
            .map(|(gpu, list)| GpuRecord {
                uuid: gpu.info.uuid.clone(),
                model: gpu.model.key().to_string(),
                instances: list.clone(),
            })
            .collect(),
    };
    let mut bytes = serde_json::to_vec_pretty(&file)
        .map_err(|e| CoreError::Gpu(format!("cannot encode the simulated GPU state: {e}")))?;
    bytes.push(b'\n');
    write_atomically(path, &bytes).map_err(|e| {
        CoreError::Gpu(format!(
            "cannot write the simulated GPU state to {} (nothing was changed): {e}",
            path.display()
        ))
    })
}
