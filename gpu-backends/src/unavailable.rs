//! The backend of a machine whose NVIDIA driver is installed but cannot be used (NVML
//! fails to start: a driver upgraded without a reboot, a module not loaded yet, no
//! permission on `/dev/nvidia*`). Every call answers the reason: nothing is placed,
//! nothing is released through another backend, and the status page says why.

use slicehub_core::gpu::{BackendKind, Catalog, GpuBackend, GpuHealth, GpuInfo, GpuUtilization, MigInstance, Placement};
use slicehub_core::CoreError;

pub struct UnavailableBackend {
    reason: String,
}

impl UnavailableBackend {
    pub fn new(reason: String) -> UnavailableBackend {
        UnavailableBackend { reason }
    }

    fn refuse<T>(&self) -> Result<T, CoreError> {
        Err(CoreError::Gpu(format!("down: {}", self.reason)))
    }
}

impl GpuBackend for UnavailableBackend {
    fn kind(&self) -> BackendKind {
        BackendKind::Nvml
    }
    fn describe(&self) -> String {
        "NVML (not working)".to_string()
    }
    fn list_gpus(&self) -> Result<Vec<GpuInfo>, CoreError> {
        self.refuse()
    }
    fn catalog(&self, _gpu_index: u32) -> Result<Catalog, CoreError> {
        self.refuse()
    }
    fn instances(&self, _gpu_index: u32) -> Result<Vec<MigInstance>, CoreError> {
        self.refuse()
    }
    fn create_instance(&self, _gpu_index: u32, _placement: Placement) -> Result<MigInstance, CoreError> {
        self.refuse()
    }
    fn destroy_instance(&self, _gpu_index: u32, _placement: Placement) -> Result<(), CoreError> {
        self.refuse()
    }
    fn utilization(&self, _gpu_index: u32) -> Result<GpuUtilization, CoreError> {
        self.refuse()
    }
    fn health(&self, _gpu_index: u32) -> Result<GpuHealth, CoreError> {
        self.refuse()
    }
}
