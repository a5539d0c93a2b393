//! How busy each running session's slice is and how much memory it uses, sampled by one
//! loop every `sessions.sample_seconds` (never per request) and kept in memory for the
//! last [`KEPT_SAMPLES`] readings.
//!
//! On NVML GPUs memory is the MIG instance's own; activity is the whole GPU's utilization
//! while MIG is off (the session has the GPU), and each MIG instance's own GPM figure
//! where the GPU keeps one. On a GPU split into shares both are the session's own
//! processes' (NVML process samples, each process placed in its container by its
//! cgroup), since the GPU's figures mix in the other shares' sessions; under MPS the
//! kernels run in the MPS server, so the driver gives a client's memory but not its
//! activity (docs/hardware/shares/), and an MPS share's activity stays unread. On
//! simulated GPUs both come from the session's container: its CPU use in percent of one
//! core (capped at 100) and its memory, so the path runs end to end without a GPU.

use std::collections::{HashMap, VecDeque};

use super::activity_state::{ActivityState, GpuIdentity, Series, SliceNow, SliceSample, KEPT_SAMPLES};
use super::service::Sessions;
use super::SessionState;
use crate::gpu::{BackendKind, GpuUtilization, MigInstance, MigMode};
use super::process_owner::container_of_pid;
use crate::gpu::{GpuProcess, Sharing};
use crate::runtime::ContainerUsage;
use crate::CoreError;

/// What one pass reads of one GPU.
struct GpuReading {
    index: u32,
    uuid: String,
    model: String,
    mig: bool,
    utilization: GpuUtilization,
    /// How busy the whole GPU was since the last pass (GPM), with MIG off.
    whole_busy: Option<u32>,
    /// Its MIG instances, each with how busy it was since the last pass (GPM).
    instances: Vec<(MigInstance, Option<u32>)>,
    /// On a GPU split into shares: its processes with the container each runs in, or
    /// `None` when they could not be read.
    processes: Option<Vec<(GpuProcess, Option<String>)>>,
    /// How the GPU is split into shares, if it is.
    sharing: Option<Sharing>,
}

