//! The offline optimum: the most requests a planner that knows the whole trace could grant,
//! when a granted session keeps its placement (GPU and start) until it departs and every
//! GPU's layout must stay valid at all times.
//!
//! Two rules are searched:
//! - [`Rule::MayRefuse`]: the planner may refuse a request even when it fits (admission
//!   control). This is the optimum the targets refer to.
//! - [`Rule::GrantIfRoom`]: a request that fits somewhere must be granted; only the choice
//!   of GPU and start is free. This bounds what any placement policy could achieve.
//!
//! Exact search over requests in arrival order, memoized on the set of still-running grants.
//! The running set only grows at arrivals, so checking validity at each arrival checks it at
//! all times. States are canonical up to the symmetries of the placement tables (slice
//! permutations that map every allowed placement to an allowed placement of the same
//! profile) and up to the order of GPUs.

use std::collections::HashMap;

use slicehub_mig::{Catalog, Layout, Placement, MEMORY_SLICES};

use crate::trace::Request;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    MayRefuse,
    GrantIfRoom,
}

/// (profile id, start, departure) of a running grant.
type Running = (u32, u8, u32);
type State = Vec<Vec<Running>>;

struct Solver<'a> {
    catalog: &'a Catalog,
    trace: &'a [Request],
    rule: Rule,
    profile_ids: Vec<Option<u32>>,
    /// For each symmetry, the image of each (profile id, start).
    symmetries: Vec<HashMap<(u32, u8), u8>>,
    memo: HashMap<(usize, State), usize>,
    nodes: u64,
    node_limit: u64,
}

/// The optimum under `rule`, or `None` if the search would visit more than `node_limit`
/// distinct states.
pub fn optimum(
    catalog: &Catalog,
    gpus: usize,
    trace: &[Request],
    rule: Rule,
    node_limit: u64,
) -> Option<usize> {
    let profile_ids = trace
        .iter()
        .map(|r| {
            r.class
                .profile_name(catalog)
                .and_then(|n| catalog.profile_by_name(&n).ok().map(|p| p.id))
        })
        .collect();
    let mut solver = Solver {
        catalog,
        trace,
        rule,
        profile_ids,
        symmetries: symmetries(catalog),
        memo: HashMap::new(),
        nodes: 0,
        node_limit,
    };
    solver.solve(0, vec![Vec::new(); gpus])
}

/// Slice permutations under which the catalog's placement tables are unchanged.
fn symmetries(catalog: &Catalog) -> Vec<HashMap<(u32, u8), u8>> {
    let n = usize::from(MEMORY_SLICES);
    let mut out = Vec::new();
    let mut perm: Vec<u8> = (0..MEMORY_SLICES).collect();
    loop {
        if let Some(map) = image_map(catalog, &perm) {
            out.push(map);
        }
        if !next_permutation(&mut perm) {
            break;
        }
    }
    debug_assert!(!out.is_empty() && n == perm.len());
    out
}

fn image_map(catalog: &Catalog, perm: &[u8]) -> Option<HashMap<(u32, u8), u8>> {
    let mut map = HashMap::new();
    for p in catalog.profiles() {
        for &s in &p.starts {
            let mut image: Vec<u8> = (s..s + p.memory_slices)
                .map(|i| perm[usize::from(i)])
                .collect();
            image.sort_unstable();
            let start = image[0];
            let contiguous = image.windows(2).all(|w| w[1] == w[0] + 1);
            if !contiguous || !p.starts.contains(&start) {
                return None;
            }
            map.insert((p.id, s), start);
        }
    }
    Some(map)
}

fn next_permutation(v: &mut [u8]) -> bool {
    let Some(i) = (1..v.len()).rev().find(|&i| v[i - 1] < v[i]) else {
        return false;
    };
    let j = (i..v.len()).rev().find(|&j| v[j] > v[i - 1]).unwrap_or(i);
    v.swap(i - 1, j);
    v[i..].reverse();
    true
}

impl Solver<'_> {
    fn canonical(&self, gpu: &[Running]) -> Vec<Running> {
        let mut best: Option<Vec<Running>> = None;
        for map in &self.symmetries {
            let mut image: Vec<Running> = gpu
                .iter()
                .map(|&(id, s, d)| (id, map.get(&(id, s)).copied().unwrap_or(s), d))
                .collect();
            image.sort_unstable();
            if best.as_ref().is_none_or(|b| image < *b) {
                best = Some(image);
            }
        }
        best.unwrap_or_default()
    }

    fn solve(&mut self, r: usize, state: State) -> Option<usize> {
        let Some(request) = self.trace.get(r) else {
            return Some(0);
        };
        let mut state: State = state
            .iter()
            .map(|gpu| {
                let running: Vec<Running> = gpu
                    .iter()
                    .copied()
                    .filter(|&(_, _, departure)| departure > request.arrival)
                    .collect();
                self.canonical(&running)
            })
            .collect();
        state.sort_unstable();
        let key = (r, state);
        if let Some(&known) = self.memo.get(&key) {
            return Some(known);
        }
        self.nodes += 1;
        if self.nodes > self.node_limit {
            return None;
        }
        let (_, state) = key;
        let upper = self.trace.len() - r;
        let mut options: Vec<State> = Vec::new();
        if let Some(profile_id) = self.profile_ids[r] {
            let profile = self.catalog.profile_by_id(profile_id).ok()?;
            for g in 0..state.len() {
                if g > 0 && state[g] == state[g - 1] {
                    continue;
                }
                let layout = Layout::from(
                    state[g]
                        .iter()
                        .map(|&(id, start, _)| Placement::new(id, start))
                        .collect::<Vec<_>>(),
                );
                for start in layout.free_starts(self.catalog, profile).ok()? {
                    let mut next = state.clone();
                    next[g].push((profile_id, start, request.departure));
                    options.push(next);
                }
            }
        }
        let mut best = 0;
        for next in options.iter().cloned() {
            best = best.max(1 + self.solve(r + 1, next)?);
            if best == upper {
                break;
            }
        }
        if options.is_empty() || (self.rule == Rule::MayRefuse && best < upper) {
            best = best.max(self.solve(r + 1, state.clone())?);
        }
        self.memo.insert((r, state), best);
        Some(best)
    }
}
