use proptest::prelude::*;
use slicehub_mig::{
    allocate_with, Action, Catalog, GpuState, Layout, MigError, Mode, Placement, Policy,
};

#[derive(Debug, Clone)]
enum Op {
    Allocate { profile: usize },
    Release { pick: usize },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0usize..16).prop_map(|profile| Op::Allocate { profile }),
        2 => (0usize..64).prop_map(|pick| Op::Release { pick }),
    ]
}

#[derive(Debug, Clone)]
struct Fleet {
    catalog: usize,
    /// Per GPU: static (one of the catalog's named layouts) or dynamic.
    statics: Vec<bool>,
    policy: Policy,
}

fn fleet() -> impl Strategy<Value = Fleet> {
    (
        0usize..6,
        prop::collection::vec(prop::bool::weighted(0.3), 1..5),
        prop::bool::ANY,
    )
        .prop_map(|(catalog, statics, first_fit)| Fleet {
            catalog,
            statics,
            policy: if first_fit {
                Policy::FirstFit
            } else {
                Policy::FragmentationAware
            },
        })
}

fn build(fleet: &Fleet, layout_picks: &[usize]) -> Vec<GpuState<'static>> {
    let catalog = &Catalog::builtin()[fleet.catalog];
    let named = catalog.static_layouts();
    fleet
        .statics
        .iter()
        .zip(layout_picks.iter().cycle())
        .map(|(&is_static, pick)| match is_static {
            false => GpuState::dynamic(catalog),
            true => {
                let layout = named[pick % named.len()].layout.clone();
                GpuState::with_fixed_layout(catalog, layout).unwrap()
            }
        })
        .collect()
}

/// free_starts of every profile: the free space of a GPU as the outside sees it.
fn free_space(gpu: &GpuState<'_>) -> Vec<Vec<u8>> {
    gpu.catalog
        .profiles()
        .iter()
        .map(|p| gpu.layout.free_starts(gpu.catalog, p).unwrap())
        .collect()
}

