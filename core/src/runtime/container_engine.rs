//! What the session service asks of a container engine. [`Engine`] (Docker through
//! bollard) is the real one; [`super::fake::FakeEngine`] is an in-process one for tests
//! of the rules that only need containers to exist, run and die.

use std::pin::Pin;

use async_trait::async_trait;
use futures_util::Stream;

use super::engine::Engine;
use super::launch::Created;
use super::network::SessionNetwork;
use super::observe::{ContainerDeath, ContainerStatus, EngineHost, ManagedContainer};
use super::spec::ContainerSpec;
use super::usage::ContainerUsage;
use crate::CoreError;

/// Deaths of a portal instance's containers, as they happen.
pub type DeathStream = Pin<Box<dyn Stream<Item = Result<ContainerDeath, CoreError>> + Send>>;

#[async_trait]
pub trait ContainerEngine: Send + Sync {
    /// Creates (does not start) the container the spec describes, with its home volume.
    async fn create(&self, spec: &ContainerSpec) -> Result<Created, CoreError>;
    async fn start(&self, name: &str) -> Result<(), CoreError>;
    /// Removes the container, running or not; one already gone is not an error.
    async fn remove(&self, name: &str) -> Result<(), CoreError>;
    /// `None` when the engine does not know the container.
    async fn status(&self, name: &str) -> Result<Option<ContainerStatus>, CoreError>;
    /// Waits until the container stops; its exit code.
    async fn wait_exit(&self, name: &str) -> Result<i64, CoreError>;
    async fn logs_tail(&self, name: &str, lines: usize) -> Result<String, CoreError>;
    /// `None` when the container does not exist or is not running.
    async fn usage(&self, name: &str) -> Result<Option<ContainerUsage>, CoreError>;
    /// Every container (running or not) portal instance `instance` created.
    async fn managed_containers(&self, instance: &str) -> Result<Vec<ManagedContainer>, CoreError>;
    async fn container_deaths(&self, instance: &str) -> Result<DeathStream, CoreError>;
    /// The images of `images` the engine does not have.
    async fn missing_images(&self, images: &[String]) -> Result<Vec<String>, CoreError>;
    async fn host(&self) -> Result<EngineHost, CoreError>;
    async fn ensure_network(&self, instance: &str, network: &SessionNetwork) -> Result<(), CoreError>;
    /// Whether it was removed (a network in use stays).
    async fn remove_network_if_unused(&self, name: &str) -> Result<bool, CoreError>;
    /// The container's address on `network`, once it has one.
    async fn address_on(&self, container: &str, network: &str) -> Result<Option<String>, CoreError>;
}

#[async_trait]
impl ContainerEngine for Engine {
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
