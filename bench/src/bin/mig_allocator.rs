//! Prints how many requests each allocation strategy grants on generated classroom traces,
//! the allocator's decision latency at 64 GPUs, and the mixed fleet of issue #28 (MIG, whole
//! GPUs, shares). See bench/README.md.

use std::time::{Duration, Instant};

use slicehub_bench::mixed_fleet::MixedFleet;
use slicehub_bench::mixed_trace::labs;
use slicehub_bench::optimum::{optimum, Rule};
use slicehub_bench::simulate::{dynamic_fleet, replay};
use slicehub_bench::statics::{best_uniform, candidates, greedy_mix};
use slicehub_bench::trace::{classroom, Mix, Request, Spec};
use slicehub_mig::{Catalog, Layout, Policy};

const MODEL: &str = "H100-80GB";
/// States the exact search may visit per trace before it gives up.
const NODE_LIMIT: u64 = 1_000_000;
/// The exact searches are tried up to this many GPUs.
const MAX_EXACT_GPUS: usize = 2;
/// The search that may refuse requests is tried up to this many requests per trace.
const MAX_EXACT_REQUESTS_REFUSING: usize = 30;

/// Sum over the seeds whose exact search finished.
#[derive(Default)]
struct Exact {
    solved: usize,
    optimum: usize,
    allocator: usize,
    worst: Option<f64>,
    largest: usize,
    /// Why some traces were not searched, if any.
    skipped: Option<&'static str>,
}

impl Exact {
    fn add(&mut self, optimum: usize, allocator: usize, requests: usize) {
        self.solved += 1;
        self.optimum += optimum;
        self.allocator += allocator;
        self.largest = self.largest.max(requests);
        let ratio = if optimum == 0 {
            1.0
        } else {
            allocator as f64 / optimum as f64
        };
        self.worst = Some(self.worst.map_or(ratio, |w| w.min(ratio)));
    }

    fn cell(&self, seeds: usize) -> String {
        if self.solved == 0 {
            return self.skipped.unwrap_or("search limit").to_string();
        }
        let part = if self.solved < seeds {
            format!(", {}/{seeds} seeds", self.solved)
        } else {
            String::new()
        };
        format!("{} (≤{} req{part})", self.optimum, self.largest)
    }

    fn ratio(&self) -> String {
        match self.worst {
            Some(w) => format!("{} ({w:.3})", ratio(self.allocator, self.optimum)),
            None => "-".into(),
        }
    }
}

struct Row {
    trace: &'static str,
    gpus: usize,
    seeds: usize,
    requests: usize,
    allocator: usize,
    first_fit: usize,
    best_static: usize,
    best_static_name: String,
    static_mix: usize,
    optimum: Exact,
    best_placement: Exact,
    slice_seconds: [u64; 3],
}

fn main() {
    let Ok(catalog) = Catalog::by_key(MODEL) else {
        eprintln!("no {MODEL} catalog");
        std::process::exit(1);
    };
    let started = Instant::now();
    let statics = candidates(catalog);
    // `-- --mixed-only`: only the mixed-fleet section (issue #28), under a second.
    let mixed_only = std::env::args().any(|a| a == "--mixed-only");
    if !mixed_only {
        single_model(catalog, &statics);
    }
    match MixedFleet::issue_28() {
        Ok(fleet) => slicehub_bench::mixed_no_queue::print(&fleet, &statics, &labs(), 1..=5),
        Err(e) => eprintln!("no mixed fleet: {e}"),
    }
    println!("\n(bench took {:.1} s)", started.elapsed().as_secs_f64());
}

