//! Replays a trace against online allocators: each arrival is granted if the policy finds
//! room at that moment, and keeps its placement until it departs.

use std::time::{Duration, Instant};

use slicehub_mig::{allocate_with, Catalog, GpuState, Placement, Policy};

use crate::trace::{Class, Request};

/// One request as the replays see it, whatever the fleet: when it holds its instance
/// ([arrival, departure), seconds from the start of the lab), which profile it asks for,
/// and what an hour of it counts in thousandths of a compute slice (a MIG slice its `Ng`,
/// a whole GPU 7, one of N shares 7/N: `core/src/quotas/weights.rs`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claim<'a> {
    pub arrival: u32,
    pub departure: u32,
    pub profile: &'a str,
    pub milli_slices: u64,
}

/// The profile names of the trace classes on `catalog` (G1, G2, G3, G4, G7), "" where it
/// has none.
pub fn class_names(catalog: &Catalog) -> [String; 5] {
    [Class::G1, Class::G2, Class::G3, Class::G4, Class::G7]
        .map(|c| c.profile_name(catalog).unwrap_or_default())
}

/// A single-model trace as claims: each class by its profile on `catalog`, counting its
/// compute slices.
pub fn claims<'a>(catalog: &Catalog, names: &'a [String; 5], trace: &[Request]) -> Vec<Claim<'a>> {
    trace
        .iter()
        .map(|r| {
            let profile = names[r.class as usize].as_str();
            let slices = catalog
                .profile_by_name(profile)
                .map_or(0, |p| u64::from(p.compute_slices));
            Claim {
                arrival: r.arrival,
                departure: r.departure,
                profile,
                milli_slices: slices * 1000,
            }
        })
        .collect()
}

/// Arrival and departure events in time order; a departure at t frees its slice before an
/// arrival at t takes one.
pub fn events(trace: &[Request]) -> Vec<(u32, bool, usize)> {
    span_events(trace.iter().map(|r| (r.arrival, r.departure)))
}

fn span_events(spans: impl Iterator<Item = (u32, u32)>) -> Vec<(u32, bool, usize)> {
    let mut events: Vec<(u32, bool, usize)> = spans
        .enumerate()
        .flat_map(|(i, (arrival, departure))| [(departure, false, i), (arrival, true, i)])
        .collect();
    events.sort();
    events
}

/// What a replay delivered.
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    pub granted: usize,
    /// Compute slices × seconds held by granted sessions (whole GPUs and shares by their
    /// weight, a share's fraction of a slice-second dropped once, at the end).
    pub slice_seconds: u64,
    /// Which requests were granted, in trace order.
    pub grants: Vec<bool>,
    /// Time of every allocation decision.
    pub timings: Vec<Duration>,
}

/// Replays `trace` on `gpus` under `policy`.
pub fn replay(
    catalog: &Catalog,
    gpus: Vec<GpuState<'_>>,
    trace: &[Request],
    policy: Policy,
) -> Outcome {
    let names = class_names(catalog);
    replay_claims(gpus, &claims(catalog, &names, trace), policy)
}

/// Replays `claims` on `gpus` (any mix of models, dynamic or static) under `policy`.
pub fn replay_claims(mut gpus: Vec<GpuState<'_>>, claims: &[Claim<'_>], policy: Policy) -> Outcome {
    let mut held: Vec<Option<(usize, Placement)>> = vec![None; claims.len()];
    let mut milli_slice_seconds = 0u64;
    let mut out = Outcome {
        grants: vec![false; claims.len()],
        timings: Vec::with_capacity(claims.len()),
        ..Outcome::default()
    };
    for (_, arrival, i) in span_events(claims.iter().map(|c| (c.arrival, c.departure))) {
        if arrival {
            let started = Instant::now();
            let decision = allocate_with(&gpus, claims[i].profile, policy);
            out.timings.push(started.elapsed());
            if let Ok(decision) = decision {
                if gpus[decision.gpu_index].apply(&decision).is_ok() {
                    held[i] = Some((decision.gpu_index, decision.placement));
                    out.granted += 1;
                    out.grants[i] = true;
                    let c = &claims[i];
                    milli_slice_seconds += c.milli_slices * u64::from(c.departure - c.arrival);
                }
            }
        } else if let Some((gpu, placement)) = held[i].take() {
            // The allocator's own state; a failure here would be a bug worth seeing.
            gpus[gpu]
                .release(placement)
                .expect("release of a granted placement");
        }
    }
    out.slice_seconds = milli_slice_seconds / 1000;
    out
}

pub fn dynamic_fleet(catalog: &Catalog, count: usize) -> Vec<GpuState<'_>> {
    (0..count).map(|_| GpuState::dynamic(catalog)).collect()
}
