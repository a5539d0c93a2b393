//! Real GPUs through NVIDIA's management library: nvml-wrapper where it wraps NVML
//! correctly, `raw` (the crate's only unsafe code) where it does not.

mod catalog;
mod errors;
mod gpm;
mod instances;
mod processes;
mod profiles;
mod raw;
mod whole;

pub use catalog::{catalog_from_readout, PlacementReadout, ProfileReadout};

use std::collections::HashMap;
use std::ffi::OsStr;
use std::sync::{Mutex, MutexGuard};

use nvml_wrapper::error::NvmlError;
use nvml_wrapper::{Device, Nvml};
use slicehub_mig::{Catalog, Layout, Placement, Profile};

use slicehub_core::gpu::mig_rules::{check_create, mig_error};
use slicehub_core::gpu::whole::{no_instance, not_sliced, whole_instance};
use slicehub_core::gpu::{BackendKind, GpuBackend, GpuHealth, GpuInfo, GpuProcess, GpuUtilization, MigInstance, MigMode};
use slicehub_core::CoreError;
use errors::nvml_error;

/// Places NVML is looked for when no path is configured; the first is the linker's search.
const STANDARD_LIBRARIES: &[&str] = &[
    "libnvidia-ml.so.1",
    "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1",
    "/usr/lib64/libnvidia-ml.so.1",
    "/usr/local/nvidia/lib64/libnvidia-ml.so.1",
    "/usr/lib/wsl/lib/libnvidia-ml.so.1",
];

/// Real GPUs through NVIDIA's management library.
pub struct NvmlBackend {
    /// Kept for the life of the process, so GPM samples taken from it can be kept too.
    nvml: &'static Nvml,
    library: String,
    /// Catalogs read once per GPU and MIG mode (on or not): the profiles do not change
    /// while the driver is loaded.
    catalogs: Mutex<HashMap<(u32, bool), Catalog>>,
    /// Held by every call that lists, creates or destroys instances, so instance handles
    /// stay valid while one call uses them.
    mig: Mutex<()>,
    /// The last GPM sample of each GPU and MIG instance asked about.
    gpm: gpm::GpmSamples,
    /// The newest process sample read of each GPU.
    processes: processes::ProcessSamples,
    /// The GPUs the last listing could not read, with why.
    unreadable: Mutex<Vec<(u32, String)>>,
}

impl NvmlBackend {
    /// Loads NVML from `configured` if given, else from the standard places.
    pub fn open(configured: Option<&std::path::Path>) -> Result<Self, CoreError> {
        let candidates: Vec<&OsStr> = match configured {
            None => STANDARD_LIBRARIES.iter().map(OsStr::new).collect(),
            Some(path) => vec![path.as_os_str()],
        };
        let mut failures = Vec::new();
        for library in candidates {
            let library = library.to_string_lossy();
            match Nvml::builder().lib_path(OsStr::new(library.as_ref())).init() {
                Ok(nvml) => {
                    return Ok(NvmlBackend {
                        nvml: Box::leak(Box::new(nvml)),
                        library: library.to_string(),
                        catalogs: Mutex::new(HashMap::new()),
                        mig: Mutex::new(()),
                        gpm: Default::default(),
                        processes: Default::default(),
                        unreadable: Mutex::new(Vec::new()),
                    })
                }
                Err(e) => failures.push(format!("{library}: {}", short(&e))),
            }
        }
        if configured.is_some() {
            return Err(CoreError::Gpu(format!(
                "NVML could not be loaded from gpu.nvml_library ({})",
                failures.join("; ")
            )));
        }
        if failures.iter().all(|f| f.ends_with(": not found")) {
            return Err(CoreError::Gpu(
                "no NVIDIA driver: libnvidia-ml.so.1 is not on the linker path nor in the standard places"
                    .to_string(),
            ));
        }
        Err(CoreError::Gpu(format!(
            "NVML could not be loaded ({})",
            failures.join("; ")
        )))
    }

    pub fn library(&self) -> &str {
        &self.library
    }

