//! The simulated GPUs with faults a test turns on while the portal runs: creating an
//! instance as slowly as a real GPU under load, or one GPU lost (every call naming it
//! answers an NVML-like error, as after an XID or "fell off the bus").

use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use slicehub_core::gpu::{
    BackendKind, Catalog, GpuBackend, GpuHealth, GpuInfo, GpuUtilization, MigInstance, Placement, SimulatedBackend,
};
use slicehub_core::CoreError;

pub struct FaultyGpus {
    inner: Arc<SimulatedBackend>,
    slow_create: AtomicBool,
    /// The index of the GPU that is lost, or -1.
    lost: AtomicI64,
}

impl FaultyGpus {
    pub fn over(inner: Arc<SimulatedBackend>) -> Arc<FaultyGpus> {
        Arc::new(FaultyGpus {
            inner,
            slow_create: AtomicBool::new(false),
            lost: AtomicI64::new(-1),
        })
    }

    /// Each instance creation takes half a second.
    pub fn slow_create(&self, on: bool) {
        self.slow_create.store(on, Ordering::SeqCst);
    }

    /// `Some(i)`: GPU `i` answers every call with an error.
    pub fn lose(&self, gpu: Option<u32>) {
        self.lost.store(gpu.map_or(-1, i64::from), Ordering::SeqCst);
    }

    fn check(&self, gpu_index: u32) -> Result<(), CoreError> {
        if self.lost.load(Ordering::SeqCst) == i64::from(gpu_index) {
            return Err(CoreError::Gpu(format!("GPU {gpu_index}: GPU is lost (injected)")));
        }
        Ok(())
    }
}

impl GpuBackend for FaultyGpus {
    fn kind(&self) -> BackendKind {
        self.inner.kind()
    }
    fn describe(&self) -> String {
        self.inner.describe()
    }
    fn list_gpus(&self) -> Result<Vec<GpuInfo>, CoreError> {
        self.inner.list_gpus()
    }
    fn catalog(&self, gpu_index: u32) -> Result<Catalog, CoreError> {
        self.check(gpu_index)?;
        self.inner.catalog(gpu_index)
    }
    fn instances(&self, gpu_index: u32) -> Result<Vec<MigInstance>, CoreError> {
        self.check(gpu_index)?;
        self.inner.instances(gpu_index)
    }
    fn create_instance(&self, gpu_index: u32, placement: Placement) -> Result<MigInstance, CoreError> {
        self.check(gpu_index)?;
        if self.slow_create.load(Ordering::SeqCst) {
            std::thread::sleep(Duration::from_millis(500));
        }
        self.inner.create_instance(gpu_index, placement)
    }
    fn destroy_instance(&self, gpu_index: u32, placement: Placement) -> Result<(), CoreError> {
        self.check(gpu_index)?;
        self.inner.destroy_instance(gpu_index, placement)
    }
    fn utilization(&self, gpu_index: u32) -> Result<GpuUtilization, CoreError> {
        self.check(gpu_index)?;
        self.inner.utilization(gpu_index)
    }
    fn health(&self, gpu_index: u32) -> Result<GpuHealth, CoreError> {
        self.check(gpu_index)?;
        self.inner.health(gpu_index)
    }
}
