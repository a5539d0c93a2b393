use slicehub_bench::optimum::{optimum, Rule};
use slicehub_bench::simulate::{dynamic_fleet, replay};
use slicehub_bench::trace::{classroom, Class, Mix, Request, Spec};
use slicehub_mig::{Catalog, Layout, Placement, Policy};

/// The same optimum by plain exhaustive search: no memo, no symmetry.
fn brute(
    catalog: &Catalog,
    trace: &[Request],
    rule: Rule,
    gpus: Vec<Vec<(Placement, u32)>>,
) -> usize {
    let Some((request, rest)) = trace.split_first() else {
        return 0;
    };
    let gpus: Vec<Vec<(Placement, u32)>> = gpus
        .into_iter()
        .map(|g| {
            g.into_iter()
                .filter(|&(_, d)| d > request.arrival)
                .collect()
        })
        .collect();
    let name = request.class.profile_name(catalog).unwrap();
    let profile = catalog.profile_by_name(&name).unwrap();
    let mut best = None;
    for g in 0..gpus.len() {
        let layout = Layout::from(gpus[g].iter().map(|&(p, _)| p).collect::<Vec<_>>());
        for start in layout.free_starts(catalog, profile).unwrap() {
            let mut next = gpus.clone();
            next[g].push((Placement::new(profile.id, start), request.departure));
            let v = 1 + brute(catalog, rest, rule, next);
            best = Some(best.map_or(v, |b: usize| b.max(v)));
        }
    }
    match (best, rule) {
        (Some(b), Rule::GrantIfRoom) => b,
        (b, _) => b.unwrap_or(0).max(brute(catalog, rest, rule, gpus)),
    }
}

fn small_traces() -> Vec<Vec<Request>> {
    let spec = Spec {
        students: 5,
        lab_minutes: 40,
        session_minutes: (10, 30),
        mix: Mix::Mixed,
    };
    (1..=12u64)
        .map(|seed| classroom(spec, seed))
        .filter(|t| t.len() <= 8)
        .collect()
}

#[test]
fn the_search_matches_brute_force_on_small_traces() {
    let catalog = Catalog::by_key("H100-80GB").unwrap();
    let traces = small_traces();
    assert!(traces.len() >= 5);
    for trace in &traces {
        for gpus in 1..=2 {
            for rule in [Rule::MayRefuse, Rule::GrantIfRoom] {
                let fast = optimum(catalog, gpus, trace, rule, u64::MAX).unwrap();
                let slow = brute(catalog, trace, rule, vec![Vec::new(); gpus]);
                assert_eq!(fast, slow, "{rule:?} on {gpus} GPUs: {trace:?}");
            }
        }
    }
}

#[test]
fn the_optimum_bounds_every_online_policy() {
    let catalog = Catalog::by_key("A100-40GB").unwrap();
    let spec = Spec {
        students: 8,
        lab_minutes: 45,
        session_minutes: (10, 30),
        mix: Mix::Mixed,
    };
    for seed in 1..=4 {
        let trace = classroom(spec, seed);
        for gpus in 1..=2 {
            let refuse = optimum(catalog, gpus, &trace, Rule::MayRefuse, 200_000)
                .expect("small trace solved");
            let grant = optimum(catalog, gpus, &trace, Rule::GrantIfRoom, 200_000)
                .expect("small trace solved");
            assert!(refuse >= grant);
            for policy in [Policy::FragmentationAware, Policy::FirstFit] {
                let online = replay(catalog, dynamic_fleet(catalog, gpus), &trace, policy).granted;
                assert!(online <= grant, "seed {seed}: {online} > {grant}");
            }
        }
    }
}

#[test]
fn a_long_session_can_be_worth_refusing() {
    // A 7g for the whole hour, then seven 1g requests: refusing the 7g grants 7.
    let catalog = Catalog::by_key("H100-80GB").unwrap();
    let mut trace = vec![Request {
        arrival: 0,
        departure: 3600,
        class: Class::G7,
    }];
    trace.extend((0..7).map(|i| Request {
        arrival: 10 + i,
        departure: 3600,
        class: Class::G1,
    }));
    assert_eq!(optimum(catalog, 1, &trace, Rule::MayRefuse, 1000), Some(7));
    assert_eq!(
        optimum(catalog, 1, &trace, Rule::GrantIfRoom, 1000),
        Some(1)
    );
}
