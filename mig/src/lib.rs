//! SliceHub's MIG engine: profile catalogs, placement rules and a fragmentation-aware
//! allocator. Pure and deterministic: no I/O, no clocks, no randomness.
//!
//! A GPU has 8 memory slices and 7 compute slices. A [`Profile`] occupies a fixed number of
//! memory slices starting at one of its allowed starts; a [`Layout`] is the set of
//! [`Placement`]s on one GPU. [`allocate`] picks the GPU and start for a request across a
//! fleet of [`GpuState`]s. See README.md for a tour.
//!
//! ```
//! use slicehub_mig::{allocate, Catalog, GpuState};
//!
//! let h100 = Catalog::for_model("NVIDIA H100 80GB HBM3")?;
//! let mut gpus = vec![GpuState::dynamic(h100), GpuState::with_static_layout(h100, "all-1g.10gb")?];
//! let decision = allocate(&gpus, "3g.40gb")?;
//! assert_eq!((decision.gpu_index, decision.placement.start), (0, 4));
//! gpus[decision.gpu_index].apply(&decision)?;
//! // ... the session runs on that instance ...
//! gpus[decision.gpu_index].release(decision.placement)?;
//! assert!(gpus[0].layout.is_empty());
//! # Ok::<(), slicehub_mig::MigError>(())
//! ```

mod allocator;
mod capacity;
mod catalog;
mod catalogs;
mod enumerate;
mod error;
mod gpu;
mod layout;
mod queue;
mod shares;
mod static_layouts;

pub use allocator::{allocate, allocate_avoiding, allocate_with, Policy};
pub use catalog::{
    mig_compute_slices, whole_profile_name, Catalog, CatalogData, Profile, COMPUTE_SLICES, MAX_PROFILES, MEMORY_SLICES,
    WHOLE_PROFILE_ID,
};
pub use enumerate::{enumerate_layouts, maximal_layouts};
pub use error::MigError;
pub use gpu::{release, Action, Decision, GpuState, Mode};
pub use layout::{Layout, Placement};
pub use queue::{
    earliest_start, expected_starts, place_now, serve, Booked, Hold, Replan, Slot, Step, Waiting,
    Window,
};
pub use shares::{share_of, share_profile_name, Shares, Sharing, MAX_SHARES, MIN_SHARES};
pub use static_layouts::StaticLayout;
