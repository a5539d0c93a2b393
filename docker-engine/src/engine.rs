
use bollard::{Docker, API_DEFAULT_VERSION};
use slicehub_core::runtime::{EngineStatus, PROBE_TIMEOUT};

use slicehub_core::CoreError;

/// A handle on the Docker engine. Creating one never fails: an engine that is down
/// or misconfigured is reported by `probe`, so the portal can start without it.
pub struct Engine {
    client: Result<Docker, String>,
    /// The client once the API version is agreed; asked for once, not on every call.
    negotiated: tokio::sync::OnceCell<Docker>,
    endpoint: String,
    /// Volumes this process has made (homes, a GPU's MPS volume), with their labels: the next launch
    /// does not ask for them again. One removed behind the portal's back is made again,
    /// unlabelled, by the engine when a container mounts it.
    pub(crate) volumes_made: std::sync::Mutex<std::collections::HashSet<String>>,
}

impl Engine {
    pub fn new(host: &str) -> Engine {
        let endpoint = if !host.is_empty() {
            host.to_string()
        } else {
            std::env::var("DOCKER_HOST").unwrap_or_else(|_| "unix:///var/run/docker.sock".into())
        };
        let client = if let Some(path) = endpoint.strip_prefix("unix://") {
            Docker::connect_with_unix(path, 30, API_DEFAULT_VERSION)
        } else {
            Docker::connect_with_http(&endpoint, 30, API_DEFAULT_VERSION)
        }
        .map_err(|e| describe_error(&e, &endpoint));
        Engine {
            client,
            negotiated: tokio::sync::OnceCell::new(),
            endpoint,
            volumes_made: Default::default(),
        }
    }

    /// The engine's client with the API version both sides speak. A failure is not
    /// remembered: the next call tries again.
    pub async fn client(&self) -> Result<Docker, CoreError> {
        let client = self.client.clone().map_err(CoreError::Engine)?;
        self.negotiated
            .get_or_try_init(|| client.negotiate_version())
            .await
            .cloned()
            .map_err(|e| engine_error(&e, &self.endpoint))
    }

    /// Connects, negotiates the API version and reads the engine's version.
    pub async fn probe(&self) -> EngineStatus {
        let down = |reason: String| EngineStatus {
            reachable: false,
            endpoint: self.endpoint.clone(),
            version: None,
            api_version: None,
            nvidia_runtime: false,
            storage_driver: None,
            reason: Some(reason),
            disk: None,
        };
        let work = async {
            let client = self.client().await?;
            let version = client
                .version()
                .await
                .map_err(|e| engine_error(&e, &self.endpoint))?;
            let info = client
                .info()
                .await
                .map_err(|e| engine_error(&e, &self.endpoint))?;
            Ok::<_, CoreError>((version, info))
        };
        match tokio::time::timeout(PROBE_TIMEOUT, work).await {
            Err(_) => down(format!(
                "no answer from {} within {}s",
                self.endpoint,
                PROBE_TIMEOUT.as_secs()
            )),
            Ok(Err(CoreError::Engine(reason))) => down(reason),
            Ok(Err(other)) => down(other.to_string()),
            Ok(Ok((version, info))) => EngineStatus {
                reachable: true,
                endpoint: self.endpoint.clone(),
                version: version.version,
                api_version: version.api_version,
                nvidia_runtime: info
                    .runtimes
                    .map(|runtimes| runtimes.contains_key("nvidia"))
                    .unwrap_or(false),
                storage_driver: info.driver,
                reason: None,
                // Only a local engine's root directory is this host's path.
                disk: info
                    .docker_root_dir
                    .filter(|_| !self.endpoint.starts_with("tcp://"))
                    .and_then(|dir| slicehub_core::runtime::disk::DiskSpace::of(&dir)),
            },
        }
    }
}

fn engine_error(e: &bollard::errors::Error, endpoint: &str) -> CoreError {
    CoreError::Engine(describe_error(e, endpoint))
}

fn describe_error(e: &bollard::errors::Error, endpoint: &str) -> String {
    let text = e.to_string();
    if text.contains("Socket not found")
        || text.contains("No such file")
        || text.contains("os error 2")
    {
        format!("no Docker socket at {endpoint} (is the Docker engine installed and running?)")
    } else if text.contains("ermission denied") {
        format!("permission denied on {endpoint} (is this user in the docker group?)")
    } else if text.contains("onnection refused") {
        format!("connection refused at {endpoint} (is the Docker engine running?)")
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_missing_socket_is_reported_not_fatal() {
        let engine = Engine::new("unix:///nonexistent/docker.sock");
        let status = engine.probe().await;
        assert!(!status.reachable);
        let reason = status.reason.unwrap();
        assert!(reason.contains("/nonexistent/docker.sock"), "{reason}");
    }
}
