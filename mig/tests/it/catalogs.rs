use std::collections::HashSet;

use slicehub_mig::{enumerate_layouts, Catalog, MigError, Profile, COMPUTE_SLICES, MEMORY_SLICES};

const KEYS: [&str; 6] = [
    "A100-40GB",
    "A100-80GB",
    "H100-80GB",
    "H100-94GB",
    "H200-141GB",
    "B200-180GB",
];

#[test]
fn all_six_models_are_built_in() {
    let keys: Vec<&str> = Catalog::builtin().iter().map(|c| c.key()).collect();
    assert_eq!(keys, KEYS);
}

/// name, id, memory slices, compute slices, MiB, starts, max instances, +me
type Row<'a> = (&'a str, u32, u8, u8, u64, &'a [u8], u8, bool);

#[test]
fn h100_80gb_equals_the_hardware_readout() {
    // BUILD-NOTES "GPUs": nvidia-smi mig -lgip / -lgipp and NVML on a real H100 80GB HBM3.
    let expected: [Row; 7] = [
        ("1g.10gb", 19, 1, 1, 9984, &[0, 1, 2, 3, 4, 5, 6], 7, false),
        (
            "1g.10gb+me",
            20,
            1,
            1,
            9984,
            &[0, 1, 2, 3, 4, 5, 6],
            1,
            true,
        ),
        ("1g.20gb", 15, 2, 1, 20096, &[0, 2, 4, 6], 4, false),
        ("2g.20gb", 14, 2, 2, 20096, &[0, 2, 4], 3, false),
        ("3g.40gb", 9, 4, 3, 40448, &[0, 4], 2, false),
        ("4g.40gb", 5, 4, 4, 40448, &[0], 1, false),
        ("7g.80gb", 0, 8, 7, 81152, &[0], 1, false),
    ];
    let catalog = Catalog::by_key("H100-80GB").unwrap();
    let actual: Vec<Row> = catalog
        .profiles()
        .iter()
        .map(|p| {
            (
                p.name.as_str(),
                p.id,
                p.memory_slices,
                p.compute_slices,
                p.memory_mib,
                p.starts.as_slice(),
                p.max_instances,
                p.media_extensions,
            )
        })
        .collect();
    assert_eq!(actual, expected);
}

#[test]
fn every_catalog_obeys_the_invariants() {
    for catalog in Catalog::builtin() {
        let key = catalog.key();
        let mut ids = HashSet::new();
        let mut names = HashSet::new();
        for p in catalog.profiles() {
            assert!(ids.insert(p.id), "{key}: duplicate id {}", p.id);
            assert!(names.insert(p.name.clone()), "{key}: duplicate {}", p.name);
            assert!(p.compute_slices >= 1 && p.compute_slices <= COMPUTE_SLICES);
            assert!(p.memory_slices >= 1 && p.memory_slices <= MEMORY_SLICES);
            for &s in &p.starts {
                assert!(s + p.memory_slices <= MEMORY_SLICES, "{key} {}@{s}", p.name);
            }
            assert!(
                p.max_instances as usize <= p.starts.len(),
                "{key} {}",
                p.name
            );
            assert!(p.max_instances * p.compute_slices <= COMPUTE_SLICES);
            assert_eq!(
                p.media_extensions,
                p.name.ends_with("+me"),
                "{key} {}",
                p.name
            );
            assert!(p.memory_mib > 0);
        }
        // The name's leading "<n>g" is the compute slice count.
        for p in catalog.profiles() {
            let g: u8 = p.name.split('g').next().unwrap().parse().unwrap();
            assert_eq!(g, p.compute_slices, "{key} {}", p.name);
        }
    }
}

