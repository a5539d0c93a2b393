//! One look at every outside system the portal depends on.
//!
//! Anyone may ask (`/healthz`, the status panel), and each look probes the database, the
//! Docker engine, the GPUs and the Slurm cluster. So a look answers for [`FRESH_FOR`]:
//! every caller within that window gets the same report, and while one look runs, others
//! wait for it instead of probing again.

use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

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
    /// The background loops (reconcile, sampling, idle, the Slurm watcher): not ok while
    /// one's last pass panicked.
    pub background: ComponentHealth,
    pub engine: EngineStatus,
    pub gpu_backend: BackendKind,
    /// When the probes ran (ms since the epoch): the same for every caller within
    /// [`FRESH_FOR`].
    pub checked_at_ms: i64,
}

/// How long one look at the outside systems answers for.
pub const FRESH_FOR: Duration = Duration::from_secs(3);

/// The portal's health: the last look if it is younger than [`FRESH_FOR`], else a new one.
pub async fn check(services: &Services) -> HealthReport {
    cache_of(services).get(FRESH_FOR, || probe(services)).await
}

/// One report, kept for a while; one look at a time refreshes it.
struct Cache<T> {
    last: tokio::sync::Mutex<Option<(Instant, T)>>,
}

impl<T: Clone> Cache<T> {
    fn new() -> Self {
        Cache { last: tokio::sync::Mutex::new(None) }
    }

    /// The kept value if it is younger than `fresh_for`; else `look`'s, kept. Callers that
    /// come while a look runs wait for it and share its answer.
    async fn get<F, Fut>(&self, fresh_for: Duration, look: F) -> T
    where
        F: FnOnce() -> Fut,
        Fut: std::future::Future<Output = T>,
    {
        let mut last = self.last.lock().await;
        if let Some((at, value)) = last.as_ref() {
            if at.elapsed() < fresh_for {
                return value.clone();
            }
        }
        let value = look().await;
        *last = Some((Instant::now(), value.clone()));
        value
    }
}

/// Each `Services` (one per portal; tests build several in one process) has its own
/// cache, found by its configuration. A `Weak` keeps the configuration's allocation, so
/// its address cannot be reused by another while the entry exists; entries whose
/// configuration is gone are dropped.
type Caches = Vec<(Weak<crate::config::Config>, Arc<Cache<HealthReport>>)>;
static CACHES: Mutex<Caches> = Mutex::new(Vec::new());

fn cache_of(services: &Services) -> Arc<Cache<HealthReport>> {
    let mut caches = CACHES.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    caches.retain(|(config, _)| config.strong_count() > 0);
    let me = Arc::as_ptr(&services.config);
    if let Some((_, cache)) = caches.iter().find(|(config, _)| std::ptr::eq(config.as_ptr(), me)) {
        return cache.clone();
    }
    let cache = Arc::new(Cache::new());
    caches.push((Arc::downgrade(&services.config), cache.clone()));
    cache
}

/// Probes everything now.
async fn probe(services: &Services) -> HealthReport {
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
                "Docker {} (API {}){}{}",
                engine.version.as_deref().unwrap_or("?"),
                engine.api_version.as_deref().unwrap_or("?"),
                if engine.nvidia_runtime {
                    ", NVIDIA runtime"
                } else {
                    ""
                },
                engine.disk.map(|d| format!(", {}", d.words())).unwrap_or_default()
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
            let unreadable = services.gpus.unreadable_gpus();
            for (index, why) in &unreadable {
                summary.push_str(&format!("; GPU {index} cannot be read ({why})"));
            }
            ComponentHealth { ok: !nvml_failed && unreadable.is_empty(), summary }
        }
        Err(e) => ComponentHealth {
            ok: false,
            summary: e.to_string(),
        },
    };

    let slurm = match &services.config.slurm.url {
        None => None,
        Some(url) => Some(slurm_health(services, url).await),
    };

    let background = background_health(services);
    let status = if !database.ok {
        "down"
    } else if docker.ok && gpu.ok && background.ok && slurm.as_ref().is_none_or(|s| s.ok) {
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
        background,
        engine,
        gpu_backend: services.gpus.kind(),
        checked_at_ms: crate::store::now_ms(),
    }
}

