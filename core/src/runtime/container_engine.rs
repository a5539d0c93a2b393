//! What the session service asks of a container engine. `slicehub_docker::Engine` (Docker
//! through bollard) is the real one; [`super::fake::FakeEngine`] is an in-process one for
//! tests of the rules that only need containers to exist, run and die.

use std::pin::Pin;

use async_trait::async_trait;
use futures_util::Stream;

use super::mps::MpsDaemon;
use super::spec::ContainerSpec;
use super::types::{ContainerDeath, ContainerStatus, ContainerUsage, Created, EngineHost, EngineStatus, ManagedContainer, SessionNetwork};
use crate::CoreError;

/// Deaths of a portal instance's containers, as they happen.
pub type DeathStream = Pin<Box<dyn Stream<Item = Result<ContainerDeath, CoreError>> + Send>>;

#[async_trait]
pub trait ContainerEngine: Send + Sync {
    /// Whether the engine answers, and what it offers; never fails (a down engine is a
    /// status, so the portal can start without it).
    async fn probe(&self) -> EngineStatus;
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
    /// Starts the MPS control daemon of a shared GPU unless it runs, making it if missing.
    async fn ensure_mps_daemon(&self, daemon: &MpsDaemon) -> Result<(), CoreError>;
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
