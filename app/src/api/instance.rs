//! The instance's health and its GPUs.

use leptos::prelude::*;
use crate::error::AppError;

use crate::views::{GpuBoard, InstanceStatus};

/// The instance's health and GPUs, looked at now. Everyone learns whether the portal
/// works and how many slices of each size are free; only administrators get what each
/// check found and the GPU board (who holds which slice, GPU and MIG device UUIDs).
#[server(endpoint = "check_instance")]
pub async fn check_instance() -> Result<InstanceStatus, AppError> {
    use crate::views::ComponentView;
    use slicehub_core::health;

    use super::ssr::{request_auth, Action};
    use slicehub_core::auth::authorize;

    let services = super::ssr::services()?;
    // The caller is read before the first await that waits, as every other server
    // function does: the request is found through the reactive owner of whoever asked,
    // and during server rendering that owner may be gone by the time the checks end.
    let admin = authorize(&request_auth().await?.caller, &Action::ViewStatus).is_ok();
    let report = health::check(&services).await;
    let component = |name: &str, c: &health::ComponentHealth| ComponentView {
        name: name.to_string(),
        ok: c.ok,
        summary: match (admin, c.ok) {
            (true, _) => c.summary.clone(),
            (false, true) => "working".to_string(),
            (false, false) => "not working right now".to_string(),
        },
    };
    Ok(InstanceStatus {
        status: report.status.to_string(),
        components: [
            Some(component("Database", &report.database)),
            Some(component("Docker engine", &report.docker)),
            Some(component("GPUs", &report.gpu)),
            report.slurm.as_ref().map(|s| component("Slurm cluster", s)),
        ]
        .into_iter()
        .flatten()
        .collect(),
        capacity: capacity::capacity(&services).await,
        board: match admin {
            true => Some(board::board(&services).await?),
            false => None,
        },
        viewer_is_admin: admin,
        checked_at: super::ssr::clock(),
        checked_at_ms: super::ssr::now_ms(),
        version: env!("CARGO_PKG_VERSION").to_string(),
    })
}

/// Every GPU with the MIG instances placed on it.
#[server(endpoint = "read_gpus")]
pub async fn read_gpus() -> Result<GpuBoard, AppError> {
    use super::ssr::{require, Action};
    require(Action::ViewGpus).await?;
    let services = super::ssr::services()?;
    board::board(&services).await
}

/// Drains GPU `index` (no new sessions on it; those running go on) or returns it to
/// service.
#[server(endpoint = "set_gpu_drained")]
pub async fn set_gpu_drained(index: u32, drained: bool) -> Result<(), AppError> {
    use super::ssr::{actor, require, services, Action};
    let caller = require(Action::OperateGpus).await?;
    slicehub_core::fleet::set_drained(&services()?, index, drained, &actor(&caller))
        .await?;
    Ok(())
}

#[cfg(feature = "ssr")]
mod capacity {
    use slicehub_core::gpu::BackendKind;
    use slicehub_core::Services;

    use crate::views::{GpuCapacity, ProfileOption};

    /// How many more sessions of each profile fit now, and how many wait:
    /// counts only, nothing that names a person, a session or a device. GPUs that cannot
    /// be read count as no free slices (the GPU check says why, to administrators).
    pub async fn capacity(services: &Services) -> GpuCapacity {
        let profiles = match services.sessions.known_profiles().await {
            Ok(known) => services
                .sessions
                .availability(&known)
                .await
                .unwrap_or_default(),
            Err(_) => Vec::new(),
        };
        GpuCapacity {
            simulated: services.gpus.kind() == BackendKind::Simulated,
            profiles: profiles
                .into_iter()
                .map(|a| ProfileOption {
                    per_hour: slicehub_core::quotas::per_hour_text(&a.profile),
                    name: a.profile,
                    free: a.free,
                    queued: a.queued,
                    wait: None,
                    affordable: true,
                    guarantees: a.guarantees,
                })
                .collect(),
        }
    }
}

#[cfg(feature = "ssr")]
mod board {
    use crate::error::AppError;
    use slicehub_core::fleet::{self, GpuSnapshot};
    use slicehub_core::gpu::{BackendKind, MigMode, Sharing};
    use slicehub_core::Services;

    use crate::views::{GpuBoard, GpuLayoutView, GpuView, InstanceView};

    pub async fn board(services: &Services) -> Result<GpuBoard, AppError> {
        let snapshots = fleet::snapshot(services)
            .await?;
        let holders = holders(services)
            .await?;
        let latest = services.sessions.latest_slice_samples();
        let bookings = services.sessions.bookings().await?;
        Ok(GpuBoard {
            cluster: cluster(services).await,
            bookings: bookings.iter().map(crate::api::bookings::ssr::view_of).collect(),
            simulated: services.gpus.kind() == BackendKind::Simulated,
            backend: services.gpus.describe(),
            gpus: snapshots
                .into_iter()
                .map(|s| layout_view(s, &holders, &latest))
                .collect(),
            refreshed_at: super::super::ssr::clock(),
            refreshed_at_ms: super::super::ssr::now_ms(),
        })
    }

