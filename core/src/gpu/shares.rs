//! GPUs split into shares (`gpu.shares`): a backend around the real one that answers, for
//! each such GPU used whole, with the share catalog and one instance per share, each
//! naming the GPU itself as its device. Everything else passes through.

use std::sync::Arc;

use slicehub_mig::{Catalog, Placement, Shares};

use super::{GpuBackend, GpuHealth, GpuInfo, GpuUtilization, MigInstance};
use crate::config::GpuShares;
use crate::gpu::BackendKind;
use crate::CoreError;

pub struct SharedGpus {
    inner: Arc<dyn GpuBackend>,
    shares: Vec<GpuShares>,
}

impl SharedGpus {
    /// `inner` with the GPUs `shares` names split; `inner` itself when it names none.
    pub fn wrap(inner: Arc<dyn GpuBackend>, shares: &[GpuShares]) -> Arc<dyn GpuBackend> {
        if shares.is_empty() {
            return inner;
        }
        Arc::new(SharedGpus { inner, shares: shares.to_vec() })
    }

    /// How GPU `gpu_index` is split, if the configuration names it by index or UUID.
    fn shares_of(&self, gpu_index: u32) -> Result<Option<Shares>, CoreError> {
        let by_index = gpu_index.to_string();
        if let Some(s) = self.shares.iter().find(|s| s.gpu == by_index) {
            return Ok(Some(s.shares));
        }
        if !self.shares.iter().any(|s| s.gpu.starts_with("GPU-")) {
            return Ok(None);
        }
        let uuid = self.inner.uuid_at(gpu_index)?;
        Ok(uuid.and_then(|u| self.shares.iter().find(|s| s.gpu == u).map(|s| s.shares)))
    }

    /// The shared catalog of a GPU used whole; a MIG GPU named in `gpu.shares` stays as it
    /// is (its slices already keep sessions apart; `slicehub check` says so).
    fn shared_catalog(&self, gpu_index: u32) -> Result<Catalog, CoreError> {
        let catalog = self.inner.catalog(gpu_index)?;
        match self.shares_of(gpu_index)? {
            Some(shares) if catalog.is_whole() => catalog.shared(shares).map_err(|e| CoreError::Gpu(e.to_string())),
            _ => Ok(catalog),
        }
    }
}

/// The shares of a shared GPU as instances: the one whole-GPU instance repeated at each
/// share's start, memory used left unknown (it is the GPU's, not one share's).
fn share_instances(catalog: &Catalog, whole: &MigInstance) -> Vec<MigInstance> {
    let Some(profile) = catalog.profiles().first() else { return Vec::new() };
    profile
        .starts
        .iter()
        .map(|&start| MigInstance {
            placement: Placement::new(profile.id, start),
            profile_name: profile.name.clone(),
            memory_used_mib: None,
            memory_total_mib: Some(profile.memory_mib),
            ..whole.clone()
        })
        .collect()
}

impl GpuBackend for SharedGpus {
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
        self.shared_catalog(gpu_index)
    }

    fn instances(&self, gpu_index: u32) -> Result<Vec<MigInstance>, CoreError> {
        let instances = self.inner.instances(gpu_index)?;
        let catalog = self.shared_catalog(gpu_index)?;
        match (catalog.shares(), instances.first()) {
            (Some(_), Some(whole)) => Ok(share_instances(&catalog, whole)),
            _ => Ok(instances),
        }
    }

    fn create_instance(&self, gpu_index: u32, placement: Placement) -> Result<MigInstance, CoreError> {
        self.inner.create_instance(gpu_index, placement)
    }

    fn destroy_instance(&self, gpu_index: u32, placement: Placement) -> Result<(), CoreError> {
        self.inner.destroy_instance(gpu_index, placement)
    }

    fn utilization(&self, gpu_index: u32) -> Result<GpuUtilization, CoreError> {
        self.inner.utilization(gpu_index)
    }

    fn gpm_supported(&self, gpu_index: u32) -> bool {
        self.inner.gpm_supported(gpu_index)
    }

    fn busy_since_last(&self, gpu_index: u32, instance: Option<&MigInstance>) -> Result<Option<u32>, CoreError> {
        self.inner.busy_since_last(gpu_index, instance)
    }

    fn processes(&self, gpu_index: u32) -> Result<Vec<super::GpuProcess>, CoreError> {
        self.inner.processes(gpu_index)
    }

    fn exclusive_process(&self, gpu_index: u32) -> Option<bool> {
        self.inner.exclusive_process(gpu_index)
    }

    fn health(&self, gpu_index: u32) -> Result<GpuHealth, CoreError> {
        self.inner.health(gpu_index)
    }

    fn unreadable_gpus(&self) -> Vec<(u32, String)> {
        self.inner.unreadable_gpus()
    }

    fn uuid_at(&self, gpu_index: u32) -> Result<Option<String>, CoreError> {
        self.inner.uuid_at(gpu_index)
    }
}
