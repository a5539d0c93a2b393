//! Gauges read at each scrape: live sessions, the queue, and slices held and free. Three
//! grouped queries and one pass of the allocator per profile, whatever the number of
//! sessions. A GPU's and a slice's series carry the labels DCGM's exporter gives the same
//! device (`UUID`, `modelName`, `GPU_I_ID`, `GPU_I_PROFILE`), so dashboards can join them.

use prometheus::{Encoder, GaugeVec, IntGaugeVec, Opts, TextEncoder};

use std::collections::HashMap;

use super::METRICS;
use crate::sessions::GpuIdentity;
use crate::{CoreError, Services};

pub(super) struct Gauges {
    sessions: IntGaugeVec,
    queue_length: IntGaugeVec,
    queue_oldest_wait: GaugeVec,
    slices_held: IntGaugeVec,
    slices_free: IntGaugeVec,
    gpu_utilization: IntGaugeVec,
    gpu_memory_utilization: IntGaugeVec,
    slice_busy: IntGaugeVec,
    slice_memory: IntGaugeVec,
    /// One scrape at a time: each resets the gauges before setting them.
    scraping: tokio::sync::Mutex<()>,
}

/// A GPU's labels, named as DCGM's exporter names them.
const GPU_LABELS: [&str; 3] = ["gpu", "UUID", "modelName"];
/// A slice's: its GPU's, then the MIG instance's (empty for a GPU used whole, as DCGM
/// leaves them out there), then SliceHub's own.
const SLICE_LABELS: [&str; 7] = ["gpu", "UUID", "modelName", "GPU_I_ID", "GPU_I_PROFILE", "slice", "course"];

fn int_gauges(name: &str, help: &str, labels: &[&str]) -> IntGaugeVec {
    IntGaugeVec::new(Opts::new(name, help), labels).expect("a valid gauge")
}

impl Gauges {
    pub(super) fn new() -> Gauges {
        Gauges {
            sessions: int_gauges("slicehub_sessions", "Live GPU sessions by state and course.", &["state", "course"]),
            queue_length: int_gauges("slicehub_queue_length", "Claims waiting for a slice, by profile.", &["profile"]),
            queue_oldest_wait: GaugeVec::new(
                Opts::new("slicehub_queue_oldest_wait_seconds", "How long the oldest waiting claim of a profile has waited."),
                &["profile"],
            )
            .expect("a valid gauge"),
            slices_held: int_gauges(
                "slicehub_slices_held",
                "MIG slices held by sessions, by GPU index and profile.",
                &["gpu", "UUID", "modelName", "profile"],
            ),
            slices_free: int_gauges(
                "slicehub_slices_free",
                "How many more sessions of a profile would fit on the GPUs now.",
                &["profile"],
            ),
            gpu_utilization: int_gauges(
                "slicehub_gpu_utilization_percent",
                "Each GPU's utilization at the last sample, where the GPU reports it (not with MIG on).",
                &GPU_LABELS,
            ),
            gpu_memory_utilization: int_gauges(
                "slicehub_gpu_memory_utilization_percent",
                "Each GPU's memory-controller utilization at the last sample, where reported.",
                &GPU_LABELS,
            ),
            slice_busy: int_gauges(
                "slicehub_slice_busy_percent",
                "How busy each running session's slice was at the last sample (simulated GPUs: its container's CPU, percent of one core).",
                &SLICE_LABELS,
            ),
            slice_memory: int_gauges(
                "slicehub_slice_memory_used_bytes",
                "Memory each running session's slice used at the last sample (simulated GPUs: its container's).",
                &SLICE_LABELS,
            ),
            scraping: tokio::sync::Mutex::new(()),
        }
    }

    pub(super) fn collectors(&self) -> Vec<Box<dyn prometheus::core::Collector>> {
        vec![
            Box::new(self.sessions.clone()),
            Box::new(self.queue_length.clone()),
            Box::new(self.queue_oldest_wait.clone()),
            Box::new(self.slices_held.clone()),
            Box::new(self.slices_free.clone()),
            Box::new(self.gpu_utilization.clone()),
            Box::new(self.gpu_memory_utilization.clone()),
            Box::new(self.slice_busy.clone()),
            Box::new(self.slice_memory.clone()),
        ]
    }
}