#[test]
fn max_instances_is_reachable_and_never_exceeded() {
    for catalog in Catalog::builtin() {
        let layouts = enumerate_layouts(catalog);
        for p in catalog.profiles() {
            let most = layouts
                .iter()
                .map(|l| {
                    l.placements()
                        .iter()
                        .filter(|x| x.profile_id == p.id)
                        .count()
                })
                .max()
                .unwrap();
            assert_eq!(
                most,
                p.max_instances as usize,
                "{} {}",
                catalog.key(),
                p.name
            );
        }
    }
}

#[test]
fn nvml_product_names_find_their_catalog() {
    let cases = [
        ("NVIDIA A100-SXM4-40GB", "A100-40GB"),
        ("NVIDIA A100-PCIE-40GB", "A100-40GB"),
        ("NVIDIA A100-SXM4-80GB", "A100-80GB"),
        ("NVIDIA A100 80GB PCIe", "A100-80GB"),
        ("NVIDIA H100 80GB HBM3", "H100-80GB"),
        ("NVIDIA H100 PCIe", "H100-80GB"),
        ("NVIDIA H800", "H100-80GB"),
        ("NVIDIA H100 NVL", "H100-94GB"),
        ("NVIDIA H100 SXM5 94GB", "H100-94GB"),
        ("NVIDIA H200", "H200-141GB"),
        ("NVIDIA H200 NVL", "H200-141GB"),
        ("NVIDIA B200", "B200-180GB"),
        ("h100-80gb", "H100-80GB"),
        ("A100-40GB", "A100-40GB"),
    ];
    for (name, key) in cases {
        let catalog = Catalog::for_model(name).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(catalog.key(), key, "{name}");
    }
}

#[test]
fn unknown_or_ambiguous_models_are_clear_errors() {
    for name in [
        "NVIDIA GeForce RTX 4090",
        "NVIDIA GH200 480GB",
        "NVIDIA A100",
        "NVIDIA H100 96GB",
        "",
    ] {
        match Catalog::for_model(name) {
            Err(MigError::UnknownModel { supported, .. }) => {
                assert!(supported.contains("H100-80GB"))
            }
            other => panic!("{name}: {other:?}"),
        }
    }
    assert!(matches!(
        Catalog::by_key("A30-24GB"),
        Err(MigError::UnknownModel { .. })
    ));
}

#[test]
fn keys_are_matched_loosely() {
    for key in ["H100-80GB", "h100-80gb", "H100 80GB", "h10080gb"] {
        assert_eq!(Catalog::by_key(key).unwrap().key(), "H100-80GB");
    }
}

#[test]
fn profiles_by_name_and_id() {
    let h100 = Catalog::by_key("H100-80GB").unwrap();
    assert_eq!(h100.profile_by_name("3g.40gb").unwrap().id, 9);
    assert_eq!(h100.profile_by_name("MIG 3g.40gb").unwrap().id, 9);
    assert_eq!(h100.profile_by_name(" 1G.10GB+ME ").unwrap().id, 20);
    assert_eq!(h100.profile_by_id(9).unwrap().name, "3g.40gb");
    assert_eq!(
        h100.profile_by_id(42),
        Err(MigError::UnknownProfileId {
            id: 42,
            model: "H100-80GB".into()
        })
    );
}

#[test]
fn a_profile_of_another_model_is_named_as_such() {
    let h100 = Catalog::by_key("H100-80GB").unwrap();
    let err = h100.profile_by_name("1g.5gb").unwrap_err();
    match &err {
        MigError::ProfileNotOnModel {
            name,
            model,
            found_on,
            ..
        } => {
            assert_eq!(name, "1g.5gb");
            assert_eq!(model, "H100-80GB");
            assert_eq!(found_on, "A100-40GB");
        }
        other => panic!("{other:?}"),
    }
    let text = err.to_string();
    assert!(text.contains("does not exist on H100-80GB"), "{text}");
    assert!(text.contains("1g.10gb"), "{text}");

    let err = h100.profile_by_name("9g.1tb").unwrap_err();
    assert!(matches!(err, MigError::UnknownProfile { .. }), "{err:?}");
    assert!(err.to_string().contains("unknown MIG profile '9g.1tb'"));
}

