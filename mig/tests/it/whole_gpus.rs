//! GPUs used whole (no MIG): one profile spanning the whole GPU, found from NVML's product
//! names by whole words, handed out like a static GPU's one instance.

use slicehub_mig::{allocate, Catalog, GpuState, Layout, MigError, Mode, Placement, WHOLE_PROFILE_ID};

#[test]
fn the_common_cards_without_mig_and_the_mig_ones_with_it_off_are_built_in() {
    let keys: Vec<&str> = Catalog::builtin_whole().iter().map(Catalog::key).collect();
    for key in [
        "L40S-48GB", "L4-24GB", "A10-24GB", "A40-48GB", "RTX4090-24GB", "RTX6000ADA-48GB", "T4-16GB", "V100-16GB",
        "V100-32GB", "A100-40GB", "A100-80GB", "H100-80GB", "H100-94GB", "H200-141GB", "B200-180GB",
    ] {
        assert!(keys.contains(&key), "{key} missing from {keys:?}");
    }
    for catalog in Catalog::builtin_whole() {
        assert!(catalog.is_whole());
        let [profile] = catalog.profiles() else { panic!("{} has one profile", catalog.key()) };
        assert_eq!((profile.id, profile.memory_slices, profile.compute_slices), (WHOLE_PROFILE_ID, 8, 7));
        assert_eq!((profile.starts.as_slice(), profile.max_instances), (&[0u8][..], 1));
        assert!(profile.multiprocessors.is_some_and(|sms| sms >= 40), "{profile:?}");
        let nominal = u64::from(catalog.memory_gb()) * 1024;
        assert!(profile.memory_mib <= nominal && profile.memory_mib * 100 >= nominal * 90, "{profile:?}");
    }
    let l40s = Catalog::whole_by_key("l40s-48gb").unwrap();
    assert_eq!(l40s.profiles()[0].name, "l40s.48gb");
    assert_eq!(l40s.profiles()[0].multiprocessors, Some(142));
    assert!(!Catalog::by_key("H100-80GB").unwrap().is_whole(), "the MIG catalogs stay as they are");
}

#[test]
fn nvml_names_find_their_whole_catalog_by_whole_words() {
    for (name, key) in [
        ("NVIDIA L40S", "L40S-48GB"),
        ("NVIDIA L4", "L4-24GB"),
        ("NVIDIA A10", "A10-24GB"),
        ("NVIDIA A40", "A40-48GB"),
        ("NVIDIA GeForce RTX 4090", "RTX4090-24GB"),
        ("NVIDIA RTX 6000 Ada Generation", "RTX6000ADA-48GB"),
        ("Tesla T4", "T4-16GB"),
        ("Tesla V100-SXM2-16GB", "V100-16GB"),
        ("Tesla V100-PCIE-32GB", "V100-32GB"),
        ("NVIDIA H100 80GB HBM3", "H100-80GB"),
        ("NVIDIA A100-SXM4-40GB", "A100-40GB"),
    ] {
        assert_eq!(Catalog::whole_for_model(name).map(Catalog::key).ok(), Some(key), "{name}");
    }
    for unknown in ["Tesla V100", "NVIDIA GeForce RTX 3090", "NVIDIA A100"] {
        assert!(matches!(Catalog::whole_for_model(unknown), Err(MigError::UnknownModel { .. })), "{unknown}");
    }
}

#[test]
fn a_whole_gpu_is_one_instance_handed_out_once() {
    let l40s = Catalog::whole_by_key("L40S-48GB").unwrap();
    let whole = Placement::new(WHOLE_PROFILE_ID, 0);
    let mut gpu = GpuState::dynamic(l40s);
    gpu.mode = Mode::Static;
    gpu.layout = Layout::from_placements(l40s, [whole]).unwrap();
    let mut gpus = vec![gpu, GpuState::dynamic(Catalog::by_key("H100-80GB").unwrap())];
    let decision = allocate(&gpus, "l40s.48gb").unwrap();
    assert_eq!((decision.gpu_index, decision.placement), (0, whole));
    gpus[0].apply(&decision).unwrap();
    let err = allocate(&gpus, "l40s.48gb").unwrap_err();
    assert!(matches!(err, MigError::NoRoom { .. }), "{err}");
    assert_eq!(allocate(&gpus, "1g.10gb").unwrap().gpu_index, 1, "MIG claims go to the MIG GPU");
    assert!(allocate(&gpus[..1], "1g.10gb").is_err(), "a whole GPU is not sliced");
}

#[test]
fn a_whole_catalog_keeps_its_shape_through_json() {
    let t4 = Catalog::whole_by_key("T4-16GB").unwrap();
    let json = serde_json::to_string(t4).unwrap();
    let back: Catalog = serde_json::from_str(&json).unwrap();
    assert_eq!(&back, t4);
    let forged = json.replace("\"max_instances\":1", "\"max_instances\":2");
    assert!(serde_json::from_str::<Catalog>(&forged).is_err(), "a whole GPU is one instance");
    let forged = json.replace("\"id\":1000", "\"id\":7");
    let err = serde_json::from_str::<Catalog>(&forged).unwrap_err().to_string();
    assert!(err.contains("exactly one profile, the whole GPU"), "{err}");
}
