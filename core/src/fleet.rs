//! The GPUs as the portal runs them: each GPU's mode (dynamic or an admin's static
//! layout), what is placed on it now, and what could still be placed.

use serde::Serialize;
use slicehub_mig::{Layout, Placement, Shares};

use crate::gpu::{GpuBackend, GpuInfo, MigInstance, MigMode};
use crate::store::Store;
use crate::{CoreError, Services};

/// How a GPU's instances come and go.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum GpuMode {
    /// The portal creates the instance a claim needs and destroys it on release.
    Dynamic,
    /// An admin applied this named layout (`all-1g.10gb`, `all-balanced`, …); claims take
    /// its free instances.
    Static(String),
}

impl GpuMode {
    pub fn label(&self) -> String {
        match self {
            GpuMode::Dynamic => "dynamic".to_string(),
            GpuMode::Static(name) => format!("static: {name}"),
        }
    }

    fn stored(&self) -> String {
        match self {
            GpuMode::Dynamic => "dynamic".to_string(),
            GpuMode::Static(name) => format!("static:{name}"),
        }
    }

    fn parse_stored(text: &str) -> GpuMode {
        match text.strip_prefix("static:") {
            Some(name) => GpuMode::Static(name.to_string()),
            None => GpuMode::Dynamic,
        }
    }
}

/// An instance with the number of memory slices it covers.
#[derive(Debug, Clone, Serialize)]
pub struct PlacedInstance {
    pub instance: MigInstance,
    pub memory_slices: u8,
}

/// One GPU now.
#[derive(Debug, Clone, Serialize)]
pub struct GpuSnapshot {
    pub info: GpuInfo,
    pub mode: GpuMode,
    pub instances: Vec<PlacedInstance>,
    /// Memory slices (of 8) no instance covers.
    pub free_slices: u8,
    /// Profiles with at least one free start now, e.g. `["1g.10gb", "2g.20gb"]`.
    pub placeable: Vec<String>,
    /// Set when the GPU's instances could not be read.
    pub error: Option<String>,
    /// Who drained the GPU: no new session is placed on it while set.
    pub drained_by: Option<String>,
    /// How the GPU is split into shares, when it is.
    pub shares: Option<Shares>,
    /// What a session on it is guaranteed, in words (from its first profile).
    pub guarantees: Option<String>,
}

fn mode_key(uuid: &str) -> String {
    format!("gpu.mode.{uuid}")
}

fn drain_key(uuid: &str) -> String {
    format!("gpu.drain.{uuid}")
}

/// Who drained the GPU, while it is drained.
pub async fn drained_by(store: &Store, uuid: &str) -> Result<Option<String>, CoreError> {
    Ok(store.setting(&drain_key(uuid)).await?.filter(|by| !by.is_empty()))
}

/// Drains GPU `gpu_index` (no new placements; sessions on it run to their end) or returns
/// it to service, when the queue is served again at once. Audited as `gpu.drain` /
/// `gpu.undrain`.
pub async fn set_drained(services: &Services, gpu_index: u32, drained: bool, actor: &str) -> Result<GpuInfo, CoreError> {
    let info = services
        .on_gpus(|b| b.list_gpus())
        .await?
        .into_iter()
        .find(|g| g.index == gpu_index)
        .ok_or_else(|| CoreError::NotFound(format!("There is no GPU {gpu_index}.")))?;
    mark_drained(&services.store, &info.uuid, drained, actor).await?;
    if !drained {
        services.sessions.dispatch().await?;
    }
    Ok(info)
}

/// Records GPU `uuid` as drained or in service, audited.
pub async fn mark_drained(store: &Store, uuid: &str, drained: bool, actor: &str) -> Result<(), CoreError> {
    store.set_setting(&drain_key(uuid), if drained { actor } else { "" }).await?;
    let action = if drained { "gpu.drain" } else { "gpu.undrain" };
    store.audit(actor, action, uuid, "").await?;
    Ok(())
}

pub async fn mode(store: &Store, uuid: &str) -> Result<GpuMode, CoreError> {
    Ok(store
        .setting(&mode_key(uuid))
        .await?
        .map(|s| GpuMode::parse_stored(&s))
        .unwrap_or(GpuMode::Dynamic))
}

