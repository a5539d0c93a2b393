//! How busy each running session's slice is and how much memory it uses, sampled by one
//! loop every `sessions.sample_seconds` (never per request) and kept in memory for the
//! last [`KEPT_SAMPLES`] readings.
//!
//! On NVML GPUs memory is the MIG instance's own; activity is the whole GPU's utilization
//! while MIG is off (the session has the GPU), and not read per MIG instance yet (that
//! needs GPM samples per instance, which the lent H100 cannot show with MIG disabled). On
//! simulated GPUs both come from the session's container: its CPU use in percent of one
//! core (capped at 100) and its memory, so the path runs end to end without a GPU.

use std::collections::{HashMap, VecDeque};

use super::activity_state::{ActivityState, GpuIdentity, Series, SliceNow, SliceSample, KEPT_SAMPLES};
use super::service::Sessions;
use super::SessionState;
use crate::gpu::{BackendKind, GpuUtilization, MigInstance, MigMode};
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
}

impl Sessions {
    /// Samples every ready session's slice once; returns how many were sampled.
    pub async fn sample_slices(&self) -> Result<usize, CoreError> {
        let running = self.ctx.store.gpu_sessions_in(&[SessionState::Ready]).await?;
        let simulated = self.ctx.gpus.kind() == BackendKind::Simulated;
        let reading: Vec<GpuReading> = self.ctx.on_gpus(|gpus| {
            let mut out = Vec::new();
            for info in gpus.list_gpus()? {
                let index = info.index;
                let utilization = gpus.utilization(index).unwrap_or_default();
                let mig = info.mig_mode == MigMode::Enabled;
                let instances = gpus.instances(index).unwrap_or_default();
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
    /// container), GPUs with MIG off (the whole GPU is the slice), and MIG GPUs that keep
    /// GPM samples per instance (Hopper and newer). Elsewhere jobs are never judged idle.
    pub async fn slice_activity_readable(&self) -> bool {
        self.ctx.on_gpus(|gpus| {
            if gpus.kind() == BackendKind::Simulated {
                return Ok(true);
            }
            let list = gpus.list_gpus()?;
            Ok(list.iter().all(|g| g.mig_mode != MigMode::Enabled || gpus.gpm_supported(g.index)))
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

    fn activity_state(&self) -> std::sync::MutexGuard<'_, ActivityState> {
        self.activity.lock().unwrap_or_else(|p| p.into_inner())
    }
}