    /// The Slurm pool's nodes; a cluster that cannot be read is said so, not an error of
    /// the whole page.
    async fn cluster(services: &Services) -> Option<crate::views::SlurmPoolView> {
        use crate::views::{SlurmGresView, SlurmNodeView, SlurmPoolView};
        let config = &services.config;
        if config.slurm.url.is_none() {
            return None;
        }
        let courses = if config.slurm.courses.is_empty() {
            "no course yet (slurm.courses)".to_string()
        } else {
            config
                .slurm.courses
                .iter()
                .map(|c| match c.split_once('=') {
                    Some((code, partition)) => format!("{} (partition {})", code.trim(), partition.trim()),
                    None if c == "*" => format!("every other course (partition {})", config.slurm.partition),
                    None => format!("{c} (partition {})", config.slurm.partition),
                })
                .collect::<Vec<_>>()
                .join(", ")
        };
        let (nodes, problem) = match services.sessions.slurm_nodes().await {
            Ok(nodes) => (nodes, None),
            Err(e) => {
                tracing::warn!(error = %e, "the Slurm cluster's nodes cannot be read");
                (Vec::new(), Some("The Slurm cluster is not answering right now; its nodes show again when it does.".to_string()))
            }
        };
        Some(SlurmPoolView {
            courses,
            problem,
            nodes: nodes
                .into_iter()
                .map(|n| SlurmNodeView {
                    available: !n.unavailable(),
                    state: std::iter::once(n.state.clone()).chain(n.flags.iter().cloned()).collect::<Vec<_>>().join(" · "),
                    reason: n.reason.clone(),
                    partitions: n.partitions.join(", "),
                    gres: n
                        .gres
                        .iter()
                        .map(|g| SlurmGresView {
                            profile: if g.profile.is_empty() { "gpu".into() } else { g.profile.clone() },
                            used: n.used.iter().find(|u| u.profile == g.profile).map_or(0, |u| u.count),
                            total: g.count,
                        })
                        .collect(),
                    name: n.name,
                })
                .collect(),
        })
    }

    /// (GPU uuid, profile id, start) → (`username · session`, session id) for every slice a
    /// session holds.
    async fn holders(
        services: &Services,
    ) -> Result<Vec<((String, u32, u8), (String, String))>, slicehub_core::CoreError> {
        use slicehub_core::sessions::SessionState;
        let live: Vec<SessionState> = SessionState::ALL
            .into_iter()
            .filter(|s| !s.is_final())
            .collect();
        Ok(services
            .store
            .gpu_sessions_in(&live)
            .await?
            .into_iter()
            .filter_map(|s| {
                let p = s.placement?;
                Some((
                    (p.gpu_uuid, p.profile_id, p.start),
                    (format!("{} · {}", s.username, s.id), s.id),
                ))
            })
            .collect())
    }

    fn gib(mib: u64) -> String {
        format!("{:.0} GB", mib as f64 / 1024.0)
    }

    fn layout_view(
        s: GpuSnapshot,
        holders: &[((String, u32, u8), (String, String))],
        latest: &std::collections::HashMap<String, slicehub_core::sessions::SliceNow>,
    ) -> GpuLayoutView {
        let instances = s
            .instances
            .iter()
            .map(|placed| {
                let i = &placed.instance;
                let holder = holders
                    .iter()
                    .find(|((gpu, profile, start), _)| {
                        *gpu == s.info.uuid && *profile == i.placement.profile_id && *start == i.placement.start
                    })
                    .map(|(_, who)| who);
                let sample = holder.and_then(|(_, id)| latest.get(id)).map(|now| now.sample);
                InstanceView {
                    profile: i.profile_name.clone(),
                    start: i.placement.start,
                    size: placed.memory_slices,
                    holder: holder.map(|(who, _)| who.clone()),
                    mig_uuid: i.mig_uuid.clone(),
                    memory_used: sample
                        .and_then(|s| s.memory_mib)
                        .or(i.memory_used_mib)
                        .map(|m| format!("{m} MiB")),
                    busy: sample.and_then(|s| s.busy_percent).map(|b| format!("{b}% busy")),
                }
            })
            .collect::<Vec<InstanceView>>();
        // A GPU used whole has one instance that is always there: it is free while nobody
        // holds it, whatever its memory slices say.
        let whole = s.info.mig_mode != MigMode::Enabled;
        let whole_free = whole && instances.iter().all(|i| i.holder.is_none());
        let (mode, free, placeable) = if let Some(shares) = s.shares {
            let open = instances.iter().filter(|i| i.holder.is_none()).count();
            let placeable = match (open, s.drained_by.is_some()) {
                (0, _) | (_, true) => Vec::new(),
                (n, false) => instances.first().map(|i| format!("{} ×{n}", i.profile)).into_iter().collect(),
            };
            let mode = match shares.sharing {
                Sharing::Mps => format!("{} capped shares (MPS)", shares.count),
                Sharing::TimeSliced => format!("{} time-sliced shares, no isolation", shares.count),
            };
            (mode, format!("{open} of {} shares", shares.count), placeable)
        } else if whole {
            let placeable = match (whole_free, s.drained_by.is_some()) {
                (true, false) => instances.iter().map(|i| i.profile.clone()).collect(),
                _ => Vec::new(),
            };
            let free = if whole_free { "the whole GPU" } else { "none: in use" };
            ("none (used whole)".to_string(), free.to_string(), placeable)
        } else {
            // A drained GPU places nothing, whatever room it has.
            let placeable = if s.drained_by.is_some() { Vec::new() } else { s.placeable.clone() };
            (s.mode.label(), format!("{} of 8 memory slices", s.free_slices), placeable)
        };
        GpuLayoutView {
            gpu: GpuView {
                index: s.info.index,
                name: s.info.name.clone(),
                uuid: s.info.uuid.clone(),
                memory: gib(s.info.memory_mib),
                mig: match s.info.mig_mode {
                    MigMode::Enabled => "MIG enabled",
                    MigMode::Disabled => "MIG off: used whole",
                    MigMode::Unsupported => "no MIG: used whole",
                }
                .to_string(),
            },
            mode,
            instances,
            free,
            placeable,
            error: s.error.clone(),
            drained_by: s.drained_by.clone(),
            guarantees: s.guarantees.clone(),
        }
    }
}
