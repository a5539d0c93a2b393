//! A GPU NVML shows with MIG off (or without MIG) read as one whole-GPU slice: its memory
//! and multiprocessors from the device itself, its key from the built-in table where the
//! model is known.

use nvml_wrapper::Device;
use nvml_wrapper_sys::bindings::NVML_GPU_INSTANCE_PROFILE_7_SLICE;
use slicehub_mig::Catalog;

use super::errors::nvml_error;
use super::{raw, NvmlBackend};
use slicehub_core::gpu::MigMode;
use slicehub_core::CoreError;

impl NvmlBackend {
    pub(super) fn whole_catalog(
        &self,
        gpu_index: u32,
        device: &Device,
        name: &str,
        mode: MigMode,
    ) -> Result<Catalog, CoreError> {
        let memory_mib = device
            .memory_info()
            .map(|m| m.total / (1024 * 1024))
            .map_err(|e| nvml_error(&format!("GPU {gpu_index}: memory"), e))?;
        let multiprocessors = match mode {
            // The 7-slice profile is the whole GPU's compute; NVML answers it with MIG off.
            MigMode::Disabled => raw::gpu_instance_profile(self.nvml, device, NVML_GPU_INSTANCE_PROFILE_7_SLICE)
                .ok()
                .map(|p| p.multiprocessor_count)
                .filter(|&sms| sms > 0),
            _ => None,
        }
        .or_else(|| {
            let cores = device.num_cores().ok()?;
            let capability = device.cuda_compute_capability().ok()?;
            Some(cores / cores_per_multiprocessor(capability.major, capability.minor))
        });
        let (key, family, memory_gb, model) = match Catalog::whole_for_model(name) {
            Ok(known) => (known.key().to_string(), known.family().to_string(), known.memory_gb(), known.model().to_string()),
            Err(_) => {
                let family = family_of(name);
                let memory_gb = u32::try_from(memory_mib.div_ceil(1024)).unwrap_or(u32::MAX);
                (format!("{family}-{memory_gb}GB"), family, memory_gb, name.to_string())
            }
        };
        Catalog::whole_gpu(key, family, memory_gb, model, memory_mib, multiprocessors)
            .map_err(|e| CoreError::Gpu(format!("GPU {gpu_index} ({name}): {e}")))
    }
}

/// CUDA cores in one streaming multiprocessor, by compute capability.
fn cores_per_multiprocessor(major: i32, minor: i32) -> u32 {
    match (major, minor) {
        (6, 1 | 2) => 128,
        (..=7, _) | (8, 0) => 64,
        _ => 128,
    }
}

/// `RTX3090` from "NVIDIA GeForce RTX 3090": the words that name the part.
fn family_of(name: &str) -> String {
    let noise = ["nvidia", "geforce", "tesla", "generation", "pcie"];
    let words: Vec<String> = name
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_ascii_lowercase)
        .filter(|w| !noise.contains(&w.as_str()) && !w.starts_with("sxm") && !w.starts_with("hbm") && !w.ends_with("gb"))
        .collect();
    match words.is_empty() {
        true => "GPU".to_string(),
        false => words.concat().to_ascii_uppercase(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_part_is_named_after_its_words() {
        assert_eq!(family_of("NVIDIA GeForce RTX 3090"), "RTX3090");
        assert_eq!(family_of("NVIDIA A800 80GB PCIe"), "A800");
        assert_eq!(family_of("NVIDIA"), "GPU");
        assert_eq!(cores_per_multiprocessor(7, 0), 64);
        assert_eq!(cores_per_multiprocessor(8, 9), 128);
        assert_eq!(cores_per_multiprocessor(6, 1), 128, "Pascal consumer parts");
    }
}