fn held(gpus: &[GpuState<'_>]) -> Vec<(usize, Placement)> {
    gpus.iter()
        .enumerate()
        .flat_map(|(i, g)| g.held.iter().map(move |&p| (i, p)))
        .collect()
}

fn check_consistent(gpus: &[GpuState<'_>], initial: &[Layout]) {
    for (gpu, initial) in gpus.iter().zip(initial) {
        gpu.layout.validate(gpu.catalog).unwrap();
        for h in &gpu.held {
            assert!(gpu.layout.contains(*h));
        }
        let mut held = gpu.held.clone();
        held.sort();
        held.dedup();
        assert_eq!(held.len(), gpu.held.len(), "an instance held twice");
        match gpu.mode {
            Mode::Static => assert_eq!(&gpu.layout, initial, "static layouts never change"),
            Mode::Dynamic => assert_eq!(gpu.layout.len(), gpu.held.len()),
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn random_allocations_and_releases_keep_every_layout_valid(
        fleet in fleet(),
        picks in prop::collection::vec(0usize..32, 1..5),
        ops in prop::collection::vec(op(), 1..80),
    ) {
        let mut gpus = build(&fleet, &picks);
        let initial: Vec<Layout> = gpus.iter().map(|g| g.layout.clone()).collect();
        let catalog = gpus[0].catalog;
        for op in ops {
            match op {
                Op::Allocate { profile } => {
                    let name = catalog.profiles()[profile % catalog.profiles().len()].name.clone();
                    match allocate_with(&gpus, &name, fleet.policy) {
                        Ok(decision) => {
                            let gpu = &gpus[decision.gpu_index];
                            if decision.action == Action::Create {
                                prop_assert_eq!(gpu.mode, Mode::Dynamic);
                                gpu.layout.check_insert(catalog, decision.placement).unwrap();
                            } else {
                                prop_assert!(gpu.free_instances().any(|p| p == decision.placement));
                            }
                            prop_assert!(!decision.explanation.is_empty());
                            gpus[decision.gpu_index].apply(&decision).unwrap();
                        }
                        Err(MigError::NoRoom { .. }) => {
                            // No room means no GPU had a free start or an idle instance.
                            let p = catalog.profile_by_name(&name).unwrap();
                            for gpu in &gpus {
                                prop_assert!(!gpu.free_instances().any(|f| f.profile_id == p.id));
                                if gpu.mode == Mode::Dynamic {
                                    prop_assert!(gpu.layout.free_starts(catalog, p).unwrap().is_empty());
                                }
                            }
                        }
                        Err(other) => prop_assert!(false, "unexpected {other}"),
                    }
                }
                Op::Release { pick } => {
                    let all = held(&gpus);
                    if !all.is_empty() {
                        let (gpu, placement) = all[pick % all.len()];
                        let others: Vec<Placement> = gpus[gpu]
                            .layout
                            .placements()
                            .iter()
                            .copied()
                            .filter(|&p| p != placement)
                            .collect();
                        gpus[gpu].release(placement).unwrap();
                        if gpus[gpu].mode == Mode::Dynamic {
                            prop_assert_eq!(gpus[gpu].layout.placements(), others.as_slice());
                        }
                    }
                }
            }
            check_consistent(&gpus, &initial);
        }
    }

    #[test]
    fn release_restores_the_free_space_held_before_the_allocation(
        catalog in 0usize..6,
        gpu_count in 1usize..4,
        setup in prop::collection::vec(op(), 0..40),
        profile in 0usize..16,
    ) {
        let catalog = &Catalog::builtin()[catalog];
        let mut gpus: Vec<GpuState> = (0..gpu_count).map(|_| GpuState::dynamic(catalog)).collect();
        for op in setup {
            match op {
                Op::Allocate { profile } => {
                    let name = &catalog.profiles()[profile % catalog.profiles().len()].name;
                    if let Ok(d) = slicehub_mig::allocate(&gpus, name) {
                        gpus[d.gpu_index].apply(&d).unwrap();
                    }
                }
                Op::Release { pick } => {
                    let all = held(&gpus);
                    if !all.is_empty() {
                        let (gpu, placement) = all[pick % all.len()];
                        gpus[gpu].release(placement).unwrap();
                    }
                }
            }
        }
        let before: Vec<Vec<Vec<u8>>> = gpus.iter().map(free_space).collect();
        let layouts: Vec<Layout> = gpus.iter().map(|g| g.layout.clone()).collect();
        let name = &catalog.profiles()[profile % catalog.profiles().len()].name;
        if let Ok(decision) = slicehub_mig::allocate(&gpus, name) {
            gpus[decision.gpu_index].apply(&decision).unwrap();
            prop_assert_ne!(&free_space(&gpus[decision.gpu_index]), &before[decision.gpu_index]);
            gpus[decision.gpu_index].release(decision.placement).unwrap();
        }
        let after: Vec<Vec<Vec<u8>>> = gpus.iter().map(free_space).collect();
        prop_assert_eq!(after, before);
        let now: Vec<Layout> = gpus.iter().map(|g| g.layout.clone()).collect();
        prop_assert_eq!(now, layouts);
    }

    #[test]
    fn insert_then_remove_is_the_identity_and_failures_change_nothing(
        catalog in 0usize..6,
        placements in prop::collection::vec((0u32..25, 0u8..9), 0..12),
    ) {
        let catalog = &Catalog::builtin()[catalog];
        let mut layout = Layout::new();
        for (id, start) in placements {
            let placement = Placement::new(id, start);
            let before = layout.clone();
            match layout.insert(catalog, placement) {
                Ok(()) => {
                    layout.validate(catalog).unwrap();
                    let mut undone = layout.clone();
                    undone.remove(catalog, placement).unwrap();
                    prop_assert_eq!(&undone, &before);
                }
                Err(_) => prop_assert_eq!(&layout, &before),
            }
        }
    }
}
