//! How busy a GPU, or one MIG instance of it, has been since it was last asked, from GPM
//! samples (Hopper and newer keep them per GPU instance, which utilization counters do not
//! with MIG on). The first question about a device seeds its sample and has no answer;
//! samples nobody asked about for a while are dropped, so a released instance's go.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use nvml_wrapper::enums::gpm::GpmMetricId;
use nvml_wrapper::gpm::{gpm_metrics_get, GpmSample};
use nvml_wrapper::Nvml;

use super::errors::nvml_error;
use slicehub_core::CoreError;

/// A sample not compared against for this long belongs to something gone (the sampler asks
/// at least every `sessions.sample_seconds`, at most an hour).
const FORGET_AFTER: Duration = Duration::from_secs(3 * 3600);

#[derive(Default)]
pub(super) struct GpmSamples {
    last: Mutex<HashMap<String, (GpmSample<'static>, Instant)>>,
}

impl GpmSamples {
    /// The graphics engine's busy share in percent between the sample kept under `key`
    /// and `now`, which is kept in its place; `None` the first time.
    pub(super) fn busy_since_last(
        &self,
        nvml: &'static Nvml,
        key: &str,
        now: GpmSample<'static>,
    ) -> Result<Option<u32>, CoreError> {
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        last.retain(|_, (_, at)| at.elapsed() < FORGET_AFTER);
        let Some((before, _)) = last.insert(key.to_string(), (now, Instant::now())) else {
            return Ok(None);
        };
        let (now, _) = &last[key];
        let results = gpm_metrics_get(nvml, &before, now, &[GpmMetricId::GraphicsUtil])
            .map_err(|e| nvml_error("GPM metrics", e))?;
        match results.into_iter().next() {
            Some(Ok(metric)) => Ok(Some(metric.value.clamp(0.0, 100.0).round() as u32)),
            Some(Err(e)) => Err(nvml_error("GPM graphics activity", e)),
            None => Ok(None),
        }
    }
}