/// The single-model rows: every GPU an H100-80GB with MIG on.
fn single_model(catalog: &Catalog, statics: &[(String, Layout)]) {
    println!(
        "model {MODEL}; {} static layouts tried ({} named by mig-parted, the rest maximal enumerated layouts)\n",
        statics.len(),
        catalog.static_layouts().len()
    );

    let mut rows = Vec::new();
    for (name, spec, seeds, gpu_counts) in [
        (
            "mixed lab (40 st, 3 h)",
            Spec::lab(Mix::Mixed),
            1..=5u64,
            &[1usize, 2, 4, 8][..],
        ),
        (
            "all-1g lab (40 st, 3 h)",
            Spec::lab(Mix::All1g),
            1..=5,
            &[1, 2, 4, 8][..],
        ),
        (
            "mixed tutorial (12 st, 1 h)",
            Spec::tutorial(Mix::Mixed),
            1..=20,
            &[1, 2][..],
        ),
        (
            "all-1g tutorial (12 st, 1 h)",
            Spec::tutorial(Mix::All1g),
            1..=20,
            &[1, 2][..],
        ),
    ] {
        for &gpus in gpu_counts {
            let traces: Vec<Vec<Request>> = seeds.clone().map(|s| classroom(spec, s)).collect();
            rows.push(evaluate(catalog, statics, name, gpus, &traces));
        }
    }
    print_table(&rows);
    print_utilization(&rows);
    print_targets(&rows);
    latency(catalog);
}

fn evaluate(
    catalog: &Catalog,
    statics: &[(String, Layout)],
    trace: &'static str,
    gpus: usize,
    traces: &[Vec<Request>],
) -> Row {
    let searched = gpus <= MAX_EXACT_GPUS;
    let best = best_uniform(catalog, statics, gpus, traces);
    let mut row = Row {
        trace,
        gpus,
        seeds: traces.len(),
        requests: 0,
        allocator: 0,
        first_fit: 0,
        best_static: best.granted,
        best_static_name: best.name,
        static_mix: greedy_mix(catalog, statics, gpus, traces),
        optimum: Exact::default(),
        best_placement: Exact::default(),
        slice_seconds: [0, 0, best.slice_seconds],
    };
    for t in traces {
        row.requests += t.len();
        let ours = replay(
            catalog,
            dynamic_fleet(catalog, gpus),
            t,
            Policy::FragmentationAware,
        );
        row.allocator += ours.granted;
        let first_fit = replay(catalog, dynamic_fleet(catalog, gpus), t, Policy::FirstFit);
        row.first_fit += first_fit.granted;
        row.slice_seconds[0] += ours.slice_seconds;
        row.slice_seconds[1] += first_fit.slice_seconds;
        if !searched {
            row.optimum.skipped = Some("not searched (>2 GPUs)");
            row.best_placement.skipped = row.optimum.skipped;
            continue;
        }
        let placement = optimum(catalog, gpus, t, Rule::GrantIfRoom, NODE_LIMIT);
        if t.len() > MAX_EXACT_REQUESTS_REFUSING {
            row.optimum.skipped = Some("not searched (>30 req)");
            if let Some(p) = placement {
                row.best_placement.add(p, ours.granted, t.len());
            }
            continue;
        }
        // Where both searches run, a seed counts only when both finished, so the two
        // columns cover the same traces.
        let refuse = optimum(catalog, gpus, t, Rule::MayRefuse, NODE_LIMIT);
        if let (Some(p), Some(o)) = (placement, refuse) {
            row.best_placement.add(p, ours.granted, t.len());
            row.optimum.add(o, ours.granted, t.len());
        }
    }
    row
}

fn ratio(part: usize, whole: usize) -> String {
    if whole == 0 {
        return "-".into();
    }
    format!("{:.3}", part as f64 / whole as f64)
}

fn print_table(rows: &[Row]) {
    println!("Requests granted, summed over seeds (H100-80GB, every GPU dynamic unless static).");
    println!("allocator = slicehub-mig's fragmentation-aware policy; first-fit = lowest GPU, lowest start;");
    println!("best static = the one layout, on every GPU, that grants most over the row's seeds; static mix =");
    println!(
        "per-GPU layouts picked greedily over the row's seeds (both chosen knowing the traces);"
    );
    println!("optimum = offline exact, may refuse requests that fit; best placement = offline exact when every");
    println!("request that fits must be granted. Ratios: sum (worst single seed).\n");
    println!(
        "| trace | GPUs | seeds | requests | allocator | first-fit | best static | static mix | optimum | best placement | alloc/optimum | alloc/best placement | alloc/best static | best static layout |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|");
    for r in rows {
        println!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            r.trace,
            r.gpus,
            r.seeds,
            r.requests,
            r.allocator,
            r.first_fit,
            r.best_static,
            r.static_mix,
            r.optimum.cell(r.seeds),
            r.best_placement.cell(r.seeds),
            r.optimum.ratio(),
            r.best_placement.ratio(),
            ratio(r.allocator, r.best_static),
            r.best_static_name
        );
    }
}

