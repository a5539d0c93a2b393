//! queue-wait's mixed-fleet section (issue #28): the mixed trace through the queue with
//! promised starts, the MIG GPU re-sliced by the allocator against its best static split;
//! the whole and shared GPUs are the same in every row. Waits and slice-hours per row and
//! per kind of GPU.

use slicehub_mig::{Layout, Policy};

use crate::mixed_fleet::{Kind, MigGpu, MixedFleet};
use crate::mixed_statics::score_splits;
use crate::mixed_trace::{describe_mix, mixed_lab};
use crate::queue_replay::{replay_queued_claims, QueueOutcome, QueueRules};
use crate::simulate::Claim;
use crate::stats::{mean, percentile};
use crate::trace::Spec;

const KINDS: [Kind; 3] = [Kind::MigSlice, Kind::WholeGpu, Kind::Share];

struct Strategy {
    name: String,
    per_seed: Vec<QueueOutcome>,
}

impl Strategy {
    fn run(fleet: &MixedFleet, traces: &[Vec<Claim<'_>>], spec: Spec, name: String, mig: MigGpu<'_>, rules: QueueRules) -> Strategy {
        let (lab, limit) = (spec.lab_minutes * 60, spec.session_minutes.1 * 60);
        let per_seed = traces
            .iter()
            .map(|t| replay_queued_claims(fleet.gpus(mig), t, lab, limit, rules))
            .collect();
        Strategy { name, per_seed }
    }

    fn slice_hours(&self) -> f64 {
        self.per_seed.iter().map(|o| o.slice_seconds as f64).sum::<f64>() / 3600.0
    }

    /// (waits, compute-slice-hours) of the claims `keep` picks, over every seed.
    fn part(&self, traces: &[Vec<Claim<'_>>], keep: impl Fn(&Claim<'_>) -> bool) -> (Vec<i64>, f64) {
        let (mut waits, mut milli) = (Vec::new(), 0u64);
        for (trace, o) in traces.iter().zip(&self.per_seed) {
            for (i, claim) in trace.iter().enumerate() {
                if keep(claim) {
                    waits.push(o.waits[i]);
                    milli += o.delivered[i];
                }
            }
        }
        (waits, milli as f64 / 1000.0 / 3600.0)
    }
}

/// The portal promises a latest start to the first 100 claims in line.
const PROMISED: usize = 100;
/// Static splits replayed with a queue: the named ones plus this many of the others that
/// grant the most without a queue (as queue-wait's single-model rows).
const SHORTLIST: usize = 8;

fn rules(planned: usize, policy: Policy) -> QueueRules {
    QueueRules { planned, policy, largest: u8::MAX }
}

/// Runs and prints the section for each (name, lab spec) over `seeds`; `named` is how many
/// of `candidates` are mig-parted's named layouts (they come first).
pub fn print(
    fleet: &MixedFleet,
    candidates: &[(String, Layout)],
    named: usize,
    labs: &[(&str, Spec)],
    seeds: std::ops::RangeInclusive<u64>,
) {
    println!("\nMixed fleet (issue #28): {}", fleet.describe());
    println!("requests: {}; seeds {}-{}; time limit 90 min, the lab closes at 3 h", describe_mix(), seeds.start(), seeds.end());
    println!("Only the MIG GPU differs between rows; static = its best split (the named layouts and the {SHORTLIST} others that grant most");
    println!("without a queue, replayed with promises, the one delivering most slice-hours over the row's seeds, knowing the traces).");
    println!("Per kind: mean wait and slice-hours of the claims for MIG slices / whole GPUs / shares.\n");
    println!(
        "{:<14} {:<30} {:>9} {:>8} {:>8} {:>11} {:>8}  {:>22}  {:>20}",
        "trace", "strategy", "mean wait", "p95 wait", "unserved", "slice-hours", "violated", "mean wait MIG/whole/sh", "slice-h MIG/whole/sh"
    );
    let mut verdicts = Vec::new();
    for &(trace_name, spec) in labs {
        let traces: Vec<Vec<Claim<'static>>> = seeds.clone().map(|s| mixed_lab(spec, s)).collect();
        let scores = score_splits(fleet, candidates, &traces);
        let mut others: Vec<_> = scores.iter().skip(named).collect();
        others.sort_by_key(|s| std::cmp::Reverse(s.granted));
        let shortlist = scores.iter().take(named).chain(others.into_iter().take(SHORTLIST));
        let mut fixed: Option<Strategy> = None;
        for s in shortlist {
            let tried = Strategy::run(fleet, &traces, spec, format!("static {}", s.name), MigGpu::Fixed(s.layout), rules(PROMISED, Policy::FragmentationAware));
            if fixed.as_ref().is_none_or(|b| tried.slice_hours() > b.slice_hours()) {
                fixed = Some(tried);
            }
        }
        let dynamic = |name: &str, planned, policy| {
            Strategy::run(fleet, &traces, spec, name.into(), MigGpu::Dynamic, rules(planned, policy))
        };
        let mut all = vec![
            dynamic("allocator", PROMISED, Policy::FragmentationAware),
            dynamic("allocator, no promises", 0, Policy::FragmentationAware),
            dynamic("first-fit", PROMISED, Policy::FirstFit),
        ];
        all.extend(fixed);
        for s in &all {
            let (waits, _) = s.part(&traces, |_| true);
            let parts: Vec<(Vec<i64>, f64)> = KINDS.iter().map(|&k| s.part(&traces, |c| fleet.kind(c.profile) == k)).collect();
            let unserved: usize = s.per_seed.iter().map(|o| o.unserved).sum();
            let violated: usize = s.per_seed.iter().map(|o| o.violations).sum();
            println!(
                "{:<14} {:<30} {:>7.1} m {:>6.1} m {:>8} {:>11.1} {:>8}  {:>22}  {:>20}",
                trace_name,
                s.name.chars().take(30).collect::<String>(),
                mean(&waits) / 60.0,
                percentile(&waits, 0.95) as f64 / 60.0,
                unserved,
                s.slice_hours(),
                violated,
                parts.iter().map(|(w, _)| format!("{:.1}", mean(w) / 60.0)).collect::<Vec<_>>().join(" / "),
                parts.iter().map(|(_, h)| format!("{h:.1}")).collect::<Vec<_>>().join(" / "),
            );
        }
        if let (Some(ours), Some(fixed)) = (all.first(), all.get(3)) {
            let worse = ours
                .per_seed
                .iter()
                .zip(&fixed.per_seed)
                .filter(|(a, f)| mean(&a.waits) > mean(&f.waits) + 1e-9)
                .count();
            let mig = |s: &Strategy| s.part(&traces, |c| fleet.kind(c.profile) == Kind::MigSlice);
            let ((our_w, our_h), (st_w, st_h)) = (mig(ours), mig(fixed));
            verdicts.push(format!(
                "  {trace_name}: allocator vs {}: mean wait worse on {worse}/{} seeds; slice-hours {:+.1}%; MIG claims alone: mean wait {:.1} vs {:.1} min, slice-hours {:.1} vs {:.1}",
                fixed.name,
                ours.per_seed.len(),
                (ours.slice_hours() / fixed.slice_hours().max(f64::MIN_POSITIVE) - 1.0) * 100.0,
                mean(&our_w) / 60.0,
                mean(&st_w) / 60.0,
                our_h,
                st_h,
            ));
        }
    }
    println!();
    for v in verdicts {
        println!("{v}");
    }
}
