//! The simulated GPUs with faults a test turns on while the portal runs: creating an
//! instance as slowly as a real GPU under load, or one GPU lost (every call naming it
//! answers an NVML-like error, as after an XID or "fell off the bus"); or passing for NVML
//! with MIG on, whose instances' activity is read per instance (GPM) or not at all.

use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use slicehub_core::gpu::{
    BackendKind, Catalog, GpuBackend, GpuHealth, GpuInfo, GpuProcess, GpuUtilization, MigInstance, Placement,
};
use slicehub_core::CoreError;
use slicehub_gpu::SimulatedBackend;

pub struct FaultyGpus {
    inner: Arc<SimulatedBackend>,
    slow_create: AtomicBool,
    /// The index of the GPU that is lost, or -1.
    lost: AtomicI64,
    /// Answers as NVML does (the sampler then reads activity per MIG instance).
    as_nvml: AtomicBool,
    /// What each MIG instance's activity reading answers, percent; -1: no reading.
    instance_busy: AtomicI64,
    /// Instance creations hang until this is cleared.
    hang_creates: AtomicBool,
    /// What the driver would list as the processes on each GPU (host process ids).
    processes: Mutex<Vec<GpuProcess>>,
}

impl FaultyGpus {
    pub fn over(inner: Arc<SimulatedBackend>) -> Arc<FaultyGpus> {
        Arc::new(FaultyGpus {
            inner,
            slow_create: AtomicBool::new(false),
            lost: AtomicI64::new(-1),
            as_nvml: AtomicBool::new(false),
            instance_busy: AtomicI64::new(-1),
            hang_creates: AtomicBool::new(false),
            processes: Mutex::new(Vec::new()),
        })
    }

    /// Pass for NVML, with `processes` on every GPU, as the driver lists them.
    pub fn as_nvml_with_processes(&self, processes: Vec<GpuProcess>) {
        self.as_nvml.store(true, Ordering::SeqCst);
        *self.processes.lock().unwrap() = processes;
    }

    /// Instance creations hang (as NVML can when a GPU falls off the bus) until called
    /// again with `false`.
    pub fn hang_creates(&self, on: bool) {
        self.hang_creates.store(on, Ordering::SeqCst);
    }

    /// Pass for NVML with MIG on, whose instances read `busy` percent (`None`: a GPU that
    /// keeps no per-instance figure, as before Hopper).
    pub fn as_nvml_with_instance_busy(&self, busy: Option<u32>) {
        self.as_nvml.store(true, Ordering::SeqCst);
        self.instance_busy.store(busy.map_or(-1, i64::from), Ordering::SeqCst);
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
        match self.as_nvml.load(Ordering::SeqCst) {
            true => BackendKind::Nvml,
            false => self.inner.kind(),
        }
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
        while self.hang_creates.load(Ordering::SeqCst) {
            std::thread::sleep(Duration::from_millis(50));
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
    fn busy_since_last(&self, gpu_index: u32, instance: Option<&MigInstance>) -> Result<Option<u32>, CoreError> {
        self.check(gpu_index)?;
        let busy = self.instance_busy.load(Ordering::SeqCst);
        Ok((instance.is_some() && busy >= 0).then_some(busy as u32))
    }
    fn processes(&self, gpu_index: u32) -> Result<Vec<GpuProcess>, CoreError> {
        self.check(gpu_index)?;
        Ok(self.processes.lock().unwrap().clone())
    }
    fn health(&self, gpu_index: u32) -> Result<GpuHealth, CoreError> {
        self.check(gpu_index)?;
        self.inner.health(gpu_index)
    }
}
