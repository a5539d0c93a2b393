use std::sync::Arc;

use super::{GpuBackend, NvmlBackend, SimulatedBackend, SIMULATED_STATE_FILE};
use crate::config::{Config, GpuBackendChoice};
use crate::CoreError;

/// Why `auto` runs on simulated GPUs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuFallback {
    pub reason: String,
    /// NVML loaded (a driver is installed) but failed: the machine has GPUs the portal
    /// cannot use, which the health report shows as a problem, not as a choice.
    pub nvml_failed: bool,
}

/// The backend the configuration asks for. With `auto`, NVML when it loads and answers,
/// otherwise the simulated inventory — the second value then says why NVML was not used.
/// Opening reads the simulated state file if there is one and writes nothing.
pub fn open_backend(
    config: &Config,
) -> Result<(Arc<dyn GpuBackend>, Option<GpuFallback>), CoreError> {
    let simulated = || {
        SimulatedBackend::open(
            &config.gpu_simulated,
            config.data_dir.join(SIMULATED_STATE_FILE),
        )
    };
    match config.gpu_backend {
        GpuBackendChoice::Simulated => Ok((Arc::new(simulated()?), None)),
        GpuBackendChoice::Nvml => {
            let opened = NvmlBackend::open(&config.gpu_nvml_library)
                .and_then(|nvml| nvml.list_gpus().map(|_| nvml));
            match opened {
                Ok(nvml) => Ok((Arc::new(nvml), None)),
                Err(e) => Err(CoreError::Gpu(format!(
                    "gpu.backend is `nvml`, but NVML cannot be used: {}; install the NVIDIA \
                     driver, set gpu.nvml_library to libnvidia-ml.so.1, or set gpu.backend to \
                     `auto` or `simulated`",
                    reason(e)
                ))),
            }
        }
        GpuBackendChoice::Auto => {
            let fallback = match NvmlBackend::open(&config.gpu_nvml_library) {
                Ok(nvml) => match nvml.list_gpus() {
                    Ok(gpus) if !gpus.is_empty() => return Ok((Arc::new(nvml), None)),
                    Ok(_) => GpuFallback {
                        reason: "NVML found no GPUs".to_string(),
                        nvml_failed: false,
                    },
                    Err(e) => GpuFallback {
                        reason: format!(
                            "the NVIDIA driver is installed but NVML failed: {}; running on \
                             simulated GPUs (set gpu.backend = nvml to refuse to start instead)",
                            reason(e)
                        ),
                        nvml_failed: true,
                    },
                },
                Err(e) => GpuFallback {
                    reason: reason(e),
                    nvml_failed: false,
                },
            };
            Ok((Arc::new(simulated()?), Some(fallback)))
        }
    }
}

fn reason(e: CoreError) -> String {
    match e {
        CoreError::Gpu(message) => message,
        other => other.to_string(),
    }
}
