//! The Docker engine as the session service's [`ContainerEngine`].

use async_trait::async_trait;
use slicehub_core::runtime::mps::MpsDaemon;
use slicehub_core::runtime::spec::ContainerSpec;
use slicehub_core::runtime::{
    ContainerEngine, ContainerStatus, ContainerUsage, Created, DeathStream, EngineHost, EngineStatus,
    ManagedContainer, SessionNetwork,
};
use slicehub_core::CoreError;

use crate::Engine;

#[async_trait]
impl ContainerEngine for Engine {
    async fn probe(&self) -> EngineStatus {
        Engine::probe(self).await
    }
    async fn create(&self, spec: &ContainerSpec) -> Result<Created, CoreError> {
        Engine::create(self, spec).await
    }
    async fn start(&self, name: &str) -> Result<(), CoreError> {
        Engine::start(self, name).await
    }
    async fn remove(&self, name: &str) -> Result<(), CoreError> {
        Engine::remove(self, name).await
    }
    async fn status(&self, name: &str) -> Result<Option<ContainerStatus>, CoreError> {
        Engine::status(self, name).await
    }
    async fn wait_exit(&self, name: &str) -> Result<i64, CoreError> {
        Engine::wait_exit(self, name).await
    }
    async fn logs_tail(&self, name: &str, lines: usize) -> Result<String, CoreError> {
        Engine::logs_tail(self, name, lines).await
    }
    async fn usage(&self, name: &str) -> Result<Option<ContainerUsage>, CoreError> {
        Engine::usage(self, name).await
    }
    async fn ensure_mps_daemon(&self, daemon: &MpsDaemon) -> Result<(), CoreError> {
        Engine::ensure_mps_daemon(self, daemon).await
    }
    async fn managed_containers(&self, instance: &str) -> Result<Vec<ManagedContainer>, CoreError> {
        Engine::managed_containers(self, instance).await
    }
    async fn container_deaths(&self, instance: &str) -> Result<DeathStream, CoreError> {
        Engine::container_deaths(self, instance).await
    }
    async fn missing_images(&self, images: &[String]) -> Result<Vec<String>, CoreError> {
        Engine::missing_images(self, images).await
    }
    async fn host(&self) -> Result<EngineHost, CoreError> {
        Engine::host(self).await
    }
    async fn ensure_network(&self, instance: &str, network: &SessionNetwork) -> Result<(), CoreError> {
        Engine::ensure_network(self, instance, network).await
    }
    async fn remove_network_if_unused(&self, name: &str) -> Result<bool, CoreError> {
        Engine::remove_network_if_unused(self, name).await
    }
    async fn address_on(&self, container: &str, network: &str) -> Result<Option<String>, CoreError> {
        Engine::address_on(self, container, network).await
    }
}