fn print_utilization(rows: &[Row]) {
    println!("\nGPU time delivered to granted sessions, compute-slice-hours summed over seeds");
    println!(
        "(best static = the one layout, on every GPU, delivering the most over the row's seeds).\n"
    );
    println!("| trace | GPUs | allocator | first-fit | best static | alloc/best static |");
    println!("|---|---:|---:|---:|---:|---:|");
    for r in rows {
        let [ours, ff, st] = r.slice_seconds.map(|s| s as f64 / 3600.0);
        println!(
            "| {} | {} | {ours:.1} | {ff:.1} | {st:.1} | {:.3} |",
            r.trace,
            r.gpus,
            ours / st.max(f64::MIN_POSITIVE)
        );
    }
}

fn print_targets(rows: &[Row]) {
    println!("\nTargets:");
    let mut all = Exact::default();
    let mut placement = Exact::default();
    for r in rows {
        for (total, part) in [(&mut all, &r.optimum), (&mut placement, &r.best_placement)] {
            total.solved += part.solved;
            total.optimum += part.optimum;
            total.allocator += part.allocator;
            total.worst = match (total.worst, part.worst) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
        }
    }
    println!(
        "- >= 0.98 of optimum: {} over {} exactly solved traces (worst single trace {:.3}); against the best placement \
         that grants every request that fits: {} (worst {:.3})",
        ratio(all.allocator, all.optimum),
        all.solved,
        all.worst.unwrap_or(f64::NAN),
        ratio(placement.allocator, placement.optimum),
        placement.worst.unwrap_or(f64::NAN),
    );
    for r in rows.iter().filter(|r| r.trace.starts_with("mixed")) {
        let gain = (r.allocator as f64 / r.best_static.max(1) as f64 - 1.0) * 100.0;
        let mix_gain = (r.allocator as f64 / r.static_mix.max(1) as f64 - 1.0) * 100.0;
        println!(
            "- >= 20% more than best static, {} on {} GPU(s): {gain:+.1}% (vs hindsight static mix {mix_gain:+.1}%)",
            r.trace, r.gpus
        );
    }
}

/// Decision latency with 64 dynamic GPUs under a load of eight 40-student labs.
fn latency(catalog: &Catalog) {
    let mut timings: Vec<Duration> = Vec::new();
    let mut decisions = 0;
    let mut granted_total = 0;
    for seed in 1..=5u64 {
        let mut trace: Vec<Request> = (0..8)
            .flat_map(|class| classroom(Spec::lab(Mix::Mixed), seed * 100 + class))
            .collect();
        trace.sort_by_key(|r| (r.arrival, r.departure));
        let outcome = replay(
            catalog,
            dynamic_fleet(catalog, 64),
            &trace,
            Policy::FragmentationAware,
        );
        granted_total += outcome.granted;
        decisions += outcome.timings.len();
        timings.extend(outcome.timings);
    }
    timings.sort();
    let at = |q: f64| {
        let i = ((timings.len() as f64 * q).ceil() as usize).clamp(1, timings.len()) - 1;
        timings[i].as_secs_f64() * 1e6
    };
    println!(
        "\nDecision latency, 64 dynamic GPUs, {decisions} decisions ({granted_total} granted): p50 {:.1} µs, p99 {:.1} µs, max {:.1} µs (target p99 < 1000 µs)",
        at(0.50),
        at(0.99),
        at(1.0)
    );
}