/// Every GPU with its instances. A GPU whose instances cannot be read is still listed,
/// with the reason in `error`.
pub async fn snapshot(services: &Services) -> Result<Vec<GpuSnapshot>, CoreError> {
    let gpus = services.on_gpus(|b| b.list_gpus()).await?;
    let mut out = Vec::with_capacity(gpus.len());
    for info in gpus {
        let index = info.index;
        let read = services
            .on_gpus(move |b| {
                let catalog = b.catalog(index)?;
                let instances = b.instances(index)?;
                let layout =
                    Layout::from_placements(&catalog, instances.iter().map(|i| i.placement))
                        .map_err(|e| CoreError::Gpu(e.to_string()))?;
                let placed: Vec<PlacedInstance> = instances
                    .into_iter()
                    .map(|instance| PlacedInstance {
                        memory_slices: catalog
                            .profile_by_id(instance.placement.profile_id)
                            .map(|p| p.memory_slices)
                            .unwrap_or(1),
                        instance,
                    })
                    .collect();
                let covered: u8 = placed.iter().map(|p| p.memory_slices).sum();
                let placeable = catalog
                    .profiles()
                    .iter()
                    .filter(|p| {
                        layout
                            .free_starts(&catalog, p)
                            .map(|s| !s.is_empty())
                            .unwrap_or(false)
                    })
                    .map(|p| p.name.clone())
                    .collect();
                let guarantees = catalog.profiles().first().map(|p| catalog.guarantees(p));
                Ok((placed, 8u8.saturating_sub(covered), placeable, catalog.shares(), guarantees))
            })
            .await;
        let mode = mode(&services.store, &info.uuid).await?;
        let drained_by = drained_by(&services.store, &info.uuid).await?;
        out.push(match read {
            Ok((instances, free_slices, placeable, shares, guarantees)) => GpuSnapshot {
                info,
                mode,
                instances,
                free_slices,
                placeable,
                error: None,
                drained_by,
                shares,
                guarantees,
            },
            Err(e) => GpuSnapshot {
                info,
                mode,
                instances: Vec::new(),
                free_slices: 0,
                placeable: Vec::new(),
                error: Some(e.to_string()),
                drained_by,
                shares: None,
                guarantees: None,
            },
        });
    }
    Ok(out)
}

/// Makes GPU `gpu_index` carry the named static layout exactly: instances not in it are
/// destroyed, missing ones created (instances already in place are kept), then the mode
/// is recorded. `dynamic` instead returns the GPU to dynamic mode, destroying nothing.
pub async fn apply_layout(
    services: &Services,
    gpu_index: u32,
    name: &str,
) -> Result<GpuMode, CoreError> {
    let gpus = services.on_gpus(|b| b.list_gpus()).await?;
    let info = gpus
        .into_iter()
        .find(|g| g.index == gpu_index)
        .ok_or_else(|| CoreError::NotFound(format!("there is no GPU {gpu_index}")))?;
    if !name.eq_ignore_ascii_case("dynamic") {
        match info.mig_mode {
            MigMode::Enabled => {}
            MigMode::Disabled => {
                return Err(CoreError::InvalidRequest(format!(
                    "GPU {gpu_index} has MIG off, so it is used whole: a MIG layout needs MIG on \
                     (nvidia-smi -i {gpu_index} -mig 1, then a GPU reset)"
                )))
            }
            MigMode::Unsupported => {
                return Err(CoreError::InvalidRequest(format!(
                    "GPU {gpu_index} ({}) has no MIG, so it is used whole: it takes no MIG layout",
                    info.name
                )))
            }
        }
    }
    // A static layout replaces the GPU's instances: never under a running session. (A
    // claim placed by the serving portal between this check and the change is not
    // excluded; apply layouts when the GPU is drained.)
    let held: Vec<String> = services
        .store
        .held_slices()
        .await?
        .into_iter()
        .filter(|h| h.gpu_uuid == info.uuid)
        .map(|h| h.session_id)
        .collect();
    if !held.is_empty() && !name.eq_ignore_ascii_case("dynamic") {
        return Err(CoreError::Conflict(format!(
            "GPU {gpu_index} has slices held by {} live session(s) ({}); stop them first, \
             then apply the layout",
            held.len(),
            held.join(", ")
        )));
    }
    let mode = if name.eq_ignore_ascii_case("dynamic") {
        GpuMode::Dynamic
    } else {
        let layout_name = name.to_string();
        services
            .on_gpus(move |b| converge(b, gpu_index, &layout_name))
            .await?;
        GpuMode::Static(name.to_string())
    };
    services
        .store
        .set_setting(&mode_key(&info.uuid), &mode.stored())
        .await?;
    services
        .store
        .audit("system", "gpu.layout", &info.uuid, &mode.label())
        .await?;
    Ok(mode)
}

fn converge(backend: &dyn GpuBackend, gpu_index: u32, name: &str) -> Result<(), CoreError> {
    let catalog = backend.catalog(gpu_index)?;
    let target = catalog
        .static_layout(name)
        .map_err(|e| CoreError::InvalidRequest(e.to_string()))?
        .layout;
    let existing: Vec<Placement> = backend
        .instances(gpu_index)?
        .into_iter()
        .map(|i| i.placement)
        .collect();
    for placement in existing.iter().filter(|p| !target.contains(**p)) {
        backend.destroy_instance(gpu_index, *placement)?;
    }
    for placement in target.placements().iter().filter(|p| !existing.contains(p)) {
        backend.create_instance(gpu_index, *placement)?;
    }
    Ok(())
}
