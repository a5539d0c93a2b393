//! The static splits of the mixed fleet's MIG GPU (issue #28): every candidate layout of
//! `statics::candidates` on the MIG GPU, the whole and shared GPUs as they are, scored
//! without a queue over a row's traces. Chosen knowing the traces, which flatters static.

use slicehub_mig::{Layout, Policy};

use crate::mixed_fleet::{MigGpu, MixedFleet};
use crate::simulate::{replay_claims, Claim};

/// One candidate split, summed over the traces.
pub struct SplitScore<'c> {
    pub name: &'c str,
    pub layout: &'c Layout,
    pub granted: usize,
    pub slice_seconds: u64,
}

/// Every candidate, in the order given.
pub fn score_splits<'c>(
    fleet: &MixedFleet,
    candidates: &'c [(String, Layout)],
    traces: &[Vec<Claim<'_>>],
) -> Vec<SplitScore<'c>> {
    candidates
        .iter()
        .map(|(name, layout)| {
            let (granted, slice_seconds) = traces.iter().fold((0, 0), |(n, s), trace| {
                let o = replay_claims(fleet.gpus(MigGpu::Fixed(layout)), trace, Policy::FragmentationAware);
                (n + o.granted, s + o.slice_seconds)
            });
            SplitScore { name, layout, granted, slice_seconds }
        })
        .collect()
}

/// The first best by `key` (named layouts come first in `candidates`, so they win ties).
pub fn best_by<'a, 'c>(scores: &'a [SplitScore<'c>], key: impl Fn(&SplitScore<'c>) -> u64) -> Option<&'a SplitScore<'c>> {
    scores.iter().fold(None, |best: Option<&SplitScore<'c>>, s| match best {
        Some(b) if key(b) >= key(s) => Some(b),
        _ => Some(s),
    })
}
