//! Replays the classroom lab traces with 30% of notebooks idle 20 minutes after they start,
//! under three idle policies (off, fixed 60 min, queue-aware), judged by the portal's own
//! rule: slice-hours recovered from idle sessions, useful slice-hours delivered, and the
//! queue wait of the claims that waited. See bench/README.md.

use std::time::Instant;

use slicehub_bench::idle_replay::{pick_idle, replay_idle, IdleOutcome, LabClock};
use slicehub_bench::simulate::dynamic_fleet;
use slicehub_bench::trace::{classroom, Mix, Spec};
use slicehub_bench::stats::{mean, percentile};
use slicehub_core::sessions::IdlePolicy;
use slicehub_mig::Catalog;

const MODEL: &str = "H100-80GB";
const IDLE_FRACTION: f64 = 0.3;
const IDLE_AFTER_MINUTES: u32 = 20;
const SEEDS: std::ops::RangeInclusive<u64> = 1..=5;

fn hours(slice_seconds: u64) -> f64 {
    slice_seconds as f64 / 3_600.0
}

fn main() {
    let Ok(catalog) = Catalog::by_key(MODEL) else {
        eprintln!("no {MODEL} catalog");
        std::process::exit(1);
    };
    let started = Instant::now();
    let base = IdlePolicy {
        warning_minutes: 10,
        ..IdlePolicy::default()
    };
    let policies = [
        (
            "off",
            IdlePolicy {
                idle_minutes: None,
                ..base
            },
        ),
        (
            "fixed 60",
            IdlePolicy {
                idle_minutes: Some(60),
                waiting_minutes: None,
                ..base
            },
        ),
        (
            "queue-aware 60/20",
            IdlePolicy {
                idle_minutes: Some(60),
                waiting_minutes: Some(20),
                ..base
            },
        ),
    ];
    println!("cargo run --release -p slicehub-bench --bin idle-cull");
    println!(
        "model {MODEL}, every GPU dynamic; lab traces (40 students, 3 h), seeds {}-{}, summed per row; \
         {:.0}% of sessions idle from {IDLE_AFTER_MINUTES} min after their start, warnings never answered; \
         culler every minute, warning 10 min ahead; time limit 90 min; queue first come first served per profile\n",
        SEEDS.start(),
        SEEDS.end(),
        IDLE_FRACTION * 100.0
    );
    println!(
        "{:<11} {:>4}  {:<17} {:>8} {:>7} {:>10} {:>10} {:>10} {:>7} {:>10} {:>9} {:>9}",
        "trace",
        "gpus",
        "policy",
        "sessions",
        "culled",
        "recovered",
        "idle held",
        "useful",
        "waited",
        "mean wait",
        "p95 wait",
        "unserved"
    );
    println!(
        "{:<11} {:>4}  {:<17} {:>8} {:>7} {:>10} {:>10} {:>10} {:>7} {:>10} {:>9} {:>9}",
        "", "", "", "", "", "slice-h", "slice-h", "slice-h", "", "", "", ""
    );
    for (trace_name, spec) in [
        ("mixed lab", Spec::lab(Mix::Mixed)),
        ("all-1g lab", Spec::lab(Mix::All1g)),
    ] {
        let clock = LabClock {
            close_s: spec.lab_minutes * 60,
            limit_s: spec.session_minutes.1 * 60,
            idle_after_s: IDLE_AFTER_MINUTES * 60,
        };
        let traces: Vec<_> = SEEDS
            .map(|seed| {
                let trace = classroom(spec, seed);
                let idle = pick_idle(trace.len(), IDLE_FRACTION, seed + 1_000);
                (trace, idle)
            })
            .collect();
        for gpus in [1usize, 2, 4] {
            for (policy_name, policy) in policies {
                let outcomes: Vec<IdleOutcome> = traces
                    .iter()
                    .map(|(trace, idle)| {
                        let fleet = dynamic_fleet(catalog, gpus);
                        replay_idle(catalog, fleet, trace, idle, clock, policy)
                    })
                    .collect();
                let waits: Vec<i64> = outcomes.iter().flat_map(|o| o.waits.clone()).collect();
                let sum = |pick: fn(&IdleOutcome) -> u64| outcomes.iter().map(pick).sum::<u64>();
                let sessions: usize = traces.iter().map(|(t, _)| t.len()).sum();
                println!(
                    "{:<11} {:>4}  {:<17} {:>8} {:>7} {:>10.1} {:>10.1} {:>10.1} {:>7} {:>8.1} m {:>7.1} m {:>9}",
                    trace_name,
                    gpus,
                    policy_name,
                    sessions,
                    outcomes.iter().map(|o| o.culled).sum::<usize>(),
                    hours(sum(|o| o.recovered_slice_seconds)),
                    hours(sum(|o| o.idle_held_slice_seconds)),
                    hours(sum(|o| o.useful_slice_seconds)),
                    waits.len(),
                    mean(&waits) / 60.0,
                    percentile(&waits, 0.95) as f64 / 60.0,
                    outcomes.iter().map(|o| o.unserved).sum::<usize>()
                );
            }
        }
    }
    println!("\n(bench took {:.1} s)", started.elapsed().as_secs_f64());
}
