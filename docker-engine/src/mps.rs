//! The MPS control daemon of a GPU split into capped shares: one container per GPU, made
//! and started on the first launch of a share that needs it, kept while the portal runs.
//! A launch goes on only once the daemon's control socket is there: a client that starts
//! before it would run without MPS, and without its caps.

use std::time::{Duration, Instant};

use bollard::exec::{StartExecOptions, StartExecResults};
use bollard::models::{
    ContainerCreateBody, DeviceRequest, ExecConfig, HostConfig, Mount, MountTypeEnum, RestartPolicy,
    RestartPolicyNameEnum,
};
use bollard::query_parameters::CreateContainerOptionsBuilder;
use futures_util::StreamExt;
use slicehub_core::runtime::mps::{MpsDaemon, MPS_DIR, PIPE_DIR};
use slicehub_core::CoreError;

use super::engine::Engine;

/// How long a daemon just started may take to open its control socket.
const CONTROL_SOCKET_WAIT: Duration = Duration::from_secs(20);

impl Engine {
    /// Starts GPU `daemon.gpu_uuid`'s daemon unless it runs, making it first if missing,
    /// and waits for its control socket.
    pub async fn ensure_mps_daemon(&self, daemon: &MpsDaemon) -> Result<(), CoreError> {
        match self.status(&daemon.name).await? {
            Some(status) if status.running => return self.await_control_socket(daemon).await,
            Some(_) => {
                self.start(&daemon.name).await?;
                return self.await_control_socket(daemon).await;
            }
            None => {}
        }
        self.volume_once(&daemon.volume, daemon.labels.clone()).await?;
        let client = self.client().await?;
        let options = CreateContainerOptionsBuilder::default().name(&daemon.name).build();
        match client.create_container(Some(options), body(daemon)).await {
            Ok(_) => {}
            // A launch beside this one made it first.
            Err(bollard::errors::Error::DockerResponseServerError { status_code: 409, .. }) => {}
            Err(e) => return Err(CoreError::Engine(format!("creating {}: {e}", daemon.name))),
        }
        match self.status(&daemon.name).await? {
            Some(status) if status.running => {}
            _ => self.start(&daemon.name).await?,
        }
        self.await_control_socket(daemon).await
    }

    /// Waits until the daemon's control socket exists; a daemon that dies or never opens
    /// it is an error with its last words.
    async fn await_control_socket(&self, daemon: &MpsDaemon) -> Result<(), CoreError> {
        let began = Instant::now();
        loop {
            if self.socket_ready(&daemon.name).await? {
                return Ok(());
            }
            let running = self.status(&daemon.name).await?.is_some_and(|s| s.running);
            if !running || began.elapsed() > CONTROL_SOCKET_WAIT {
                let said = self.logs_tail(&daemon.name, 5).await.unwrap_or_default();
                return Err(CoreError::Engine(format!(
                    "the MPS daemon of GPU {} did not start{}: {}",
                    daemon.gpu_uuid,
                    if running { " in time" } else { "" },
                    said.trim()
                )));
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }

    async fn socket_ready(&self, container: &str) -> Result<bool, CoreError> {
        let client = self.client().await?;
        let check = ExecConfig {
            cmd: Some(vec!["test".into(), "-S".into(), format!("{PIPE_DIR}/control")]),
            ..Default::default()
        };
        let Ok(exec) = client.create_exec(container, check).await else { return Ok(false) };
        match client.start_exec(&exec.id, None::<StartExecOptions>).await {
            Ok(StartExecResults::Attached { mut output, .. }) => while output.next().await.is_some() {},
            Ok(StartExecResults::Detached) => {}
            Err(_) => return Ok(false),
        }
        let done = client.inspect_exec(&exec.id).await.map_err(|e| CoreError::Engine(format!("inspecting {container}: {e}")))?;
        Ok(done.exit_code == Some(0))
    }
}

fn body(daemon: &MpsDaemon) -> ContainerCreateBody {
    let host_config = HostConfig {
        // Sessions on the GPU's shares join this namespace to reach the daemon, and its
        // /dev/shm with it.
        ipc_mode: Some("shareable".to_string()),
        shm_size: Some(daemon.shm_bytes),
        network_mode: Some("none".to_string()),
        restart_policy: Some(RestartPolicy { name: Some(RestartPolicyNameEnum::UNLESS_STOPPED), maximum_retry_count: None }),
        security_opt: Some(vec!["no-new-privileges".to_string()]),
        mounts: Some(vec![Mount {
            target: Some(MPS_DIR.to_string()),
            source: Some(daemon.volume.clone()),
            typ: Some(MountTypeEnum::VOLUME),
            ..Default::default()
        }]),
        device_requests: Some(vec![DeviceRequest {
            driver: Some("nvidia".to_string()),
            device_ids: Some(vec![daemon.gpu_uuid.clone()]),
            capabilities: Some(vec![vec!["gpu".to_string()]]),
            ..Default::default()
        }]),
        ..Default::default()
    };
    ContainerCreateBody {
        image: Some(daemon.image.clone()),
        // Whatever the image's own entry point would do (drop to its user, start a
        // notebook), the daemon's script runs as written.
        entrypoint: Some(vec!["sh".to_string(), "-c".to_string()]),
        cmd: Some(vec![daemon.script.clone()]),
        env: Some(daemon.env.iter().map(|(k, v)| format!("{k}={v}")).collect()),
        labels: Some(daemon.labels.clone().into_iter().collect()),
        // The control daemon starts one server per client user; as root it may.
        user: Some("0:0".to_string()),
        host_config: Some(host_config),
        ..Default::default()
    }
}
