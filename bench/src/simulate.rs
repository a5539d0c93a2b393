//! Replays a trace against online allocators: each arrival is granted if the policy finds
//! room at that moment, and keeps its placement until it departs.

use std::time::{Duration, Instant};

use slicehub_mig::{allocate_with, Catalog, GpuState, Placement, Policy};

use crate::trace::{Class, Request};

/// Arrival and departure events in time order; a departure at t frees its slice before an
/// arrival at t takes one.
pub fn events(trace: &[Request]) -> Vec<(u32, bool, usize)> {
    let mut events: Vec<(u32, bool, usize)> = trace
        .iter()
        .enumerate()
        .flat_map(|(i, r)| [(r.departure, false, i), (r.arrival, true, i)])
        .collect();
    events.sort();
    events
}

/// What a replay delivered.
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    pub granted: usize,
    /// Compute slices × seconds held by granted sessions.
    pub slice_seconds: u64,
    /// Time of every allocation decision.
    pub timings: Vec<Duration>,
}

/// Replays `trace` on `gpus` under `policy`.
pub fn replay(
    catalog: &Catalog,
    mut gpus: Vec<GpuState<'_>>,
    trace: &[Request],
    policy: Policy,
) -> Outcome {
    let names = [Class::G1, Class::G2, Class::G3, Class::G4, Class::G7]
        .map(|c| c.profile_name(catalog).unwrap_or_default());
    let name_of = |class: Class| names[class as usize].as_str();
    let mut held: Vec<Option<(usize, Placement)>> = vec![None; trace.len()];
    let mut out = Outcome {
        timings: Vec::with_capacity(trace.len()),
        ..Outcome::default()
    };
    for (_, arrival, i) in events(trace) {
        if arrival {
            let started = Instant::now();
            let decision = allocate_with(&gpus, name_of(trace[i].class), policy);
            out.timings.push(started.elapsed());
            if let Ok(decision) = decision {
                let gpu = &mut gpus[decision.gpu_index];
                let slices = gpu
                    .catalog
                    .profile_by_id(decision.placement.profile_id)
                    .map_or(0, |p| u64::from(p.compute_slices));
                if gpu.apply(&decision).is_ok() {
                    held[i] = Some((decision.gpu_index, decision.placement));
                    out.granted += 1;
                    let r = &trace[i];
                    out.slice_seconds += slices * u64::from(r.departure - r.arrival);
                }
            }
        } else if let Some((gpu, placement)) = held[i].take() {
            // The allocator's own state; a failure here would be a bug worth seeing.
            gpus[gpu]
                .release(placement)
                .expect("release of a granted placement");
        }
    }
    out
}

pub fn dynamic_fleet(catalog: &Catalog, count: usize) -> Vec<GpuState<'_>> {
    (0..count).map(|_| GpuState::dynamic(catalog)).collect()
}
