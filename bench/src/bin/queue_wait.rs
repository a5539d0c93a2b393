//! Replays the classroom traces with a queue: mean and p95 wait, what was never served,
//! compute-slice-hours delivered, and how good the start estimates were, for the
//! allocator against first-fit and the best static layout; then the mixed fleet of issue
//! #28 (MIG, whole GPUs, shares). See bench/README.md.

use std::time::Instant;

use slicehub_bench::mixed_fleet::MixedFleet;
use slicehub_bench::mixed_trace::labs;
use slicehub_bench::queue_replay::{replay_queued, QueueOutcome, QueueRules};
use slicehub_bench::simulate::{dynamic_fleet, replay};
use slicehub_bench::statics::candidates;
use slicehub_bench::trace::{classroom, Mix, Request, Spec};
use slicehub_bench::stats::{mean, percentile};
use slicehub_mig::{Catalog, GpuState, Layout, Policy};

const MODEL: &str = "H100-80GB";
/// Static layouts replayed with a queue: the named ones plus this many of the others that
/// grant the most without a queue.
const STATIC_SHORTLIST: usize = 8;

/// One strategy over every seed of a row.
struct Strategy {
    name: String,
    per_seed: Vec<QueueOutcome>,
}

impl Strategy {
    fn all<T: Copy>(&self, pick: impl Fn(&QueueOutcome) -> &Vec<T>) -> Vec<T> {
        self.per_seed
            .iter()
            .flat_map(|o| pick(o).iter().copied())
            .collect()
    }
    fn slice_hours(&self) -> f64 {
        self.per_seed
            .iter()
            .map(|o| o.slice_seconds as f64)
            .sum::<f64>()
            / 3_600.0
    }
    fn unserved(&self) -> usize {
        self.per_seed.iter().map(|o| o.unserved).sum()
    }
    fn violations(&self) -> usize {
        self.per_seed.iter().map(|o| o.violations).sum()
    }
    /// Memory-slice-hours idle (kept for a promise, kept for nobody).
    fn idle_hours(&self) -> (f64, f64) {
        let kept: u64 = self.per_seed.iter().map(|o| o.kept_idle).sum();
        let free: u64 = self.per_seed.iter().map(|o| o.free_idle).sum();
        (kept as f64 / 3_600.0, free as f64 / 3_600.0)
    }
}

/// The portal promises a latest start to the first 100 claims in line.
const PROMISED: usize = 100;
/// A course that caps claims at 3 compute slices (`max_slices`), as the best static
/// layout does by having no larger instance.
const CAPPED: u8 = 3;

fn rules(planned: usize, policy: Policy) -> QueueRules {
    QueueRules { planned, policy, largest: u8::MAX }
}

fn run_all(
    catalog: &Catalog,
    traces: &[Vec<Request>],
    spec: Spec,
    fleet: &dyn Fn() -> Vec<GpuState<'static>>,
    rules: QueueRules,
) -> Vec<QueueOutcome> {
    let (lab, limit) = (spec.lab_minutes * 60, spec.session_minutes.1 * 60);
    traces
        .iter()
        .map(|t| replay_queued(catalog, fleet(), t, lab, limit, rules))
        .collect()
}

fn best_static(
    catalog: &'static Catalog,
    statics: &[(String, Layout)],
    gpus: usize,
    traces: &[Vec<Request>],
    spec: Spec,
) -> Strategy {
    let named = catalog.static_layouts().len();
    let mut ranked: Vec<(usize, &(String, Layout))> = statics
        .iter()
        .skip(named)
        .map(|c| {
            let granted = traces
                .iter()
                .map(|t| {
                    let fleet = (0..gpus)
                        .filter_map(|_| GpuState::with_fixed_layout(catalog, c.1.clone()).ok())
                        .collect();
                    replay(catalog, fleet, t, Policy::FragmentationAware).granted
                })
                .sum();
            (granted, c)
        })
        .collect();
    ranked.sort_by(|a, b| b.0.cmp(&a.0));
    let shortlist = statics
        .iter()
        .take(named)
        .chain(ranked.into_iter().take(STATIC_SHORTLIST).map(|(_, c)| c));
    let mut best: Option<Strategy> = None;
    for (name, layout) in shortlist {
        let fleet = || {
            (0..gpus)
                .filter_map(|_| GpuState::with_fixed_layout(catalog, layout.clone()).ok())
                .collect()
        };
        let tried = Strategy {
            name: format!("static {name}"),
            per_seed: run_all(
                catalog,
                traces,
                spec,
                &fleet,
                rules(PROMISED, Policy::FragmentationAware),
            ),
        };
        if best
            .as_ref()
            .is_none_or(|b| tried.slice_hours() > b.slice_hours())
        {
            best = Some(tried);
        }
    }
    best.unwrap_or(Strategy {
        name: "static none".into(),
        per_seed: Vec::new(),
    })
}

/// Seeds on which `s` waits longer on average than the best static layout, and its
/// slice-hours over static's.
fn against_static(s: &Strategy, fixed: &Strategy) -> (usize, f64) {
    let worse = s
        .per_seed
        .iter()
        .zip(&fixed.per_seed)
        .filter(|(a, f)| mean(&a.waits) > mean(&f.waits) + 1e-9)
        .count();
    let gain = if fixed.slice_hours() > 0.0 {
        s.slice_hours() / fixed.slice_hours() - 1.0
    } else {
        0.0
    };
    (worse, gain)
}