#[test]
fn catalogs_round_trip_through_json() {
    for catalog in Catalog::builtin() {
        let json = serde_json::to_string(catalog).unwrap();
        let back: Catalog = serde_json::from_str(&json).unwrap();
        assert_eq!(&back, catalog);
    }
}

#[test]
fn invalid_catalogs_are_refused() {
    let good = Catalog::by_key("H100-80GB").unwrap().profiles().to_vec();
    let make = |profiles: Vec<Profile>| Catalog::new("X", "H100", 80, "test", profiles);
    assert!(make(good.clone()).is_ok());

    let mut dup_id = good.clone();
    dup_id[1].id = 19;
    let mut past_end = good.clone();
    past_end[4].starts = vec![0, 4, 6];
    let mut too_many = good.clone();
    too_many[0].max_instances = 8;
    let mut unsorted = good.clone();
    unsorted[2].starts = vec![2, 0];
    let mut dup_name = good.clone();
    dup_name[2].name = "1G.10GB".into();
    for (what, profiles) in [
        ("duplicate id", dup_id),
        ("start past the end", past_end),
        ("max above starts", too_many),
        ("unsorted starts", unsorted),
        ("duplicate name", dup_name),
        ("no profiles", vec![]),
    ] {
        assert!(
            matches!(make(profiles), Err(MigError::InvalidCatalog { .. })),
            "{what}"
        );
    }

    let json = serde_json::json!({
        "key": "X", "family": "H100", "memory_gb": 80, "model": "x",
        "profiles": [{"name": "2g", "id": 1, "memory_slices": 2, "compute_slices": 2,
                      "memory_mib": 1, "starts": [7], "max_instances": 1,
                      "media_extensions": false}]
    });
    let err = serde_json::from_value::<Catalog>(json).unwrap_err();
    assert!(err.to_string().contains("exceeds"), "{err}");
}

#[test]
fn named_static_layouts_follow_mig_parted() {
    let h100 = Catalog::by_key("H100-80GB").unwrap();
    let names: Vec<String> = h100.static_layouts().into_iter().map(|l| l.name).collect();
    assert_eq!(
        names,
        [
            "all-1g.10gb",
            "all-1g.10gb.me",
            "all-1g.20gb",
            "all-2g.20gb",
            "all-3g.40gb",
            "all-4g.40gb",
            "all-7g.80gb",
            "all-balanced"
        ]
    );
    let balanced = h100.static_layout("all-balanced").unwrap();
    assert_eq!(
        balanced.counts,
        [
            ("1g.10gb".to_string(), 2),
            ("2g.20gb".to_string(), 1),
            ("3g.40gb".to_string(), 1)
        ]
    );
    assert_eq!(
        balanced.layout.describe(h100),
        "2g.20gb@0, 1g.10gb@2, 1g.10gb@3, 3g.40gb@4"
    );
    let a100 = Catalog::by_key("A100-40GB").unwrap();
    // mig-parted's all-1g.10gb on A100-40GB is four 2-slice instances.
    assert_eq!(
        a100.static_layout("all-1g.10gb").unwrap().counts,
        [("1g.10gb".to_string(), 4)]
    );
    assert_eq!(a100.static_layout("all-1g.5gb").unwrap().layout.len(), 7);
    for catalog in Catalog::builtin() {
        let layouts = catalog.static_layouts();
        assert_eq!(
            layouts.len(),
            catalog.profiles().len() + 1,
            "{}",
            catalog.key()
        );
        for l in layouts {
            l.layout.validate(catalog).unwrap();
            let total: usize = l.counts.iter().map(|(_, n)| *n as usize).sum();
            assert_eq!(total, l.layout.len(), "{} {}", catalog.key(), l.name);
        }
    }
    assert!(matches!(
        h100.static_layout("all-1g.5gb"),
        Err(MigError::UnknownStaticLayout { .. })
    ));
}
