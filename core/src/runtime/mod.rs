//! The container-engine boundary (Docker through bollard).

mod engine;
mod launch;
pub mod spec;

pub use engine::{Engine, EngineStatus};
pub use launch::Created;
