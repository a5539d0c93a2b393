//! The container-engine boundary (Docker through bollard).

mod engine;
mod launch;
mod observe;
pub mod spec;

pub use engine::{Engine, EngineStatus};
pub use launch::Created;
pub use observe::{ContainerDeath, ContainerStatus, EngineHost, ManagedContainer};
