//! mig-allocator's mixed-fleet section (issue #28): requests granted and slice-hours
//! delivered without a queue, the MIG GPU re-sliced by the allocator (or first-fit)
//! against its best static split; the whole and shared GPUs are the same in every row.

use slicehub_mig::{Layout, Policy};

use crate::mixed_fleet::{Kind, MigGpu, MixedFleet};
use crate::mixed_statics::{best_by, score_splits};
use crate::mixed_trace::{describe_mix, mixed_lab};
use crate::simulate::{replay_claims, Claim, Outcome};
use crate::trace::Spec;

const KINDS: [Kind; 3] = [Kind::MigSlice, Kind::WholeGpu, Kind::Share];

/// Per kind of GPU: (requests granted, compute-slice-hours), summed over the seeds.
fn by_kind(fleet: &MixedFleet, traces: &[Vec<Claim<'_>>], outcomes: &[Outcome]) -> [(usize, f64); 3] {
    let mut out = [(0, 0.0); 3];
    for (trace, outcome) in traces.iter().zip(outcomes) {
        for (claim, &granted) in trace.iter().zip(&outcome.grants) {
            if !granted {
                continue;
            }
            let k = KINDS.iter().position(|&k| k == fleet.kind(claim.profile)).unwrap_or(0);
            out[k].0 += 1;
            let seconds = f64::from(claim.departure - claim.arrival);
            out[k].1 += claim.milli_slices as f64 * seconds / 1000.0 / 3600.0;
        }
    }
    out
}

struct Row {
    strategy: String,
    granted: usize,
    slice_hours: f64,
    kinds: [(usize, f64); 3],
}

fn run(fleet: &MixedFleet, traces: &[Vec<Claim<'_>>], strategy: String, mig: MigGpu<'_>, policy: Policy) -> Row {
    let outcomes: Vec<Outcome> = traces.iter().map(|t| replay_claims(fleet.gpus(mig), t, policy)).collect();
    Row {
        strategy,
        granted: outcomes.iter().map(|o| o.granted).sum(),
        slice_hours: outcomes.iter().map(|o| o.slice_seconds as f64).sum::<f64>() / 3600.0,
        kinds: by_kind(fleet, traces, &outcomes),
    }
}

/// Runs and prints the section for each (name, lab spec) over `seeds`.
pub fn print(fleet: &MixedFleet, candidates: &[(String, Layout)], labs: &[(&str, Spec)], seeds: std::ops::RangeInclusive<u64>) {
    println!("\nMixed fleet (issue #28): {}", fleet.describe());
    println!("requests: {}; seeds {}-{}; no queue (a request that finds no room is lost)", describe_mix(), seeds.start(), seeds.end());
    println!("Only the MIG GPU differs between rows: allocator / first-fit re-slice it per request; best static = the one of the");
    println!("{} candidate layouts on it that grants most (or delivers most slice-hours) over the row's seeds, knowing the traces.", candidates.len());
    println!("Slice-hours: a MIG slice its compute slices, a whole GPU 7, a share of 4 1.75 (core/src/quotas/weights.rs).\n");
    println!("| trace | strategy | granted | MIG slices | whole GPUs | shares | slice-hours | MIG | whole | shares |");
    println!("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    let mut verdicts = Vec::new();
    for &(name, spec) in labs {
        let traces: Vec<Vec<Claim<'static>>> = seeds.clone().map(|s| mixed_lab(spec, s)).collect();
        let mut requests = [0usize; 3];
        for claim in traces.iter().flatten() {
            requests[KINDS.iter().position(|&k| k == fleet.kind(claim.profile)).unwrap_or(0)] += 1;
        }
        let total: usize = requests.iter().sum();
        println!(
            "| {name} | requests | {total} | {} | {} | {} | | | | |",
            requests[0], requests[1], requests[2]
        );
        let scores = score_splits(fleet, candidates, &traces);
        let by_grants = best_by(&scores, |s| s.granted as u64);
        let by_hours = best_by(&scores, |s| s.slice_seconds);
        let mut rows = vec![
            run(fleet, &traces, "allocator".into(), MigGpu::Dynamic, Policy::FragmentationAware),
            run(fleet, &traces, "first-fit".into(), MigGpu::Dynamic, Policy::FirstFit),
        ];
        for (what, best) in [("most granted", by_grants), ("most slice-hours", by_hours)] {
            if let Some(b) = best {
                rows.push(run(fleet, &traces, format!("best static ({what}): {}", b.name), MigGpu::Fixed(b.layout), Policy::FragmentationAware));
            }
        }
        for r in &rows {
            let k = r.kinds;
            println!(
                "| {name} | {} | {} | {} | {} | {} | {:.1} | {:.1} | {:.1} | {:.1} |",
                r.strategy, r.granted, k[0].0, k[1].0, k[2].0, r.slice_hours, k[0].1, k[1].1, k[2].1
            );
        }
        let gain = |ours: f64, theirs: f64| (ours / theirs.max(f64::MIN_POSITIVE) - 1.0) * 100.0;
        let (ours, granted_static, hours_static) = (&rows[0], &rows[2], &rows[rows.len() - 1]);
        verdicts.push(format!(
            "- {name}: allocator vs best static split: granted {:+.1}% ({} vs {}), slice-hours {:+.1}% ({:.1} vs {:.1}); on the MIG GPU alone {:+.1}% granted, {:+.1}% slice-hours",
            gain(ours.granted as f64, granted_static.granted as f64),
            ours.granted,
            granted_static.granted,
            gain(ours.slice_hours, hours_static.slice_hours),
            ours.slice_hours,
            hours_static.slice_hours,
            gain(ours.kinds[0].0 as f64, granted_static.kinds[0].0 as f64),
            gain(ours.kinds[0].1, hours_static.kinds[0].1),
        ));
    }
    println!();
    for v in verdicts {
        println!("{v}");
    }
}
