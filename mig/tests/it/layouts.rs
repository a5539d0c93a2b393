use std::collections::HashSet;

use slicehub_mig::{enumerate_layouts, maximal_layouts, Catalog, Layout, MigError, Placement};

/// A layout from "name@start" items, or the error of the first item that does not fit.
fn build(catalog: &Catalog, items: &[(&str, u8)]) -> Result<Layout, MigError> {
    let mut layout = Layout::new();
    for &(name, start) in items {
        let id = catalog.profile_by_name(name)?.id;
        layout.insert(catalog, Placement::new(id, start))?;
    }
    Ok(layout)
}

/// Same, but from the model's n-g shorthand so one table serves H100-80GB and A100-40GB.
fn gs(catalog: &Catalog, items: &[(&str, u8)]) -> Result<Layout, MigError> {
    let named: Vec<(String, u8)> = items
        .iter()
        .map(|&(g, s)| (profile_for(catalog, g), s))
        .collect();
    let refs: Vec<(&str, u8)> = named.iter().map(|(n, s)| (n.as_str(), *s)).collect();
    build(catalog, &refs)
}

fn profile_for(catalog: &Catalog, short: &str) -> String {
    let (compute, memory): (u8, u8) = match short {
        "1g" => (1, 1),
        "2g" => (2, 2),
        "3g" => (3, 4),
        "4g" => (4, 4),
        "7g" => (7, 8),
        other => panic!("{other}"),
    };
    catalog
        .profiles()
        .iter()
        .find(|p| p.compute_slices == compute && p.memory_slices == memory && !p.media_extensions)
        .unwrap()
        .name
        .clone()
}

fn models() -> [&'static Catalog; 2] {
    [
        Catalog::by_key("H100-80GB").unwrap(),
        Catalog::by_key("A100-40GB").unwrap(),
    ]
}

#[test]
fn documented_valid_layouts_are_accepted() {
    let valid: [&[(&str, u8)]; 6] = [
        &[
            ("1g", 0),
            ("1g", 1),
            ("1g", 2),
            ("1g", 3),
            ("1g", 4),
            ("1g", 5),
            ("1g", 6),
        ],
        &[("3g", 0), ("3g", 4)],
        &[("4g", 0), ("3g", 4)],
        &[("4g", 0), ("2g", 4), ("1g", 6)],
        &[("7g", 0)],
        &[("2g", 0), ("1g", 2), ("1g", 3), ("3g", 4)],
    ];
    for catalog in models() {
        for items in valid {
            let layout =
                gs(catalog, items).unwrap_or_else(|e| panic!("{} {items:?}: {e}", catalog.key()));
            layout.validate(catalog).unwrap();
        }
    }
}

#[test]
fn documented_invalid_layouts_are_rejected_with_the_reason() {
    for catalog in models() {
        let one_g = profile_for(catalog, "1g");
        let seven: Vec<(&str, u8)> = (0..7).map(|s| (one_g.as_str(), s)).collect();
        let mut layout = build(catalog, &seven).unwrap();
        let id = catalog.profile_by_name(&one_g).unwrap().id;
        // An eighth 1g: slice 7 is not an allowed start, any other start overlaps.
        assert!(matches!(
            layout.insert(catalog, Placement::new(id, 7)),
            Err(MigError::StartNotAllowed { start: 7, .. })
        ));
        assert!(matches!(
            layout.insert(catalog, Placement::new(id, 3)),
            Err(MigError::Overlap { .. })
        ));
        assert_eq!(layout.len(), 7);

        let four = gs(catalog, &[("4g", 0), ("4g", 0)]).unwrap_err();
        assert!(matches!(four, MigError::Overlap { .. }), "{four}");
        let four_at_4 = gs(catalog, &[("4g", 0), ("4g", 4)]).unwrap_err();
        assert!(
            matches!(four_at_4, MigError::StartNotAllowed { start: 4, .. }),
            "{four_at_4}"
        );

        let three = gs(catalog, &[("3g", 0), ("3g", 4), ("3g", 0)]).unwrap_err();
        assert!(matches!(three, MigError::Overlap { .. }), "{three}");
        assert!(gs(catalog, &[("3g", 0), ("3g", 4), ("3g", 2)]).is_err());

        let two_at_6 = gs(catalog, &[("2g", 6)]).unwrap_err();
        assert_eq!(
            two_at_6,
            MigError::StartNotAllowed {
                profile: profile_for(catalog, "2g"),
                start: 6,
                allowed: "0,2,4".into()
            }
        );
        assert!(gs(catalog, &[("4g", 0), ("3g", 4), ("1g", 6)]).is_err());
        assert!(gs(catalog, &[("7g", 0), ("1g", 6)]).is_err());
    }
}

#[test]
fn overlap_errors_name_the_instance_in_the_way() {
    let h100 = Catalog::by_key("H100-80GB").unwrap();
    let err = build(h100, &[("2g.20gb", 4), ("3g.40gb", 4)]).unwrap_err();
    assert_eq!(err.to_string(), "3g.40gb@4 overlaps placement 2g.20gb@4");
}

#[test]
fn only_one_media_extension_instance() {
    let h100 = Catalog::by_key("H100-80GB").unwrap();
    let err = build(h100, &[("1g.10gb+me", 0), ("1g.10gb+me", 1)]).unwrap_err();
    assert_eq!(
        err,
        MigError::MaxInstances {
            profile: "1g.10gb+me".into(),
            max: 1
        }
    );
}

