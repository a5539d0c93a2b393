//! The GPUs behind core's `GpuBackend`: NVML on real hardware, a simulated fleet for
//! machines without GPUs (and tests), the backend of a machine whose driver NVML cannot use,
//! and the choice among them from the configuration. Nothing else in the portal links NVML.

mod detect;
mod nvml;
mod simulated;
mod unavailable;

pub use detect::{open_backend, open_backend_on};
pub use nvml::{catalog_from_readout, NvmlBackend, PlacementReadout, ProfileReadout};
pub use simulated::{SimulatedBackend, SIMULATED_STATE_FILE};
pub use unavailable::UnavailableBackend;
