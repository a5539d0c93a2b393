//! How much room a GPU keeps for future instances, weighted toward large profiles.

use crate::catalog::{Catalog, Profile, COMPUTE_SLICES};
use crate::layout::Occupancy;

/// Σ over profiles of (memory slices × compute slices) × instances of that profile that
/// could still be created. Losing a 7g slot costs 56 points, a 1g slot 1 point.
pub(crate) fn capacity(catalog: &Catalog, occupancy: &Occupancy) -> u32 {
    catalog
        .profiles()
        .iter()
        .enumerate()
        .map(|(index, p)| p.area() * u32::from(placeable(p, index, occupancy)))
        .sum()
}

/// How many more instances of `profile` fit together: free disjoint starts, capped by the
/// compute slices left and the profile's max instances.
pub(crate) fn placeable(profile: &Profile, index: usize, occupancy: &Occupancy) -> u8 {
    let mut by_memory = 0u8;
    let mut free_from = 0u16;
    for &start in &profile.starts {
        if u16::from(start) >= free_from && occupancy.fits(profile, index, start) {
            by_memory += 1;
            free_from = u16::from(start) + u16::from(profile.memory_slices);
        }
    }
    let by_compute =
        COMPUTE_SLICES.saturating_sub(occupancy.compute) / profile.compute_slices.max(1);
    let by_max = profile
        .max_instances
        .saturating_sub(occupancy.counts[index]);
    by_memory.min(by_compute).min(by_max)
}