#[test]
fn memory_slice_7_is_never_used_by_one_slice_profiles() {
    // Only placements that end at slice 8 reach it: 1g.20gb@6, 3g.40gb@4 and 7g.80gb@0.
    let h100 = Catalog::by_key("H100-80GB").unwrap();
    let covering: HashSet<String> = enumerate_layouts(h100)
        .iter()
        .flat_map(|l| l.placements().to_vec())
        .filter_map(|p| {
            let profile = h100.profile_by_id(p.profile_id).unwrap();
            (p.start + profile.memory_slices > 7).then(|| format!("{}@{}", profile.name, p.start))
        })
        .collect();
    let expected: HashSet<String> = ["1g.20gb@6", "3g.40gb@4", "7g.80gb@0"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(covering, expected);
}

#[test]
fn bad_input_changes_nothing() {
    let h100 = Catalog::by_key("H100-80GB").unwrap();
    let mut layout = build(h100, &[("3g.40gb", 4)]).unwrap();
    let before = layout.clone();
    for placement in [
        Placement::new(99, 0),
        Placement::new(9, 2),
        Placement::new(9, 4),
        Placement::new(19, 200),
        Placement::new(0, 0),
    ] {
        assert!(layout.insert(h100, placement).is_err(), "{placement:?}");
        assert_eq!(layout, before);
    }
    assert_eq!(
        layout.remove(h100, Placement::new(9, 0)),
        Err(MigError::NotInLayout {
            placement: "3g.40gb@0".into()
        })
    );
    assert_eq!(layout, before);
    assert!(matches!(
        build(h100, &[("1g.5gb", 0)]),
        Err(MigError::ProfileNotOnModel { .. })
    ));
    assert!(matches!(
        build(h100, &[("banana", 0)]),
        Err(MigError::UnknownProfile { .. })
    ));
}

#[test]
fn deserialized_layouts_are_checked_by_validate() {
    let h100 = Catalog::by_key("H100-80GB").unwrap();
    let layout: Layout =
        serde_json::from_str(r#"[{"profile_id":9,"start":4},{"profile_id":14,"start":4}]"#)
            .unwrap();
    assert!(matches!(
        layout.validate(h100),
        Err(MigError::Overlap { .. })
    ));
    let unknown: Layout = serde_json::from_str(r#"[{"profile_id":77,"start":0}]"#).unwrap();
    assert!(matches!(
        unknown.validate(h100),
        Err(MigError::UnknownProfileId { id: 77, .. })
    ));
    let p = h100.profile_by_name("1g.10gb").unwrap();
    assert!(layout.free_starts(h100, p).is_err());
}

#[test]
fn free_starts_follow_the_placement_tables() {
    let h100 = Catalog::by_key("H100-80GB").unwrap();
    let free = |layout: &Layout, name: &str| {
        layout
            .free_starts(h100, h100.profile_by_name(name).unwrap())
            .unwrap()
    };
    let empty = Layout::new();
    assert_eq!(free(&empty, "1g.10gb"), [0, 1, 2, 3, 4, 5, 6]);
    assert_eq!(free(&empty, "7g.80gb"), [0]);
    let layout = build(h100, &[("2g.20gb", 0), ("1g.10gb", 6)]).unwrap();
    assert_eq!(free(&layout, "1g.10gb"), [2, 3, 4, 5]);
    assert_eq!(free(&layout, "1g.20gb"), [2, 4]);
    assert_eq!(free(&layout, "2g.20gb"), [2, 4]);
    assert_eq!(free(&layout, "3g.40gb"), Vec::<u8>::new());
    assert_eq!(free(&layout, "4g.40gb"), Vec::<u8>::new());
    let full = build(h100, &[("4g.40gb", 0), ("3g.40gb", 4)]).unwrap();
    for p in h100.profiles() {
        assert!(free(&full, &p.name).is_empty(), "{}", p.name);
    }
}

#[test]
fn enumeration_lists_each_valid_layout_once() {
    for catalog in Catalog::builtin() {
        let layouts = enumerate_layouts(catalog);
        let unique: HashSet<&Layout> = layouts.iter().collect();
        assert_eq!(unique.len(), layouts.len(), "{}", catalog.key());
        assert!(layouts.contains(&Layout::new()));
        for layout in &layouts {
            layout.validate(catalog).unwrap();
            // Every sub-layout (one instance removed) is enumerated too.
            for &p in layout.placements() {
                let mut smaller = layout.clone();
                smaller.remove(catalog, p).unwrap();
                assert!(unique.contains(&smaller));
            }
        }
        let maximal = maximal_layouts(catalog);
        assert!(!maximal.is_empty());
        for layout in &maximal {
            for p in catalog.profiles() {
                assert!(layout.free_starts(catalog, p).unwrap().is_empty());
            }
        }
    }
}

#[test]
fn layouts_serialize_as_a_sorted_list() {
    let h100 = Catalog::by_key("H100-80GB").unwrap();
    let layout = build(h100, &[("3g.40gb", 4), ("2g.20gb", 0)]).unwrap();
    assert_eq!(
        serde_json::to_string(&layout).unwrap(),
        r#"[{"profile_id":14,"start":0},{"profile_id":9,"start":4}]"#
    );
    assert_eq!(layout.describe(h100), "2g.20gb@0, 3g.40gb@4");
    assert_eq!(Layout::new().describe(h100), "empty");
}