impl Sessions {
    /// Samples every ready session's slice once; returns how many were sampled.
    pub async fn sample_slices(&self) -> Result<usize, CoreError> {
        let running = self.ctx.store.gpu_sessions_in(&[SessionState::Ready]).await?;
        let simulated = self.ctx.gpus.kind() == BackendKind::Simulated;
        let reading: Vec<GpuReading> = self.ctx.on_gpus(move |gpus| {
            let mut out = Vec::new();
            for info in gpus.list_gpus()? {
                let index = info.index;
                let utilization = gpus.utilization(index).unwrap_or_default();
                let mig = info.mig_mode == MigMode::Enabled;
                let instances = gpus.instances(index).unwrap_or_default();
                let sharing = gpus.catalog(index).ok().and_then(|c| c.shares()).map(|s| s.sharing);
                let processes = match (sharing, simulated) {
                    (Some(_), false) => match gpus.processes(index) {
                        Ok(list) => Some(list.into_iter().map(|p| (p, container_of_pid(p.pid))).collect()),
                        Err(e) => {
                            tracing::debug!(gpu = index, error = %e, "slice sample: processes not read");
                            None
                        }
                    },
                    _ => None,
                };
                let busy = |instance: Option<&MigInstance>| match gpus.busy_since_last(index, instance) {
                    Ok(busy) => busy,
                    Err(e) => {
                        tracing::debug!(gpu = index, error = %e, "slice sample: GPM not read");
                        None
                    }
                };
                out.push(GpuReading {
                    index,
                    uuid: info.uuid.clone(),
                    model: info.name.clone(),
                    mig,
                    whole_busy: if mig { None } else { busy(None) },
                    instances: instances.into_iter().map(|i| {
                        let busy = if mig { busy(Some(&i)) } else { None };
                        (i, busy)
                    }).collect(),
                    processes,
                    sharing,
                    utilization,
                });
            }
            Ok(out)
        })
        .await?;
        let now = self.now_ms();
        // The engine takes about a second per reading whatever is asked, so all of the
        // containers are read at once: a pass lasts one reading, not one per session.
        let readings: HashMap<String, Option<ContainerUsage>> = if simulated {
            let reads = running.iter().filter_map(|s| Some((s.id.clone(), s.container.clone()?))).map(|(id, container)| async move {
                let usage = match self.ctx.engine.usage(&container).await {
                    Ok(usage) => usage,
                    Err(e) => {
                        tracing::debug!(session = %id, error = %e, "slice sample: container use not read");
                        None
                    }
                };
                (id, usage)
            });
            futures_util::future::join_all(reads).await.into_iter().collect()
        } else {
            HashMap::new()
        };
        let earlier_usage = self.activity_state().last_usage.clone();
        let owners = self.share_containers(&running, &reading).await;
        let mut taken = Vec::with_capacity(running.len());
        let mut usages = Vec::new();
        for session in &running {
            let (Some(_), Some(placement)) = (&session.container, &session.placement) else { continue };
            let gpu = reading.iter().find(|g| g.uuid == placement.gpu_uuid);
            let instance = gpu.and_then(|g| {
                g.instances
                    .iter()
                    .find(|(i, _)| i.placement.profile_id == placement.profile_id && i.placement.start == placement.start)
            });
            let mig_instance = instance
                .filter(|_| gpu.is_some_and(|g| g.mig))
                .map(|(i, _)| (i.gpu_instance_id, i.profile_name.clone()));
            let sample = if simulated {
                let usage = readings.get(&session.id).copied().flatten();
                let earlier = earlier_usage.get(&session.id).copied();
                if let Some(usage) = usage {
                    usages.push((session.id.clone(), usage));
                }
                SliceSample {
                    at_ms: now,
                    busy_percent: usage
                        .zip(earlier)
                        .and_then(|(now, before)| now.cpu_percent_since(&before))
                        .map(|p| p.clamp(0.0, 100.0).round() as u32),
                    memory_mib: usage.and_then(|u| u.memory_bytes).map(|b| b / (1024 * 1024)),
                }
            } else {
                // With MIG on: the instance's own GPM figure, or nothing (the whole GPU's
                // counters would mix in the other students'); with MIG off, the session
                // has the whole GPU.
                if let Some((g, sharing)) = gpu.and_then(|g| Some((g, g.sharing?))) {
                    let mine = owners.get(&session.id).and_then(|id| g.processes.as_ref().map(|all| own_processes(all, id)));
                    let sample = SliceSample {
                        at_ms: now,
                        busy_percent: mine.map(|(busy, _)| busy).filter(|_| sharing == Sharing::TimeSliced),
                        memory_mib: mine.map(|(_, memory)| memory),
                    };
                    let slice = format!("{}@{}", session.profile, placement.start);
                    taken.push((session.id.clone(), (placement.gpu_index, placement.gpu_uuid.clone()), slice, None, sample));
                    continue;
                }
                let busy_percent = match (gpu, instance) {
                    (Some(g), _) if !g.mig => g.whole_busy.or(g.utilization.gpu_percent),
                    (_, Some((_, busy))) => *busy,
                    (None, None) | (Some(_), None) => None,
                };
                SliceSample {
                    at_ms: now,
                    busy_percent,
                    memory_mib: instance.and_then(|(i, _)| i.memory_used_mib),
                }
            };
            let slice = format!("{}@{}", session.profile, placement.start);
            taken.push((session.id.clone(), (placement.gpu_index, placement.gpu_uuid.clone()), slice, mig_instance, sample));
        }
        let mut state = self.activity_state();
        state.series.retain(|id, _| taken.iter().any(|(t, ..)| t == id));
        state.last_usage.retain(|id, _| taken.iter().any(|(t, ..)| t == id));
        state.last_usage.extend(usages);
        for (id, (gpu_index, gpu_uuid), slice, mig_instance, sample) in taken.iter().cloned() {
            let series = state.series.entry(id).or_insert_with(|| Series {
                gpu_index,
                gpu_uuid,
                slice,
                mig_instance: None,
                samples: VecDeque::new(),
            });
            // A pass that could not read the GPU's instances keeps what an earlier one read.
            if mig_instance.is_some() {
                series.mig_instance = mig_instance;
            }
            series.samples.push_back(sample);
            while series.samples.len() > KEPT_SAMPLES {
                series.samples.pop_front();
            }
        }
        state.gpus = reading
            .into_iter()
            .map(|g| (GpuIdentity { index: g.index, uuid: g.uuid, model: g.model }, g.utilization))
            .collect();
        Ok(taken.len())
    }