    fn device(&self, gpu_index: u32) -> Result<Device<'static>, CoreError> {
        self.nvml.device_by_index(gpu_index).map_err(|e| match e {
            NvmlError::InvalidArg => {
                let count = self.nvml.device_count().unwrap_or(0);
                CoreError::NotFound(format!("there is no GPU {gpu_index} (NVML sees {count})"))
            }
            other => nvml_error(&format!("GPU {gpu_index}"), other),
        })
    }

    fn lock_mig(&self) -> MutexGuard<'_, ()> {
        self.mig
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn require_mig_enabled(&self, gpu_index: u32, device: &Device) -> Result<(), CoreError> {
        match mig_modes(device)?.0 {
            MigMode::Enabled => Ok(()),
            MigMode::Disabled => Err(CoreError::NotSupported(format!(
                "MIG is disabled on GPU {gpu_index}; an admin enables it with \
                 `nvidia-smi -i {gpu_index} -mig 1` (takes effect after a GPU reset)"
            ))),
            MigMode::Unsupported => Err(CoreError::NotSupported(format!(
                "GPU {gpu_index} cannot be partitioned with MIG"
            ))),
        }
    }
}

fn short(e: &NvmlError) -> String {
    match e {
        NvmlError::LibloadingError(_) => "not found".to_string(),
        other => other.to_string(),
    }
}

/// (current, pending) MIG mode.
fn mig_modes(device: &Device) -> Result<(MigMode, MigMode), CoreError> {
    let mode = |m: u32| {
        if m == 1 {
            MigMode::Enabled
        } else {
            MigMode::Disabled
        }
    };
    match device.mig_mode() {
        Ok(m) => Ok((mode(m.current), mode(m.pending))),
        Err(NvmlError::NotSupported) => Ok((MigMode::Unsupported, MigMode::Unsupported)),
        Err(e) => Err(nvml_error("MIG mode", e)),
    }
}

fn profile_of(gpu_index: u32, catalog: &Catalog, p: Placement) -> Result<&Profile, CoreError> {
    catalog
        .profile_by_id(p.profile_id)
        .map_err(|e| mig_error(gpu_index, catalog, e))
}

impl GpuBackend for NvmlBackend {
    fn kind(&self) -> BackendKind {
        BackendKind::Nvml
    }

    fn describe(&self) -> String {
        match self.nvml.sys_driver_version() {
            Ok(version) => format!("NVML, driver {version}"),
            Err(_) => "NVML".to_string(),
        }
    }

    fn list_gpus(&self) -> Result<Vec<GpuInfo>, CoreError> {
        let count = self
            .nvml
            .device_count()
            .map_err(|e| nvml_error("device count", e))?;
        // One GPU that cannot be read (an XID, a pending reset) is left out, logged, so
        // the others go on serving.
        let read = (0..count).map(|index| -> Result<GpuInfo, CoreError> {
                let device = self.device(index)?;
                let (mig_mode, mig_mode_pending) = mig_modes(&device)?;
                Ok(GpuInfo {
                    index,
                    uuid: device.uuid().map_err(|e| nvml_error("UUID", e))?,
                    name: device.name().map_err(|e| nvml_error("name", e))?,
                    memory_mib: device
                        .memory_info()
                        .map_err(|e| nvml_error("memory", e))?
                        .total
                        / (1024 * 1024),
                    mig_mode,
                    mig_mode_pending,
                })
            });
        let mut gpus = Vec::new();
        let mut unreadable = Vec::new();
        for (index, gpu) in (0u32..).zip(read) {
            match gpu {
                Ok(gpu) => gpus.push(gpu),
                Err(e) => unreadable.push((index, e.to_string())),
            }
        }
        let mut last = self.unreadable.lock().unwrap_or_else(|e| e.into_inner());
        if *last != unreadable {
            // Logged when it changes, not at every listing.
            for (index, why) in &unreadable {
                tracing::error!(gpu = index, error = %why, "GPU unreadable; left out until it answers");
            }
            if unreadable.is_empty() {
                tracing::info!("every GPU can be read again");
            }
            *last = unreadable;
        }
        Ok(gpus)
    }

