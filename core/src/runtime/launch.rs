//! Turning a `ContainerSpec` into a container on the Docker engine, and removing it.

use std::collections::HashMap;

use bollard::models::{
    ContainerCreateBody, DeviceRequest as DockerDeviceRequest, HostConfig, Mount, MountTypeEnum,
    PortBinding,
};
use bollard::query_parameters::{CreateContainerOptionsBuilder, RemoveContainerOptionsBuilder};

use super::engine::Engine;
use super::spec::ContainerSpec;
use crate::CoreError;

/// A container the engine created from a spec.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Created {
    pub id: String,
    pub name: String,
}

impl Engine {
    /// Creates (does not start) the container the spec describes.
    pub async fn create(&self, spec: &ContainerSpec) -> Result<Created, CoreError> {
        let client = self.client().await?;
        let options = CreateContainerOptionsBuilder::default()
            .name(&spec.name)
            .build();
        let created = client
            .create_container(Some(options), body(spec))
            .await
            .map_err(|e| CoreError::Engine(format!("creating {}: {e}", spec.name)))?;
        Ok(Created {
            id: created.id,
            name: spec.name.clone(),
        })
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

    /// Removes the container, running or not; one that is already gone is not an error.
    pub async fn remove(&self, name: &str) -> Result<(), CoreError> {
        let options = RemoveContainerOptionsBuilder::default().force(true).build();
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

fn body(spec: &ContainerSpec) -> ContainerCreateBody {
    let port_key = spec.published_port.map(|p| format!("{p}/tcp"));
    let port_bindings = port_key.as_ref().map(|key| {
        HashMap::from([(
            key.clone(),
            Some(vec![PortBinding {
                host_ip: Some("127.0.0.1".to_string()),
                host_port: Some(String::new()),
            }]),
        )])
    });
    let host_config = HostConfig {
        nano_cpus: Some(spec.nano_cpus),
        memory: Some(spec.memory_bytes),
        pids_limit: Some(spec.pids_limit),
        cap_drop: Some(spec.cap_drop.clone()),
        security_opt: Some(spec.security_opt.clone()),
        port_bindings,
        mounts: Some(vec![Mount {
            target: Some(super::spec::HOME.to_string()),
            source: Some(spec.home_volume.clone()),
            typ: Some(MountTypeEnum::VOLUME),
            ..Default::default()
        }]),
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
        exposed_ports: port_key.map(|key| HashMap::from([(key, HashMap::new())])),
        host_config: Some(host_config),
        ..Default::default()
    }
}