/// The Slurm cluster's nodes, read within the same bound as the engine's probe.
async fn slurm_health(services: &Services, url: &str) -> ComponentHealth {
    match tokio::time::timeout(PROBE_TIMEOUT, services.sessions.slurm_nodes()).await {
        Ok(Ok(nodes)) => {
            let up = nodes.iter().filter(|n| !n.unavailable()).count();
            let gres: u32 = nodes.iter().flat_map(|n| n.gres.iter().map(|g| g.count)).sum();
            ComponentHealth {
                ok: up > 0,
                summary: format!("{url}: {up} of {} nodes up, {gres} GPU slices, GPUs and shards", nodes.len()),
            }
        }
        Ok(Err(e)) => ComponentHealth { ok: false, summary: format!("down: {e}") },
        Err(_) => ComponentHealth {
            ok: false,
            summary: format!("down: no answer from {url} within {}s", PROBE_TIMEOUT.as_secs()),
        },
    }
}

/// The first peer seen sending `X-Forwarded-For` without being in `server.trusted_proxies`
/// (a reverse proxy nobody told the portal about: every client then looks like it).
static UNTRUSTED_FORWARDER: std::sync::OnceLock<std::net::IpAddr> = std::sync::OnceLock::new();

/// Records a peer that forwarded for others untrusted; true the first time.
pub fn note_untrusted_forwarder(peer: std::net::IpAddr) -> bool {
    UNTRUSTED_FORWARDER.set(peer).is_ok()
}

/// The reverse proxy that forwards for clients without being trusted, if one was seen.
pub fn untrusted_forwarder() -> Option<std::net::IpAddr> {
    UNTRUSTED_FORWARDER.get().copied()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    async fn counted(probes: &AtomicUsize) -> usize {
        tokio::time::sleep(Duration::from_millis(20)).await;
        probes.fetch_add(1, Ordering::SeqCst) + 1
    }

    #[tokio::test]
    async fn a_flood_of_checks_probes_once_per_window() {
        let cache = Cache::new();
        let probes = AtomicUsize::new(0);
        let window = Duration::from_millis(400);
        // Fifty at once: one probe, one answer for all.
        let answers =
            futures_util::future::join_all((0..50).map(|_| cache.get(window, || counted(&probes)))).await;
        assert!(answers.iter().all(|a| *a == 1), "{answers:?}");
        assert_eq!(cache.get(window, || counted(&probes)).await, 1, "still fresh");
        assert_eq!(probes.load(Ordering::SeqCst), 1);
        // Once the window has passed, the next check probes again.
        tokio::time::sleep(window + Duration::from_millis(50)).await;
        assert_eq!(cache.get(window, || counted(&probes)).await, 2);
        assert_eq!(cache.get(window, || counted(&probes)).await, 2);
        assert_eq!(probes.load(Ordering::SeqCst), 2);
    }
}

/// The background work: the recovery after a start done, the session networks' firewall
/// rules in place, no loop whose last pass panicked, none stuck in a pass; each loop's last
/// finished pass.
fn background_health(services: &Services) -> ComponentHealth {
    use crate::sessions::{failing_loops, loop_states, STALLED_AFTER};
    let loops = loop_states(STALLED_AFTER);
    let mut problems = Vec::new();
    if services.sessions.is_recovering() {
        problems.push("recovering: picking up the sessions of the last run".to_string());
    }
    if let Some(problem) = services.sessions.firewall_problem() {
        problems.push(format!("the session networks' firewall rules are missing and could not be put back: {problem}"));
    }
    problems.extend(failing_loops().iter().map(|(name, panic)| format!("{name}: last pass panicked ({panic})")));
    problems.extend(loops.iter().filter_map(|l| {
        l.stalled_for_secs.map(|secs| format!("{}: a pass has been running for {secs} s (a call that hangs?)", l.name))
    }));
    if !problems.is_empty() {
        return ComponentHealth { ok: false, summary: problems.join("; ") };
    }
    let passes: Vec<String> = loops
        .iter()
        .filter_map(|l| l.last_pass_secs_ago.map(|secs| format!("{} {secs} s ago", l.name)))
        .collect();
    ComponentHealth {
        ok: true,
        summary: match passes.is_empty() {
            true => "every background loop's last pass finished".to_string(),
            false => format!("every background loop's last pass finished: {}", passes.join(", ")),
        },
    }
}
