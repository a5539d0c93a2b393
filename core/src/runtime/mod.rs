//! The container-engine boundary (Docker through bollard).

pub mod disk;
mod engine;
pub mod firewall;
mod launch;
mod network;
mod observe;
mod usage;
pub mod spec;

pub use engine::{Engine, EngineStatus, PROBE_TIMEOUT};
pub use launch::Created;
pub use network::SessionNetwork;
pub use observe::{ContainerDeath, ContainerStatus, EngineHost, ManagedContainer};
pub use usage::ContainerUsage;
