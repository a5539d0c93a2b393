//! The best static configuration for a set of traces (one row of the table): every named
//! (mig-parted) and every maximal enumerated layout tried on all GPUs alike, and a greedy
//! per-GPU mix. Both are chosen knowing the traces, so they flatter static mode.

use slicehub_mig::{maximal_layouts, Catalog, GpuState, Layout, Policy};

use crate::simulate::replay;
use crate::trace::Request;

/// (name, layout) for every named and maximal layout, named ones first, no duplicates.
pub fn candidates(catalog: &Catalog) -> Vec<(String, Layout)> {
    let mut out: Vec<(String, Layout)> = catalog
        .static_layouts()
        .into_iter()
        .map(|l| (l.name, l.layout))
        .collect();
    for layout in maximal_layouts(catalog) {
        if !out.iter().any(|(_, l)| *l == layout) {
            out.push((layout.describe(catalog), layout));
        }
    }
    out
}

/// (granted, compute-slice-seconds) summed over the traces, GPU i carrying `layouts[i]`.
fn run(catalog: &Catalog, layouts: &[&Layout], traces: &[Vec<Request>]) -> (usize, u64) {
    traces.iter().fold((0, 0), |(n, s), trace| {
        let gpus = layouts
            .iter()
            .filter_map(|l| GpuState::with_fixed_layout(catalog, (*l).clone()).ok())
            .collect();
        let outcome = replay(catalog, gpus, trace, Policy::FragmentationAware);
        (n + outcome.granted, s + outcome.slice_seconds)
    })
}

/// The best single layout put on every GPU for every trace.
pub struct BestUniform {
    /// Most requests granted in total, and by which layout.
    pub granted: usize,
    pub name: String,
    /// Most compute-slice-seconds delivered in total by any one layout.
    pub slice_seconds: u64,
}

pub fn best_uniform(
    catalog: &Catalog,
    candidates: &[(String, Layout)],
    gpus: usize,
    traces: &[Vec<Request>],
) -> BestUniform {
    let mut best = BestUniform {
        granted: 0,
        name: String::from("none"),
        slice_seconds: 0,
    };
    for (name, layout) in candidates {
        let (granted, slice_seconds) = run(catalog, &vec![layout; gpus], traces);
        if granted > best.granted {
            best.granted = granted;
            best.name = name.clone();
        }
        best.slice_seconds = best.slice_seconds.max(slice_seconds);
    }
    best
}

/// GPU by GPU, the layout that grants most given the GPUs already chosen.
pub fn greedy_mix(
    catalog: &Catalog,
    candidates: &[(String, Layout)],
    gpus: usize,
    traces: &[Vec<Request>],
) -> usize {
    let mut chosen: Vec<&Layout> = Vec::new();
    let mut best = 0;
    for _ in 0..gpus {
        let mut pick: Option<(usize, &Layout)> = None;
        for (_, layout) in candidates {
            let mut trial = chosen.clone();
            trial.push(layout);
            let (n, _) = run(catalog, &trial, traces);
            if pick.is_none_or(|(m, _)| n > m) {
                pick = Some((n, layout));
            }
        }
        let Some((n, layout)) = pick else { break };
        chosen.push(layout);
        best = n;
    }
    best
}
