//! The container-engine boundary: what the session service asks of an engine
//! ([`ContainerEngine`]), the container spec it hands over, and the host firewall of the
//! session networks. Docker itself is `slicehub-docker`; [`FakeEngine`] runs in process.

mod container_engine;
pub mod disk;
pub mod fake;
pub mod firewall;
pub mod mps;
pub mod spec;
mod types;

pub use container_engine::{ContainerEngine, DeathStream};
pub use fake::FakeEngine;
pub use types::{
    ContainerDeath, ContainerStatus, ContainerUsage, Created, EngineHost, EngineStatus, ManagedContainer,
    SessionNetwork, PROBE_TIMEOUT,
};
