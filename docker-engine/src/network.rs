//! The session networks of one portal instance: Docker bridges on which containers cannot
//! reach each other (inter-container traffic off), one with a route to the internet and
//! one without (`internal`). The portal host reaches each container at its address there;
//! nothing is published on the host's ports. Both carry the portal instance's label.

use std::collections::HashMap;

use bollard::models::NetworkCreateRequest;
use bollard::query_parameters::{InspectContainerOptions, InspectNetworkOptions};

use super::engine::Engine;
use slicehub_core::runtime::spec::{INSTANCE_LABEL, MANAGED_LABEL};
use slicehub_core::runtime::SessionNetwork;
use slicehub_core::CoreError;

impl Engine {
    /// Creates the network unless it exists. Callers serialize calls for one name: the
    /// engine's API 1.41 would otherwise accept two networks of one name.
    pub async fn ensure_network(
        &self,
        instance: &str,
        network: &SessionNetwork,
    ) -> Result<(), CoreError> {
        let client = self.client().await?;
        match client
            .inspect_network(&network.name, None::<InspectNetworkOptions>)
            .await
        {
            Ok(_) => return Ok(()),
            Err(bollard::errors::Error::DockerResponseServerError { status_code: 404, .. }) => {}
            Err(e) => {
                return Err(CoreError::Engine(format!("inspecting network {}: {e}", network.name)))
            }
        }
        let options = HashMap::from([
            ("com.docker.network.bridge.enable_icc".to_string(), "false".to_string()),
            ("com.docker.network.bridge.name".to_string(), network.bridge.clone()),
        ]);
        let labels = HashMap::from([
            (MANAGED_LABEL.to_string(), "true".to_string()),
            (INSTANCE_LABEL.to_string(), instance.to_string()),
        ]);
        let created = client
            .create_network(NetworkCreateRequest {
                name: network.name.clone(),
                driver: Some("bridge".to_string()),
                internal: Some(!network.internet),
                // IPv4 only: the firewall rules that keep sessions off the LAN are IPv4's.
                enable_ipv6: Some(false),
                options: Some(options),
                labels: Some(labels),
                ..Default::default()
            })
            .await;
        match created {
            Ok(_) => Ok(()),
            // Another process of this portal (the CLI, a test) made it just now: Docker
            // answers 409, or 403 "networks have same bridge name".
            Err(e) => match client
                .inspect_network(&network.name, None::<InspectNetworkOptions>)
                .await
            {
                Ok(_) => Ok(()),
                Err(_) => Err(CoreError::Engine(format!("creating network {}: {e}", network.name))),
            },
        }
    }

    /// Removes the network unless a container still uses it (or it is gone already).
    /// `Ok(true)` when it was removed.
    pub async fn remove_network_if_unused(&self, name: &str) -> Result<bool, CoreError> {
        match self.client().await?.remove_network(name).await {
            Ok(()) => Ok(true),
            Err(bollard::errors::Error::DockerResponseServerError { status_code: 404 | 403 | 409, .. }) => Ok(false),
            Err(e) => Err(CoreError::Engine(format!("removing network {name}: {e}"))),
        }
    }

    /// The container's IPv4 address on `network`, once it runs.
    pub async fn address_on(&self, container: &str, network: &str) -> Result<Option<String>, CoreError> {
        let inspect = self
            .client()
            .await?
            .inspect_container(container, None::<InspectContainerOptions>)
            .await
            .map_err(|e| CoreError::Engine(format!("inspecting {container}: {e}")))?;
        Ok(inspect
            .network_settings
            .and_then(|n| n.networks)
            .and_then(|mut networks| networks.remove(network))
            .and_then(|endpoint| endpoint.ip_address)
            .filter(|ip| !ip.is_empty()))
    }
}
