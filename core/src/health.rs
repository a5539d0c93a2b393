//! One look at every outside system the portal depends on.

use serde::Serialize;

use crate::gpu::BackendKind;
use crate::runtime::{EngineStatus, PROBE_TIMEOUT};
use crate::Services;

#[derive(Debug, Clone, Serialize)]
pub struct ComponentHealth {
    pub ok: bool,
    pub summary: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct HealthReport {
    /// `ok`, or `degraded` when the portal runs but something it needs does not,
    /// or `down` when the database cannot be used.
    pub status: &'static str,
    pub database: ComponentHealth,
    pub docker: ComponentHealth,
    pub gpu: ComponentHealth,
    /// The Slurm cluster, when one is configured.
    pub slurm: Option<ComponentHealth>,
    pub engine: EngineStatus,
    pub gpu_backend: BackendKind,
}

pub async fn check(services: &Services) -> HealthReport {
    let store = &services.store;
    let database = match store.ping().await {
        Ok(()) => ComponentHealth {
            ok: true,
            summary: format!("{} at {}", store.kind().label(), store.url_redacted()),
        },
        Err(e) => ComponentHealth {
            ok: false,
            summary: e.to_string(),
        },
    };

    let engine = services.engine.probe().await;
    let docker = if engine.reachable {
        ComponentHealth {
            ok: true,
            summary: format!(
                "Docker {} (API {}){}",
                engine.version.as_deref().unwrap_or("?"),
                engine.api_version.as_deref().unwrap_or("?"),
                if engine.nvidia_runtime {
                    ", NVIDIA runtime"
                } else {
                    ""
                }
            ),
        }
    } else {
        ComponentHealth {
            ok: false,
            summary: format!("down: {}", engine.reason.as_deref().unwrap_or("unknown")),
        }
    };

    let gpu = match services.on_gpus(|b| b.list_gpus()).await {
        Ok(list) => {
            let plural = if list.len() == 1 { "" } else { "s" };
            let mut summary = format!("{} — {} GPU{plural}", services.gpus.describe(), list.len());
            if let Some(why) = &services.gpu_fallback_reason {
                summary.push_str(&format!(" ({})", why.reason));
            }
            let nvml_failed = services.gpu_fallback_reason.as_ref().is_some_and(|f| f.nvml_failed);
            ComponentHealth { ok: !nvml_failed, summary }
        }
        Err(e) => ComponentHealth {
            ok: false,
            summary: e.to_string(),
        },
    };

    let slurm = match services.config.slurm_url.is_empty() {
        true => None,
        false => Some(slurm_health(services).await),
    };

    let status = if !database.ok {
        "down"
    } else if docker.ok && gpu.ok && slurm.as_ref().is_none_or(|s| s.ok) {
        "ok"
    } else {
        "degraded"
    };
    HealthReport {
        status,
        database,
        docker,
        gpu,
        slurm,
        engine,
        gpu_backend: services.gpus.kind(),
    }
}

/// The Slurm cluster's nodes, read within the same bound as the engine's probe.
async fn slurm_health(services: &Services) -> ComponentHealth {
    let url = &services.config.slurm_url;
    match tokio::time::timeout(PROBE_TIMEOUT, services.sessions.slurm_nodes()).await {
        Ok(Ok(nodes)) => {
            let up = nodes.iter().filter(|n| !n.unavailable()).count();
            let gres: u32 = nodes.iter().flat_map(|n| n.gres.iter().map(|g| g.count)).sum();
            ComponentHealth {
                ok: up > 0,
                summary: format!("{url}: {up} of {} nodes up, {gres} MIG GRES", nodes.len()),
            }
        }
        Ok(Err(e)) => ComponentHealth { ok: false, summary: format!("down: {e}") },
        Err(_) => ComponentHealth {
            ok: false,
            summary: format!("down: no answer from {url} within {}s", PROBE_TIMEOUT.as_secs()),
        },
    }
}