/// Every metric in Prometheus' text format, gauges read now.
pub async fn render(services: &Services) -> Result<String, CoreError> {
    let gauges = &METRICS.gauges;
    let _one = gauges.scraping.lock().await;
    let store = &services.store;
    let counts = store.live_session_counts().await?;
    let queue = store.queue_counts().await?;
    let held = store.held_counts().await?;
    let profiles = services.sessions.known_profiles().await?;
    let free = services.sessions.availability(&profiles).await?;
    let now = crate::store::now_ms();

    gauges.sessions.reset();
    for c in &counts {
        gauges.sessions.with_label_values(&[c.state.as_str(), c.course.as_str()]).set(c.sessions);
    }
    gauges.queue_length.reset();
    gauges.queue_oldest_wait.reset();
    for q in &queue {
        gauges.queue_length.with_label_values(&[q.profile.as_str()]).set(q.waiting);
        let waited = ((now - q.oldest_requested_at).max(0) as f64) / 1000.0;
        gauges.queue_oldest_wait.with_label_values(&[q.profile.as_str()]).set(waited);
    }
    let gpus = services.sessions.gpu_busy();
    let identities: HashMap<u32, &GpuIdentity> = gpus.iter().map(|(g, _)| (g.index, g)).collect();
    let gpu_labels = |index: i64| {
        let identity = u32::try_from(index).ok().and_then(|i| identities.get(&i));
        [index.to_string(), identity.map(|g| g.uuid.clone()).unwrap_or_default(), identity.map(|g| g.model.clone()).unwrap_or_default()]
    };
    gauges.slices_held.reset();
    for h in &held {
        let [gpu, uuid, model] = gpu_labels(h.gpu_index);
        gauges.slices_held.with_label_values(&[gpu.as_str(), uuid.as_str(), model.as_str(), h.profile.as_str()]).set(h.held);
    }
    gauges.slices_free.reset();
    for f in &free {
        gauges.slices_free.with_label_values(&[f.profile.as_str()]).set(i64::from(f.free));
    }

    gauges.gpu_utilization.reset();
    gauges.gpu_memory_utilization.reset();
    for (gpu, busy) in &gpus {
        let labels = gpu_labels(i64::from(gpu.index));
        let labels = labels.each_ref().map(String::as_str);
        if let Some(p) = busy.gpu_percent {
            gauges.gpu_utilization.with_label_values(&labels).set(i64::from(p));
        }
        if let Some(p) = busy.memory_percent {
            gauges.gpu_memory_utilization.with_label_values(&labels).set(i64::from(p));
        }
    }
    gauges.slice_busy.reset();
    gauges.slice_memory.reset();
    let courses = store.live_session_courses().await?;
    for (id, now) in services.sessions.latest_slice_samples() {
        // The slice's own GPU, by the UUID it was placed on.
        let gpu = now.gpu_index.to_string();
        let model = identities.values().find(|g| g.uuid == now.gpu_uuid).map(|g| g.model.clone()).unwrap_or_default();
        let uuid = now.gpu_uuid.clone();
        let (instance_id, instance_profile) = match &now.mig_instance {
            Some((id, profile)) => (id.to_string(), profile.clone()),
            None => (String::new(), String::new()),
        };
        let course = courses.get(&id).map(String::as_str).unwrap_or("");
        let labels = [
            gpu.as_str(),
            uuid.as_str(),
            model.as_str(),
            instance_id.as_str(),
            instance_profile.as_str(),
            now.slice.as_str(),
            course,
        ];
        if let Some(p) = now.sample.busy_percent {
            gauges.slice_busy.with_label_values(&labels).set(i64::from(p));
        }
        if let Some(mib) = now.sample.memory_mib {
            gauges.slice_memory.with_label_values(&labels).set((mib * 1024 * 1024) as i64);
        }
    }

    let mut text = Vec::new();
    if let Err(e) = TextEncoder::new().encode(&METRICS.registry.gather(), &mut text) {
        tracing::warn!(error = %e, "a metric could not be encoded");
    }
    Ok(String::from_utf8_lossy(&text).into_owned())
}
