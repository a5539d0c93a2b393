//! Turning a `ContainerSpec` into a container on the Docker engine, and removing it.

use std::collections::HashMap;

use bollard::models::{
    ContainerCreateBody, DeviceRequest as DockerDeviceRequest, HostConfig, HostConfigLogConfig,
    Mount, MountTypeEnum, VolumeCreateOptions,
};
use bollard::query_parameters::{
    CreateContainerOptionsBuilder, RemoveContainerOptionsBuilder,
};

use slicehub_core::runtime::Created;

use super::engine::Engine;
use slicehub_core::runtime::spec::ContainerSpec;
use slicehub_core::CoreError;

impl Engine {
    /// Creates (does not start) the container the spec describes, with its home volume
    /// (labelled as this portal's).
    pub async fn create(&self, spec: &ContainerSpec) -> Result<Created, CoreError> {
        let client = self.client().await?;
        self.volume_once(&spec.home_volume, spec.volume_labels.clone()).await?;
        if let Some(mps) = &spec.mps_volume {
            let owner = |k: &String| k.starts_with("org.slicehub.user") || k.starts_with("org.slicehub.course");
            let labels = spec.volume_labels.iter().filter(|(k, _)| !owner(k)).map(|(k, v)| (k.clone(), v.clone())).collect();
            self.volume_once(mps, labels).await?;
        }
        let options = CreateContainerOptionsBuilder::default()
            .name(&spec.name)
            .build();
        let created = client
            .create_container(Some(options), body(spec))
            .await
            .map_err(|e| match e {
                e if super::observe::not_found(&e) => CoreError::NotFound(format!(
                    "the image {} is not on this server",
                    spec.image
                )),
                e => CoreError::Engine(format!("creating {}: {e}", spec.name)),
            })?;
        Ok(Created {
            id: created.id,
            name: spec.name.clone(),
        })
    }

    /// Creates volume `name` with `labels` unless this process made it already (Docker
    /// would make a missing one at the mount, unlabelled).
    pub(crate) async fn volume_once(&self, name: &str, labels: std::collections::BTreeMap<String, String>) -> Result<(), CoreError> {
        if self.volumes_made.lock().is_ok_and(|made| made.contains(name)) {
            return Ok(());
        }
        self.client()
            .await?
            .create_volume(VolumeCreateOptions {
                name: Some(name.to_string()),
                labels: Some(labels.into_iter().collect()),
                ..Default::default()
            })
            .await
            .map_err(|e| CoreError::Engine(format!("creating volume {name}: {e}")))?;
        if let Ok(mut made) = self.volumes_made.lock() {
            made.insert(name.to_string());
        }
        Ok(())
    }

    pub async fn start(&self, name: &str) -> Result<(), CoreError> {
        self.client()
            .await?
            .start_container(
                name,
                None::<bollard::query_parameters::StartContainerOptions>,
            )
            .await
            .map_err(|e| CoreError::Engine(format!("starting {name}: {e}")))
    }

    /// Removes the container, running or not, with its own volumes (never the home); one
    /// that is already gone is not an error.
    pub async fn remove(&self, name: &str) -> Result<(), CoreError> {
        let options = RemoveContainerOptionsBuilder::default().force(true).v(true).build();
        match self
            .client()
            .await?
            .remove_container(name, Some(options))
            .await
        {
            Ok(()) => Ok(()),
            Err(bollard::errors::Error::DockerResponseServerError {
                status_code: 404, ..
            }) => Ok(()),
            Err(e) => Err(CoreError::Engine(format!("removing {name}: {e}"))),
        }
    }
}

/// The home volume; on a share of an MPS GPU also the GPU's MPS volume.
fn mounts(spec: &ContainerSpec) -> Vec<Mount> {
    let volume = |source: &str, target: &str, read_only: bool| Mount {
        target: Some(target.to_string()),
        source: Some(source.to_string()),
        typ: Some(MountTypeEnum::VOLUME),
        read_only: Some(read_only),
        ..Default::default()
    };
    let mut mounts = vec![volume(&spec.home_volume, slicehub_core::runtime::spec::HOME, false)];
    // Read-only: a session reaches the daemon's sockets but cannot put its own in their
    // place for the GPU's other sessions to connect to.
    if let Some(mps) = &spec.mps_volume {
        mounts.push(volume(mps, slicehub_core::runtime::mps::MPS_DIR, true));
    }
    mounts
}

fn body(spec: &ContainerSpec) -> ContainerCreateBody {
    let host_config = HostConfig {
        nano_cpus: Some(spec.nano_cpus),
        memory: Some(spec.memory_bytes),
        memory_swap: Some(spec.memory_swap_bytes),
        shm_size: Some(spec.shm_bytes),
        readonly_rootfs: Some(spec.read_only_root),
        tmpfs: spec.read_only_root.then(|| {
            HashMap::from([("/tmp".to_string(), format!("rw,nosuid,nodev,size={},mode=1777", spec.tmp_bytes.max(1 << 20)))])
        }),
        // The engine keeps at most 20 MB of a session's output on disk, whatever the
        // engine's own defaults are.
        log_config: Some(HostConfigLogConfig {
            typ: Some("json-file".to_string()),
            config: Some(HashMap::from([
                ("max-size".to_string(), "10m".to_string()),
                ("max-file".to_string(), "2".to_string()),
            ])),
        }),
        pids_limit: Some(spec.pids_limit),
        cap_drop: Some(spec.cap_drop.clone()),
        security_opt: Some(spec.security_opt.clone()),
        network_mode: Some(spec.network.clone()),
        ipc_mode: spec.ipc_mode.clone(),
        mounts: Some(mounts(spec)),
        device_requests: spec.device_request.as_ref().map(|d| {
            vec![DockerDeviceRequest {
                driver: Some(d.driver.clone()),
                device_ids: Some(d.device_ids.clone()),
                capabilities: Some(d.capabilities.clone()),
                ..Default::default()
            }]
        }),
        ..Default::default()
    };
    ContainerCreateBody {
        image: Some(spec.image.clone()),
        cmd: Some(spec.cmd.clone()),
        env: Some(spec.env.iter().map(|(k, v)| format!("{k}={v}")).collect()),
        labels: Some(spec.labels.clone().into_iter().collect()),
        user: Some(spec.user.clone()),
        working_dir: Some(spec.working_dir.clone()),
        host_config: Some(host_config),
        ..Default::default()
    }
}