    fn uuid_at(&self, gpu_index: u32) -> Result<Option<String>, CoreError> {
        match self.device(gpu_index) {
            Ok(device) => device.uuid().map(Some).map_err(|e| nvml_error("UUID", e)),
            Err(CoreError::NotFound(_)) => Ok(None),
            Err(e) => Err(e),
        }
    }

    fn unreadable_gpus(&self) -> Vec<(u32, String)> {
        self.unreadable.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    fn catalog(&self, gpu_index: u32) -> Result<Catalog, CoreError> {
        let device = self.device(gpu_index)?;
        self.read_catalog(gpu_index, &device)
    }

    fn instances(&self, gpu_index: u32) -> Result<Vec<MigInstance>, CoreError> {
        let device = self.device(gpu_index)?;
        let catalog = self.read_catalog(gpu_index, &device)?;
        if catalog.is_whole() {
            let uuid = device.uuid().map_err(|e| nvml_error("UUID", e))?;
            let used = device.memory_info().ok().map(|m| m.used / (1024 * 1024));
            return Ok(vec![whole_instance(gpu_index, &catalog, &uuid, used)]);
        }
        let _held = self.lock_mig();
        self.read_instances(gpu_index, &device, &catalog)
    }

    fn create_instance(
        &self,
        gpu_index: u32,
        placement: Placement,
    ) -> Result<MigInstance, CoreError> {
        let device = self.device(gpu_index)?;
        let catalog = self.read_catalog(gpu_index, &device)?;
        if catalog.is_whole() {
            return Err(not_sliced(gpu_index));
        }
        let profile = profile_of(gpu_index, &catalog, placement)?;
        self.require_mig_enabled(gpu_index, &device)?;
        let _held = self.lock_mig();
        let existing: Vec<Placement> = self
            .read_instances(gpu_index, &device, &catalog)?
            .iter()
            .map(|i| i.placement)
            .collect();
        check_create(gpu_index, &catalog, &existing, placement)?;

        let what = format!("GPU {gpu_index}: create {}", placement.describe(&catalog));
        let instance = raw::create_gpu_instance(
            &self.nvml,
            &device,
            profile.id,
            u32::from(placement.start),
            u32::from(profile.memory_slices),
        )
        .map_err(|e| nvml_error(&what, e))?;
        let compute = match self.full_compute_profile(&instance, profile.compute_slices) {
            Some(id) => raw::create_compute_instance(&self.nvml, &instance, id)
                .map(|_| ())
                .map_err(|e| nvml_error(&format!("{what}: its compute instance"), e)),
            None => Err(CoreError::Gpu(format!(
                "{what}: NVML offers no compute-instance profile of {} slices",
                profile.compute_slices
            ))),
        };
        if let Err(e) = compute {
            // Leave the GPU as it was: without a compute instance the GPU instance is unusable.
            let _ = self.destroy_gpu_instance(&what, instance);
            return Err(e);
        }
        self.read_instances(gpu_index, &device, &catalog)?
            .into_iter()
            .find(|i| i.placement == placement)
            .ok_or_else(|| CoreError::Gpu(format!("{what}: created, but NVML does not list it")))
    }

    fn destroy_instance(&self, gpu_index: u32, placement: Placement) -> Result<(), CoreError> {
        let device = self.device(gpu_index)?;
        let catalog = self.read_catalog(gpu_index, &device)?;
        if catalog.is_whole() {
            return Err(no_instance(gpu_index));
        }
        profile_of(gpu_index, &catalog, placement)?;
        let _held = self.lock_mig();
        let what = format!("GPU {gpu_index}: destroy {}", placement.describe(&catalog));
        let mut found = None;
        if mig_modes(&device)?.0 == MigMode::Enabled {
            for handle in raw::gpu_instances(&self.nvml, &device, placement.profile_id)
                .map_err(|e| nvml_error(&what, e))?
            {
                let info = raw::gpu_instance_info(&self.nvml, &handle)
                    .map_err(|e| nvml_error(&what, e))?;
                if info.start == u32::from(placement.start) {
                    found = Some(handle);
                    break;
                }
            }
        }
        let Some(instance) = found else {
            let now: Vec<Placement> = self
                .read_instances(gpu_index, &device, &catalog)?
                .iter()
                .map(|i| i.placement)
                .collect();
            return Err(CoreError::NotFound(format!(
                "GPU {gpu_index} has no MIG instance {} (it has: {})",
                placement.describe(&catalog),
                Layout::from(now).describe(&catalog)
            )));
        };
        self.destroy_gpu_instance(&what, instance)
    }

    fn utilization(&self, gpu_index: u32) -> Result<GpuUtilization, CoreError> {
        let device = self.device(gpu_index)?;
        match device.utilization_rates() {
            Ok(u) => Ok(GpuUtilization {
                gpu_percent: Some(u.gpu),
                memory_percent: Some(u.memory),
            }),
            Err(NvmlError::GpuLost) => Err(nvml_error(
                &format!("GPU {gpu_index}: utilization"),
                NvmlError::GpuLost,
            )),
            // With MIG enabled (and on some parts) the driver keeps no whole-GPU figures.
            Err(_) => Ok(GpuUtilization::default()),
        }
    }

    fn processes(&self, gpu_index: u32) -> Result<Vec<GpuProcess>, CoreError> {
        let device = self.device(gpu_index)?;
        self.processes.read(gpu_index, &device)
    }

    fn exclusive_process(&self, gpu_index: u32) -> Option<bool> {
        let mode = self.device(gpu_index).ok()?.compute_mode().ok()?;
        Some(mode == nvml_wrapper::enum_wrappers::device::ComputeMode::ExclusiveProcess)
    }

    fn gpm_supported(&self, gpu_index: u32) -> bool {
        self.device(gpu_index).ok().and_then(|d| d.gpm_support().ok()).unwrap_or(false)
    }

    fn busy_since_last(&self, gpu_index: u32, instance: Option<&MigInstance>) -> Result<Option<u32>, CoreError> {
        let device = self.device(gpu_index)?;
        if !device.gpm_support().unwrap_or(false) {
            return Ok(None);
        }
        let (key, sample) = match instance.filter(|i| !i.mig_uuid.as_deref().is_some_and(|u| u.starts_with("GPU-"))) {
            // A MIG device's UUID is new with each instance, so a reused instance id
            // starts from a fresh sample. A whole GPU's one instance is the GPU.
            Some(instance) => (
                instance.mig_uuid.clone().unwrap_or_else(|| format!("{gpu_index}/{}", instance.gpu_instance_id)),
                device.gpm_mig_sample(instance.gpu_instance_id),
            ),
            None => (format!("{gpu_index}"), device.gpm_sample()),
        };
        let sample = sample.map_err(|e| nvml_error(&format!("GPU {gpu_index}: GPM sample"), e))?;
        self.gpm.busy_since_last(self.nvml, &key, sample)
    }

    fn health(&self, gpu_index: u32) -> Result<GpuHealth, CoreError> {
        let device = self.device(gpu_index)?;
        let mut problems = Vec::new();
        if let Ok(true) = device.are_pages_pending_retired() {
            problems.push(
                "memory pages are pending retirement (a GPU reset or reboot retires them)"
                    .to_string(),
            );
        }
        match raw::remapped_rows(&self.nvml, &device) {
            Ok((pending, failed)) => {
                if pending {
                    problems.push(
                        "memory rows are pending remapping (a GPU reset is needed)".to_string(),
                    );
                }
                if failed {
                    problems
                        .push("a memory row remapping failed (the GPU needs service)".to_string());
                }
            }
            Err(NvmlError::GpuLost) => problems.push("the GPU fell off the bus".to_string()),
            Err(_) => {}
        }
        Ok(GpuHealth::from_problems(problems))
    }
}
