//! The processes on one GPU, each with its GPU memory and how busy its kernels kept the
//! multiprocessors since the last reading (NVML process samples): what tells the sessions
//! on a GPU split into shares apart.

use std::collections::HashMap;
use std::sync::Mutex;

use nvml_wrapper::enums::device::UsedGpuMemory;
use nvml_wrapper::error::NvmlError;
use nvml_wrapper::Device;
use slicehub_core::gpu::GpuProcess;
use slicehub_core::CoreError;

use super::errors::nvml_error;

/// The newest sample time seen per GPU, so each reading covers the time since the last.
#[derive(Default)]
pub(super) struct ProcessSamples {
    seen: Mutex<HashMap<u32, u64>>,
}

impl ProcessSamples {
    pub(super) fn read(&self, gpu_index: u32, device: &Device<'_>) -> Result<Vec<GpuProcess>, CoreError> {
        let running = device.running_compute_processes().map_err(|e| nvml_error("running processes", e))?;
        let since = self.seen.lock().unwrap_or_else(|e| e.into_inner()).get(&gpu_index).copied();
        // No sample in the period answers NotFound: nothing ran kernels.
        let samples = match device.process_utilization_stats(since) {
            Ok(samples) => samples,
            Err(NvmlError::NotFound) => Vec::new(),
            Err(e) => return Err(nvml_error("process utilization", e)),
        };
        if let Some(newest) = samples.iter().map(|s| s.timestamp).max() {
            self.seen.lock().unwrap_or_else(|e| e.into_inner()).insert(gpu_index, newest);
        }
        let mut out: Vec<GpuProcess> = running
            .iter()
            .map(|p| GpuProcess {
                pid: p.pid,
                memory_mib: match p.used_gpu_memory {
                    UsedGpuMemory::Used(bytes) => Some(bytes / (1024 * 1024)),
                    UsedGpuMemory::Unavailable => None,
                },
                busy_percent: samples.iter().filter(|s| s.pid == p.pid).map(|s| s.sm_util.min(100)).max(),
            })
            .collect();
        // A process that ran kernels and ended since still counts for the time it ran.
        for s in samples.iter().filter(|s| running.iter().all(|p| p.pid != s.pid)) {
            if !out.iter().any(|p| p.pid == s.pid) {
                out.push(GpuProcess { pid: s.pid, memory_mib: None, busy_percent: Some(s.sm_util.min(100)) });
            }
        }
        Ok(out)
    }
}
