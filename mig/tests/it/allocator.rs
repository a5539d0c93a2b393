use slicehub_mig::{
    allocate, allocate_with, release, Action, Catalog, GpuState, Layout, MigError, Mode, Placement,
    Policy,
};

fn h100() -> &'static Catalog {
    Catalog::by_key("H100-80GB").unwrap()
}

fn grant(gpus: &mut [GpuState<'_>], profile: &str) -> (usize, Placement) {
    let decision = allocate(gpus, profile).unwrap();
    gpus[decision.gpu_index].apply(&decision).unwrap();
    (decision.gpu_index, decision.placement)
}

fn at(catalog: &Catalog, name: &str, start: u8) -> Placement {
    Placement::new(catalog.profile_by_name(name).unwrap().id, start)
}

#[test]
fn a_first_1g_goes_to_the_end_of_the_gpu() {
    let c = h100();
    let mut gpus = vec![GpuState::dynamic(c), GpuState::dynamic(c)];
    let decision = allocate(&gpus, "1g.10gb").unwrap();
    assert_eq!(decision.gpu_index, 0);
    assert_eq!(decision.placement, at(c, "1g.10gb", 6));
    assert_eq!(decision.action, Action::Create);
    assert_eq!(
        decision.explanation,
        "gpu0 start 6: create 1g.10gb; keeps a 7g.80gb placeable on gpu1; lowest GPU index among equals"
    );
    gpus[0].apply(&decision).unwrap();
    // The second 1g packs next to the first, leaving gpu1 whole.
    let (gpu, placement) = grant(&mut gpus, "1g.10gb");
    assert_eq!(gpu, 0);
    assert!(placement.start >= 4, "{placement:?}");
    let (gpu, _) = grant(&mut gpus, "4g.40gb");
    assert_eq!(gpu, 0, "a 4g still fits at 0 beside the small ones");
}

#[test]
fn best_fit_prefers_the_fuller_gpu() {
    let c = h100();
    let mut gpus = vec![GpuState::dynamic(c), GpuState::dynamic(c)];
    gpus[1].apply(&create(c, 1, "4g.40gb", 0)).unwrap();
    let decision = allocate(&gpus, "3g.40gb").unwrap();
    assert_eq!(
        (decision.gpu_index, decision.placement),
        (1, at(c, "3g.40gb", 4))
    );
    assert!(
        decision
            .explanation
            .starts_with("gpu1 start 4: create 3g.40gb; keeps a 7g.80gb placeable on gpu0;"),
        "{}",
        decision.explanation
    );
}

fn create(c: &Catalog, gpu: usize, name: &str, start: u8) -> slicehub_mig::Decision {
    slicehub_mig::Decision {
        gpu_index: gpu,
        placement: at(c, name, start),
        action: Action::Create,
        explanation: String::new(),
    }
}

#[test]
fn fills_a_gpu_then_says_why_there_is_no_room() {
    let c = h100();
    let mut gpus = vec![GpuState::dynamic(c)];
    for _ in 0..7 {
        grant(&mut gpus, "1g.10gb");
    }
    gpus[0].layout.validate(c).unwrap();
    let err = allocate(&gpus, "1g.10gb").unwrap_err();
    assert_eq!(
        err.to_string(),
        "no room for 1g.10gb: gpu0 (dynamic) has 1g.10gb@0, 1g.10gb@1, 1g.10gb@2, \
         1g.10gb@3, 1g.10gb@4, 1g.10gb@5, 1g.10gb@6: already 7 1g.10gb (max)"
    );
    let mut gpus = vec![GpuState::dynamic(c)];
    gpus[0].apply(&create(c, 0, "2g.20gb", 0)).unwrap();
    gpus[0].apply(&create(c, 0, "3g.40gb", 4)).unwrap();
    let err = allocate(&gpus, "3g.40gb").unwrap_err();
    assert_eq!(
        err.to_string(),
        "no room for 3g.40gb: gpu0 (dynamic) has 2g.20gb@0, 3g.40gb@4: starts 0,4 are all taken"
    );
}

#[test]
fn release_destroys_only_that_instance() {
    let c = h100();
    let mut gpus = vec![GpuState::dynamic(c)];
    let (_, a) = grant(&mut gpus, "2g.20gb");
    let (_, b) = grant(&mut gpus, "1g.10gb");
    let before = gpus[0].layout.clone();
    gpus[0].release(a).unwrap();
    assert_eq!(gpus[0].layout.placements(), [b]);
    assert_eq!(
        gpus[0].release(a),
        Err(MigError::NotHeld {
            placement: a.describe(c)
        })
    );
    assert_eq!(release(c, &before, a).unwrap(), gpus[0].layout);
    assert!(release(c, &gpus[0].layout, a).is_err());
}

#[test]
fn static_gpus_hand_out_existing_instances() {
    let c = h100();
    let mut gpus = vec![
        GpuState::with_static_layout(c, "all-balanced").unwrap(),
        GpuState::with_static_layout(c, "all-1g.10gb").unwrap(),
    ];
    assert_eq!(gpus[0].mode, Mode::Static);
    let layout_before = gpus[0].layout.clone();
    let decision = allocate(&gpus, "3g.40gb").unwrap();
    assert_eq!(decision.action, Action::Claim);
    assert_eq!(
        (decision.gpu_index, decision.placement),
        (0, at(c, "3g.40gb", 4))
    );
    gpus[0].apply(&decision).unwrap();
    assert_eq!(gpus[0].layout, layout_before);
    let err = allocate(&gpus, "3g.40gb").unwrap_err();
    assert_eq!(
        err.to_string(),
        "no room for 3g.40gb: gpu0 (static: 2g.20gb@0, 1g.10gb@2, 1g.10gb@3, 3g.40gb@4) \
         has 1 3g.40gb instance(s), all held; gpu1 (static: 1g.10gb@0, 1g.10gb@1, 1g.10gb@2, \
         1g.10gb@3, 1g.10gb@4, 1g.10gb@5, 1g.10gb@6) has no 3g.40gb instance"
    );
    // Claiming twice is refused; releasing keeps the instance for the next claim.
    assert!(matches!(
        gpus[0].apply(&decision),
        Err(MigError::InstanceHeld { .. })
    ));
    gpus[0].release(decision.placement).unwrap();
    assert_eq!(gpus[0].layout, layout_before);
    assert_eq!(allocate(&gpus, "3g.40gb").unwrap(), decision);
    // 1g requests fill the fuller static GPU (all-balanced) first.
    for _ in 0..2 {
        assert_eq!(grant(&mut gpus, "1g.10gb").0, 0);
    }
    assert_eq!(grant(&mut gpus, "1g.10gb").0, 1);
}

#[test]
fn dynamic_gpus_reuse_idle_instances_before_creating() {
    let c = h100();
    let mut gpu = GpuState::dynamic(c);
    gpu.layout = Layout::from_placements(c, [at(c, "2g.20gb", 2)]).unwrap();
    let gpus = vec![gpu];
    let decision = allocate(&gpus, "2g.20gb").unwrap();
    assert_eq!(decision.action, Action::Claim);
    assert_eq!(decision.placement, at(c, "2g.20gb", 2));
    assert!(decision
        .explanation
        .ends_with("reuses an idle instance, nothing created"));
}

#[test]
fn mixed_models_use_their_own_profile_names() {
    let a100 = Catalog::by_key("A100-40GB").unwrap();
    let c = h100();
    let gpus = vec![GpuState::dynamic(a100), GpuState::dynamic(c)];
    assert_eq!(allocate(&gpus, "1g.5gb").unwrap().gpu_index, 0);
    assert_eq!(allocate(&gpus, "2g.10gb").unwrap().gpu_index, 0);
    assert_eq!(allocate(&gpus, "2g.20gb").unwrap().gpu_index, 1);
    let gpus = vec![GpuState::dynamic(a100)];
    assert!(matches!(
        allocate(&gpus, "3g.40gb"),
        Err(MigError::ProfileNotOnModel { .. })
    ));
    assert!(matches!(
        allocate(&gpus, "nonsense"),
        Err(MigError::UnknownProfile { .. })
    ));
    assert!(matches!(
        allocate(&[], "1g.10gb"),
        Err(MigError::NoRoom { .. })
    ));
}

#[test]
fn inconsistent_gpu_states_are_skipped_not_trusted() {
    let c = h100();
    let mut broken = GpuState::dynamic(c);
    broken.layout = Layout::from(vec![at(c, "3g.40gb", 4), at(c, "2g.20gb", 4)]);
    let mut ghost = GpuState::dynamic(c);
    ghost.held.push(at(c, "1g.10gb", 0));
    let gpus = vec![broken, ghost];
    let err = allocate(&gpus, "1g.10gb").unwrap_err().to_string();
    assert!(err.contains("gpu0 skipped: its layout is invalid"), "{err}");
    assert!(
        err.contains("gpu1 skipped: held 1g.10gb@0 is not in its layout"),
        "{err}"
    );
}

#[test]
fn first_fit_takes_the_lowest_start_on_the_first_gpu() {
    let c = h100();
    let gpus = vec![GpuState::dynamic(c), GpuState::dynamic(c)];
    let decision = allocate_with(&gpus, "1g.10gb", Policy::FirstFit).unwrap();
    assert_eq!((decision.gpu_index, decision.placement.start), (0, 0));
    assert!(decision.explanation.ends_with("first fit"));
}

#[test]
fn decisions_are_deterministic() {
    let c = h100();
    let mut gpus: Vec<GpuState> = (0..4).map(|_| GpuState::dynamic(c)).collect();
    let mut log = Vec::new();
    for name in [
        "1g.10gb", "3g.40gb", "2g.20gb", "1g.10gb", "4g.40gb", "1g.20gb",
    ] {
        let first = allocate(&gpus, name).unwrap();
        assert_eq!(allocate(&gpus, name).unwrap(), first);
        gpus[first.gpu_index].apply(&first).unwrap();
        log.push((first.gpu_index, first.placement.start));
    }
    assert_eq!(log.len(), 6);
}
