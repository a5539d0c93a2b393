//! What the activity sampler keeps in memory: the last readings of each running session's
//! slice and of each GPU.

use std::collections::{HashMap, VecDeque};

use serde::Serialize;

use crate::gpu::GpuUtilization;
use crate::runtime::ContainerUsage;

pub const KEPT_SAMPLES: usize = 60;

/// One reading of a session's slice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct SliceSample {
    pub at_ms: i64,
    /// Percent busy; `None` where it cannot be read (the first simulated reading, MIG
    /// instances on NVML).
    pub busy_percent: Option<u32>,
    pub memory_mib: Option<u64>,
}

/// The newest sample of a running session, with where its slice is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SliceNow {
    pub session_id: String,
    pub gpu_index: u32,
    pub gpu_uuid: String,
    /// `3g.40gb@4`: the profile and its first memory slice.
    pub slice: String,
    /// The MIG GPU instance's id and profile (DCGM's `GPU_I_ID`, `GPU_I_PROFILE`); `None`
    /// for a GPU used whole.
    pub mig_instance: Option<(u32, String)>,
    pub sample: SliceSample,
}

pub(super) struct Series {
    pub gpu_index: u32,
    pub gpu_uuid: String,
    pub slice: String,
    pub mig_instance: Option<(u32, String)>,
    pub samples: VecDeque<SliceSample>,
}

/// A GPU as DCGM's exporter names it, so dashboards can join SliceHub's series with its.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GpuIdentity {
    pub index: u32,
    pub uuid: String,
    /// The product name NVML gives, e.g. `NVIDIA H100 80GB HBM3` (DCGM's `modelName`).
    pub model: String,
}

#[derive(Default)]
pub(super) struct ActivityState {
    pub series: HashMap<String, Series>,
    pub last_usage: HashMap<String, ContainerUsage>,
    /// The engine's id of each running session's container on a shared GPU.
    pub container_ids: HashMap<String, String>,
    pub gpus: Vec<(GpuIdentity, GpuUtilization)>,
}