fn main() {
    let Ok(catalog) = Catalog::by_key(MODEL) else {
        eprintln!("no {MODEL} catalog");
        std::process::exit(1);
    };
    let started = Instant::now();
    let statics = candidates(catalog);
    // `-- --mixed-only`: only the mixed-fleet section (issue #28).
    if !std::env::args().any(|a| a == "--mixed-only") {
        single_model(catalog, &statics);
    }
    match MixedFleet::issue_28() {
        Ok(fleet) => slicehub_bench::mixed_queue::print(&fleet, &statics, catalog.static_layouts().len(), &labs(), 1..=5),
        Err(e) => eprintln!("no mixed fleet: {e}"),
    }
    println!("\n(bench took {:.1} s)", started.elapsed().as_secs_f64());
}

/// The single-model rows: every GPU an H100-80GB with MIG on.
fn single_model(catalog: &'static Catalog, statics: &[(String, Layout)]) {
    println!("model {MODEL}; seeds 1-5; a claim that finds no room waits (time limit = the longest session, 90 min); the lab closes at 3 h\n");
    println!("(idle: memory-slice-hours no session held, kept for a promised window that had not opened / kept for nobody)\n");
    println!(
        "{:<16} {:>4}  {:<34} {:>10} {:>9} {:>9} {:>12} {:>14}",
        "trace", "gpus", "strategy", "mean wait", "p95 wait", "unserved", "slice-hours", "idle kept/free"
    );
    let mut targets = Vec::new();
    let mut eta_rows = Vec::new();
    for (trace_name, spec) in [
        ("mixed lab", Spec::lab(Mix::Mixed)),
        ("all-1g lab", Spec::lab(Mix::All1g)),
    ] {
        for gpus in [1usize, 2, 4, 8] {
            let traces: Vec<Vec<Request>> = (1..=5u64).map(|s| classroom(spec, s)).collect();
            let dynamic = || dynamic_fleet(catalog, gpus);
            let run = |rules| run_all(catalog, &traces, spec, &dynamic, rules);
            let allocator = Strategy {
                name: "allocator".into(),
                per_seed: run(rules(PROMISED, Policy::FragmentationAware)),
            };
            let unpromised = Strategy {
                name: "allocator, no promises".into(),
                per_seed: run(rules(0, Policy::FragmentationAware)),
            };
            let first_fit = Strategy {
                name: "first-fit".into(),
                per_seed: run(rules(PROMISED, Policy::FirstFit)),
            };
            let capped = Strategy {
                name: format!("allocator, course cap {CAPPED} slices"),
                per_seed: run(QueueRules { largest: CAPPED, ..rules(PROMISED, Policy::FragmentationAware) }),
            };
            let capped_unpromised = Strategy {
                name: format!("no promises, course cap {CAPPED}"),
                per_seed: run(QueueRules { largest: CAPPED, ..rules(0, Policy::FragmentationAware) }),
            };
            let fixed = best_static(catalog, statics, gpus, &traces, spec);
            let all = [&allocator, &unpromised, &first_fit, &capped, &capped_unpromised, &fixed];
            for s in all {
                let waits = s.all(|o| &o.waits);
                let (kept, free) = s.idle_hours();
                println!(
                    "{:<16} {:>4}  {:<34} {:>8.1} m {:>7.1} m {:>9} {:>12.1} {:>7.1}/{:<6.1}",
                    trace_name,
                    gpus,
                    s.name.chars().take(34).collect::<String>(),
                    mean(&waits) / 60.0,
                    percentile(&waits, 0.95) as f64 / 60.0,
                    s.unserved(),
                    s.slice_hours(),
                    kept,
                    free
                );
            }
            for s in [&allocator, &capped] {
                targets.push((trace_name, gpus, s.name.clone(), against_static(s, &fixed)));
            }
            for s in [&allocator, &first_fit, &capped, &fixed] {
                eta_rows.push((
                    trace_name,
                    gpus,
                    s.name.clone(),
                    s.all(|o| &o.latest_margin),
                    s.all(|o| &o.about_error),
                    s.violations(),
                ));
            }
        }
    }
    println!("\nstart estimates of claims that waited (s = seconds):");
    println!(
        "{:<16} {:>4}  {:<34} {:>7} {:>16} {:>16} {:>10}",
        "trace",
        "gpus",
        "strategy",
        "waited",
        "latest − start p50/p95",
        "|about − start| p50/p95",
        "violated"
    );
    for (trace_name, gpus, name, margin, about, violations) in &eta_rows {
        println!(
            "{:<16} {:>4}  {:<34} {:>7} {:>10}/{:<8} {:>10}/{:<8} {:>5}",
            trace_name,
            gpus,
            name.chars().take(34).collect::<String>(),
            margin.len(),
            format!("{}s", percentile(margin, 0.5)),
            format!("{}s", percentile(margin, 0.95)),
            format!("{}s", percentile(about, 0.5)),
            format!("{}s", percentile(about, 0.95)),
            violations
        );
    }
    println!("\ntargets: mean wait no worse than the best static layout on any trace; ≥ 15% more slice-hours than it at 4 and 8 GPUs; no 'at the latest' violated");
    for (trace_name, gpus, name, (worse, gain)) in targets {
        let gain_target = if gpus >= 4 {
            if gain >= 0.15 {
                " (met)"
            } else {
                " (MISSED)"
            }
        } else {
            ""
        };
        println!(
            "  {trace_name:<12} {gpus} GPUs, {name:<30}: mean wait worse than static on {worse}/5 seeds{}; slice-hours {:+.1}% vs best static{gain_target}",
            if worse == 0 { " (met)" } else { " (MISSED)" },
            gain * 100.0
        );
    }
    let total_violations: usize = eta_rows.iter().map(|r| r.5).sum();
    println!(
        "  'at the latest' violated: {total_violations} times{}",
        if total_violations == 0 {
            " (met)"
        } else {
            " (MISSED)"
        }
    );
}