    /// Whether every GPU says how busy each session's slice is: simulated ones (from the
    /// container), GPUs with MIG off (the whole GPU is the slice, or a time-sliced share
    /// its own processes), and MIG GPUs that keep GPM samples per instance (Hopper and
    /// newer); not MPS shares. Elsewhere jobs are never judged idle.
    pub async fn slice_activity_readable(&self) -> bool {
        self.ctx.on_gpus(|gpus| {
            if gpus.kind() == BackendKind::Simulated {
                return Ok(true);
            }
            let list = gpus.list_gpus()?;
            let mps = |index| gpus.catalog(index).ok().and_then(|c| c.shares()).is_some_and(|s| s.sharing == Sharing::Mps);
            Ok(list.iter().all(|g| (g.mig_mode != MigMode::Enabled || gpus.gpm_supported(g.index)) && !mps(g.index)))
        })
        .await
        .unwrap_or(false)
    }

    /// The session's samples, oldest first (empty unless it is running).
    pub fn slice_samples(&self, session_id: &str) -> Vec<SliceSample> {
        self.activity_state().series.get(session_id).map(|s| s.samples.iter().copied().collect()).unwrap_or_default()
    }

    /// The newest sample of every running session, by session id.
    pub fn latest_slice_samples(&self) -> HashMap<String, SliceNow> {
        self.activity_state()
            .series
            .iter()
            .filter_map(|(id, s)| {
                let now = SliceNow {
                    session_id: id.clone(),
                    gpu_index: s.gpu_index,
                    gpu_uuid: s.gpu_uuid.clone(),
                    slice: s.slice.clone(),
                    mig_instance: s.mig_instance.clone(),
                    sample: *s.samples.back()?,
                };
                Some((id.clone(), now))
            })
            .collect()
    }

    /// Each GPU, and its utilization, at the last pass.
    pub fn gpu_busy(&self) -> Vec<(GpuIdentity, GpuUtilization)> {
        self.activity_state().gpus.clone()
    }

    /// The container id of each running session on a shared GPU whose processes were
    /// read, asked of the engine once per session.
    async fn share_containers(&self, running: &[super::GpuSession], reading: &[GpuReading]) -> HashMap<String, String> {
        let known = self.activity_state().container_ids.clone();
        let mut out = HashMap::new();
        for session in running {
            let (Some(name), Some(placement)) = (&session.container, &session.placement) else { continue };
            if !reading.iter().any(|g| g.uuid == placement.gpu_uuid && g.processes.is_some()) {
                continue;
            }
            let id = match known.get(&session.id) {
                Some(id) => Some(id.clone()),
                None => match self.ctx.engine.status(name).await {
                    Ok(status) => status.map(|s| s.id).filter(|id| !id.is_empty()),
                    Err(e) => {
                        tracing::debug!(session = %session.id, error = %e, "slice sample: container id not read");
                        None
                    }
                },
            };
            if let Some(id) = id {
                out.insert(session.id.clone(), id);
            }
        }
        self.activity_state().container_ids = out.clone();
        out
    }

    fn activity_state(&self) -> std::sync::MutexGuard<'_, ActivityState> {
        self.activity.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// How busy the processes of container `id` kept the GPU (their sum, at most 100) and the
/// GPU memory they hold: a container with no process on the GPU is idle on it.
fn own_processes(all: &[(GpuProcess, Option<String>)], id: &str) -> (u32, u64) {
    let id = id.to_ascii_lowercase();
    let mine = all.iter().filter(|(_, owner)| owner.as_deref() == Some(id.as_str())).map(|(p, _)| p);
    let (busy, memory) = mine.fold((0u32, 0u64), |(b, m), p| (b + p.busy_percent.unwrap_or(0), m + p.memory_mib.unwrap_or(0)));
    (busy.min(100), memory)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_share_counts_only_its_own_containers_processes() {
        let p = |pid, busy, memory| GpuProcess { pid, busy_percent: busy, memory_mib: memory };
        let all = vec![
            (p(10, Some(60), Some(900)), Some("aaaa".to_string())),
            (p(11, Some(70), Some(100)), Some("aaaa".to_string())),
            (p(20, Some(95), Some(5000)), Some("bbbb".to_string())),
            (p(30, Some(99), Some(7000)), None),
        ];
        assert_eq!(own_processes(&all, "AAAA"), (100, 1000), "two processes, busy at most 100");
        assert_eq!(own_processes(&all, "bbbb"), (95, 5000));
        assert_eq!(own_processes(&all, "cccc"), (0, 0), "no process on the GPU: idle on it");
    }
}
