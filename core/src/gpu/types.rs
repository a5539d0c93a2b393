//! What the GPU boundary answers with.

use serde::Serialize;
use slicehub_mig::Placement;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum BackendKind {
    Nvml,
    Simulated,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum MigMode {
    Enabled,
    Disabled,
    /// The GPU cannot be partitioned (not an A100/H100/H200/B200 class part).
    Unsupported,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GpuInfo {
    pub index: u32,
    pub uuid: String,
    pub name: String,
    pub memory_mib: u64,
    /// The MIG mode in effect now.
    pub mig_mode: MigMode,
    /// The MIG mode after the next GPU reset (differs from `mig_mode` while a change waits).
    pub mig_mode_pending: MigMode,
}

/// One GPU instance and the compute instance SliceHub runs containers on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MigInstance {
    pub gpu_index: u32,
    pub placement: Placement,
    /// Short profile name, e.g. `3g.40gb`.
    pub profile_name: String,
    pub gpu_instance_id: u32,
    /// The compute instance with the lowest id; `None` when the GPU instance has none
    /// (made outside SliceHub), in which case there is no MIG device to use.
    pub compute_instance_id: Option<u32>,
    /// How many compute instances the GPU instance has; 1 for the ones SliceHub creates.
    pub compute_instance_count: u32,
    /// The MIG device of that compute instance, `MIG-…`, as containers are given it.
    pub mig_uuid: Option<String>,
    pub memory_used_mib: Option<u64>,
    pub memory_total_mib: Option<u64>,
}

/// A process using a GPU, as the driver reports it (host process ids).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct GpuProcess {
    pub pid: u32,
    pub memory_mib: Option<u64>,
    /// Percent of the time its kernels kept the multiprocessors busy since the last
    /// reading; `None` when it ran none in that time.
    pub busy_percent: Option<u32>,
}

/// Percent busy over the driver's last sample period; `None` where the GPU does not say.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct GpuUtilization {
    pub gpu_percent: Option<u32>,
    pub memory_percent: Option<u32>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct GpuHealth {
    /// True when `problems` is empty.
    pub ok: bool,
    /// One sentence per problem, e.g. `pages pending retirement (a GPU reset retires them)`.
    pub problems: Vec<String>,
}

impl GpuHealth {
    pub fn from_problems(problems: Vec<String>) -> GpuHealth {
        GpuHealth {
            ok: problems.is_empty(),
            problems,
        }
    }
}

/// Why `auto` does not run on NVML.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuFallback {
    pub reason: String,
    /// An NVIDIA driver is installed but NVML failed: the machine has GPUs the portal
    /// cannot use. It places nothing (not even on simulated GPUs, which would hand out
    /// sessions without a GPU) and the health report shows it as a problem.
    pub nvml_failed: bool,
}
