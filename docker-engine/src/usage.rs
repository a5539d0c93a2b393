//! What a container uses right now: its CPU time so far and its memory, one reading
//! without Docker's own two-sample wait.

use bollard::query_parameters::StatsOptionsBuilder;
use futures_util::StreamExt;

use slicehub_core::runtime::ContainerUsage;

use super::engine::Engine;
use slicehub_core::CoreError;

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
