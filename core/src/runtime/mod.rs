//! The container-engine boundary (Docker through bollard).

mod container_engine;
pub mod disk;
mod engine;
pub mod fake;
pub mod firewall;
mod launch;
mod network;
mod observe;
mod usage;
pub mod spec;

pub use container_engine::{ContainerEngine, DeathStream};
pub use engine::{Engine, EngineStatus, PROBE_TIMEOUT};
pub use fake::FakeEngine;
pub use launch::Created;
pub use network::SessionNetwork;
pub use observe::{ContainerDeath, ContainerStatus, EngineHost, ManagedContainer};
pub use usage::ContainerUsage;
