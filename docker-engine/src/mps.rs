//! The MPS control daemon of a GPU split into capped shares: one container per GPU, made
//! and started on the first launch of a share that needs it, kept while the portal runs.

use bollard::models::{
    ContainerCreateBody, DeviceRequest, HostConfig, Mount, MountTypeEnum, RestartPolicy, RestartPolicyNameEnum,
    VolumeCreateOptions,
};
use bollard::query_parameters::CreateContainerOptionsBuilder;
use slicehub_core::runtime::mps::{MpsDaemon, MPS_DIR};
use slicehub_core::CoreError;

use super::engine::Engine;

impl Engine {
    /// Starts GPU `daemon.gpu_uuid`'s daemon unless it runs; makes it first if missing.
    pub async fn ensure_mps_daemon(&self, daemon: &MpsDaemon) -> Result<(), CoreError> {
        match self.status(&daemon.name).await? {
            Some(status) if status.running => return Ok(()),
            Some(_) => return self.start(&daemon.name).await,
            None => {}
        }
        let client = self.client().await?;
        client
            .create_volume(VolumeCreateOptions {
                name: Some(daemon.volume.clone()),
                labels: Some(daemon.labels.clone().into_iter().collect()),
                ..Default::default()
            })
            .await
            .map_err(|e| CoreError::Engine(format!("creating volume {}: {e}", daemon.volume)))?;
        let options = CreateContainerOptionsBuilder::default().name(&daemon.name).build();
        match client.create_container(Some(options), body(daemon)).await {
            Ok(_) => {}
            // A launch beside this one made it first.
            Err(bollard::errors::Error::DockerResponseServerError { status_code: 409, .. }) => {}
            Err(e) => return Err(CoreError::Engine(format!("creating {}: {e}", daemon.name))),
        }
        match self.status(&daemon.name).await? {
            Some(status) if status.running => Ok(()),
            _ => self.start(&daemon.name).await,
        }
    }
}

fn body(daemon: &MpsDaemon) -> ContainerCreateBody {
    let host_config = HostConfig {
        // Sessions on the GPU's shares join this namespace to reach the daemon.
        ipc_mode: Some("shareable".to_string()),
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
        cmd: Some(daemon.cmd.clone()),
        env: Some(daemon.env.iter().map(|(k, v)| format!("{k}={v}")).collect()),
        labels: Some(daemon.labels.clone().into_iter().collect()),
        // The control daemon starts one server per client user; as root it may.
        user: Some("0:0".to_string()),
        host_config: Some(host_config),
        ..Default::default()
    }
}
