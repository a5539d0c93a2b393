//! The Docker engine through bollard: containers, session networks, their state, logs,
//! use and deaths. The session service sees it as `slicehub_core::runtime::ContainerEngine`;
//! nothing else in the portal links bollard.

mod container_engine;
mod engine;
mod launch;
mod mps;
mod network;
mod observe;
mod usage;

pub use engine::Engine;
pub use observe::{terminal_tail, TAIL_BYTES};
