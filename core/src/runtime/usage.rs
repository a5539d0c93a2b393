//! What a container uses right now: its CPU time so far and its memory, one reading
//! without Docker's own two-sample wait.

use bollard::query_parameters::StatsOptionsBuilder;
use futures_util::StreamExt;

use super::engine::Engine;
use crate::CoreError;

/// One reading; CPU use is the difference between two of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContainerUsage {
    /// CPU time the container used since it started, nanoseconds.
    pub cpu_ns: u64,
    /// The host's CPU time (all CPUs) since boot, nanoseconds.
    pub system_ns: u64,
    pub online_cpus: u32,
    pub memory_bytes: Option<u64>,
}

impl ContainerUsage {
    /// Percent of one CPU core used between `earlier` and this reading.
    pub fn cpu_percent_since(&self, earlier: &ContainerUsage) -> Option<f64> {
        let used = self.cpu_ns.checked_sub(earlier.cpu_ns)? as f64;
        let elapsed = self.system_ns.checked_sub(earlier.system_ns)? as f64;
        (elapsed > 0.0).then(|| used / elapsed * f64::from(self.online_cpus.max(1)) * 100.0)
    }
}

impl Engine {
    /// `None` when the container does not exist or is not running.
    pub async fn usage(&self, name: &str) -> Result<Option<ContainerUsage>, CoreError> {
        let docker = self.client().await?;
        let options = StatsOptionsBuilder::new().stream(false).one_shot(true).build();
        let mut stats = docker.stats(name, Some(options));
        let reading = match stats.next().await {
            Some(Ok(reading)) => reading,
            Some(Err(bollard::errors::Error::DockerResponseServerError { status_code: 404, .. })) | None => return Ok(None),
            Some(Err(e)) => return Err(CoreError::Engine(format!("reading the use of {name}: {e}"))),
        };
        let Some(cpu) = reading.cpu_stats else { return Ok(None) };
        let (Some(cpu_ns), Some(system_ns)) = (cpu.cpu_usage.and_then(|u| u.total_usage), cpu.system_cpu_usage) else {
            return Ok(None);
        };
        Ok(Some(ContainerUsage {
            cpu_ns,
            system_ns,
            online_cpus: cpu.online_cpus.unwrap_or(1),
            memory_bytes: reading.memory_stats.and_then(|m| m.usage),
        }))
    }
}
