use std::path::Path;
use std::sync::Arc;

use slicehub_core::config::{GpuBackendChoice, GpuConfig};
use slicehub_core::gpu::{GpuBackend, GpuFallback, SharedGpus};
use slicehub_core::CoreError;

use crate::{NvmlBackend, SimulatedBackend, UnavailableBackend, SIMULATED_STATE_FILE};

/// Files that exist wherever an NVIDIA kernel driver is installed and loaded, or its
/// device nodes were made.
const DRIVER_SIGNS: [&str; 2] = ["/proc/driver/nvidia/version", "/dev/nvidiactl"];

/// The backend the configuration asks for. With `auto`, NVML when it loads and answers;
/// the simulated inventory only on a machine with no NVIDIA driver at all; on one whose
/// driver NVML cannot use, a backend that refuses every call with the reason. The second
/// value says why NVML is not used. Opening reads the simulated state file if there is
/// one and writes nothing.
pub fn open_backend(
    config: &GpuConfig,
    data_dir: &Path,
) -> Result<(Arc<dyn GpuBackend>, Option<GpuFallback>), CoreError> {
    let driver = DRIVER_SIGNS.iter().any(|sign| Path::new(sign).exists());
    let (backend, fallback) = open_backend_on(config, data_dir, driver)?;
    Ok((SharedGpus::wrap(backend, &config.shares), fallback))
}

/// [`open_backend`] where `driver` says whether an NVIDIA driver is installed.
pub fn open_backend_on(
    config: &GpuConfig,
    data_dir: &Path,
    driver: bool,
) -> Result<(Arc<dyn GpuBackend>, Option<GpuFallback>), CoreError> {
    let simulated = || {
        SimulatedBackend::open(
            &config.simulated,
            data_dir.join(SIMULATED_STATE_FILE),
        )
    };
    match config.backend {
        GpuBackendChoice::Simulated => Ok((Arc::new(simulated()?), None)),
        GpuBackendChoice::Nvml => {
            let opened = NvmlBackend::open(config.nvml_library.as_deref())
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
            let failure = match NvmlBackend::open(config.nvml_library.as_deref()) {
                Ok(nvml) => match nvml.list_gpus() {
                    Ok(gpus) if !gpus.is_empty() => return Ok((Arc::new(nvml), None)),
                    Ok(_) => "NVML found no GPUs".to_string(),
                    Err(e) => reason(e),
                },
                Err(e) => reason(e),
            };
            if !driver {
                let fallback = GpuFallback { reason: failure, nvml_failed: false };
                return Ok((Arc::new(simulated()?), Some(fallback)));
            }
            let fallback = GpuFallback {
                reason: format!(
                    "the NVIDIA driver is installed but NVML cannot use it: {failure}; no session \
                     is placed until it can (after a driver upgrade, reboot; check that the \
                     portal's user may open /dev/nvidia*), then restart the portal"
                ),
                nvml_failed: true,
            };
            Ok((Arc::new(UnavailableBackend::new(fallback.reason.clone())), Some(fallback)))
        }
    }
}

fn reason(e: CoreError) -> String {
    match e {
        CoreError::Gpu(message) => message,
        other => other.to_string(),
    }
}
