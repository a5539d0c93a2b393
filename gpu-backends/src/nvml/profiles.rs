//! Reading a GPU's instance profiles and placements from NVML into a [`Catalog`].

use nvml_wrapper::error::NvmlError;
use nvml_wrapper::Device;
use nvml_wrapper_sys::bindings::NVML_GPU_INSTANCE_PROFILE_COUNT;
use slicehub_mig::Catalog;

use super::errors::nvml_error;
use super::{catalog_from_readout, mig_modes, raw, NvmlBackend, PlacementReadout, ProfileReadout};
use slicehub_core::gpu::MigMode;
use slicehub_core::CoreError;

impl NvmlBackend {
    /// Every instance profile NVML reports for the device, with its possible placements.
    pub(super) fn profile_readout(
        &self,
        gpu_index: u32,
        device: &Device,
    ) -> Result<Vec<ProfileReadout>, CoreError> {
        let mut readout = Vec::new();
        // Indices past the driver's count answer InvalidArg; a few extra cost nothing and
        // find profiles a newer driver adds.
        for index in 0..NVML_GPU_INSTANCE_PROFILE_COUNT + 8 {
            let info = match raw::gpu_instance_profile(&self.nvml, device, index) {
                Ok(info) => info,
                Err(NvmlError::NotSupported | NvmlError::InvalidArg | NvmlError::NotFound) => {
                    continue
                }
                Err(_) if index >= NVML_GPU_INSTANCE_PROFILE_COUNT => continue,
                Err(e) => return Err(nvml_error(&format!("GPU {gpu_index}: profile {index}"), e)),
            };
            let placements = match raw::possible_placements(&self.nvml, device, info.id) {
                Ok(list) => list,
                Err(NvmlError::NotSupported) => Vec::new(),
                Err(e) => {
                    return Err(nvml_error(
                        &format!("GPU {gpu_index}: placements of profile id {}", info.id),
                        e,
                    ))
                }
            };
            readout.push(ProfileReadout {
                index,
                id: info.id,
                name: info.name,
                compute_slices: info.slice_count,
                instance_count: info.instance_count,
                memory_mib: info.memory_size_mb,
                placements: placements
                    .into_iter()
                    .map(|(start, size)| PlacementReadout { start, size })
                    .collect(),
            });
        }
        Ok(readout)
    }

    pub(super) fn read_catalog(
        &self,
        gpu_index: u32,
        device: &Device,
    ) -> Result<Catalog, CoreError> {
        let mode = mig_modes(device)?.0;
        let key = (gpu_index, mode == MigMode::Enabled);
        if let Some(catalog) = self.catalogs.lock().ok().and_then(|c| c.get(&key).cloned()) {
            return Ok(catalog);
        }
        let name = device
            .name()
            .map_err(|e| nvml_error(&format!("GPU {gpu_index}: name"), e))?;
        if mode != MigMode::Enabled {
            let catalog = self.whole_catalog(gpu_index, device, &name, mode)?;
            if let Ok(mut cache) = self.catalogs.lock() {
                cache.insert(key, catalog.clone());
            }
            return Ok(catalog);
        }
        let memory_mib = device
            .memory_info()
            .map(|m| m.total / (1024 * 1024))
            .map_err(|e| nvml_error(&format!("GPU {gpu_index}: memory"), e))?;
        let readout = self.profile_readout(gpu_index, device)?;
        let catalog = catalog_from_readout(&name, memory_mib, &readout)?;
        if let Ok(mut cache) = self.catalogs.lock() {
            cache.insert(key, catalog.clone());
        }
        Ok(catalog)
    }
}
