//! Listing, creating and destroying GPU and compute instances through `raw`.

use std::collections::BTreeMap;

use nvml_wrapper::error::NvmlError;
use nvml_wrapper::Device;
use nvml_wrapper_sys::bindings::NVML_COMPUTE_INSTANCE_PROFILE_COUNT;
use slicehub_mig::{Catalog, Placement};

use super::errors::nvml_error;
use super::{mig_modes, raw, NvmlBackend};
use slicehub_core::gpu::{MigInstance, MigMode};
use slicehub_core::CoreError;

struct MigDevice {
    compute_instance_id: u32,
    uuid: Option<String>,
    memory_used_mib: Option<u64>,
    memory_total_mib: Option<u64>,
}

impl NvmlBackend {
    /// The instances on the device; the caller holds the MIG lock.
    pub(super) fn read_instances(
        &self,
        gpu_index: u32,
        device: &Device,
        catalog: &Catalog,
    ) -> Result<Vec<MigInstance>, CoreError> {
        if mig_modes(device)?.0 != MigMode::Enabled {
            return Ok(Vec::new());
        }
        let devices = self.mig_devices(gpu_index, device)?;
        let mut instances = Vec::new();
        for profile in catalog.profiles() {
            let what = format!("GPU {gpu_index}: list {} instances", profile.name);
            let handles = match raw::gpu_instances(&self.nvml, device, profile.id) {
                Ok(handles) => handles,
                Err(NvmlError::NotSupported) => continue,
                Err(e) => return Err(nvml_error(&what, e)),
            };
            for handle in handles {
                let info = raw::gpu_instance_info(&self.nvml, &handle)
                    .map_err(|e| nvml_error(&what, e))?;
                let start = u8::try_from(info.start).map_err(|_| {
                    CoreError::Gpu(format!("{what}: NVML reports start {}", info.start))
                })?;
                let computes = devices.get(&info.id).map(Vec::as_slice).unwrap_or_default();
                let first = computes.first();
                instances.push(MigInstance {
                    gpu_index,
                    placement: Placement::new(profile.id, start),
                    profile_name: profile.name.clone(),
                    gpu_instance_id: info.id,
                    compute_instance_id: first.map(|d| d.compute_instance_id),
                    compute_instance_count: computes.len() as u32,
                    mig_uuid: first.and_then(|d| d.uuid.clone()),
                    memory_used_mib: first.and_then(|d| d.memory_used_mib),
                    memory_total_mib: first
                        .and_then(|d| d.memory_total_mib)
                        .or(Some(profile.memory_mib)),
                });
            }
        }
        instances.sort_by_key(|i| (i.placement.start, i.placement.profile_id));
        Ok(instances)
    }

    /// MIG devices (one per compute instance) by GPU-instance id, lowest compute id first.
    fn mig_devices(
        &self,
        gpu_index: u32,
        device: &Device,
    ) -> Result<BTreeMap<u32, Vec<MigDevice>>, CoreError> {
        let what = format!("GPU {gpu_index}: MIG devices");
        let slots = device
            .mig_device_count()
            .map_err(|e| nvml_error(&what, e))?;
        let mut found: BTreeMap<u32, Vec<MigDevice>> = BTreeMap::new();
        for slot in 0..slots {
            let mig = match device.mig_device_by_index(slot) {
                Ok(mig) => mig,
                // Empty slots answer NotFound (or InvalidArg on some drivers).
                Err(NvmlError::NotFound | NvmlError::InvalidArg) => continue,
                Err(e) => return Err(nvml_error(&what, e)),
            };
            let (gi, ci) =
                raw::mig_device_ids(&self.nvml, &mig).map_err(|e| nvml_error(&what, e))?;
            let memory = mig.memory_info().ok();
            found.entry(gi).or_default().push(MigDevice {
                compute_instance_id: ci,
                uuid: mig.uuid().ok(),
                memory_used_mib: memory.as_ref().map(|m| m.used / (1024 * 1024)),
                memory_total_mib: memory.as_ref().map(|m| m.total / (1024 * 1024)),
            });
        }
        for list in found.values_mut() {
            list.sort_by_key(|d| d.compute_instance_id);
        }
        Ok(found)
    }

    /// The compute-instance profile id that spans all `compute_slices` of `instance`.
    pub(super) fn full_compute_profile(
        &self,
        instance: &raw::GpuInstance,
        compute_slices: u8,
    ) -> Option<u32> {
        (0..NVML_COMPUTE_INSTANCE_PROFILE_COUNT).find_map(|index| {
            match raw::compute_instance_profile(&self.nvml, instance, index) {
                Ok((id, slices)) if slices == u32::from(compute_slices) => Some(id),
                _ => None,
            }
        })
    }

    /// Destroys every compute instance of `instance`, then `instance`.
    pub(super) fn destroy_gpu_instance(
        &self,
        what: &str,
        instance: raw::GpuInstance,
    ) -> Result<(), CoreError> {
        let mut profile_ids: Vec<u32> = (0..NVML_COMPUTE_INSTANCE_PROFILE_COUNT)
            .filter_map(|index| raw::compute_instance_profile(&self.nvml, &instance, index).ok())
            .map(|(id, _)| id)
            .collect();
        profile_ids.sort_unstable();
        profile_ids.dedup();
        for id in profile_ids {
            let computes = match raw::compute_instances(&self.nvml, &instance, id) {
                Ok(list) => list,
                Err(NvmlError::NotSupported | NvmlError::NotFound) => continue,
                Err(e) => return Err(nvml_error(what, e)),
            };
            for compute in computes {
                raw::destroy_compute_instance(&self.nvml, compute)
                    .map_err(|e| nvml_error(what, e))?;
            }
        }
        raw::destroy_gpu_instance(&self.nvml, instance).map_err(|e| nvml_error(what, e))
    }
}
