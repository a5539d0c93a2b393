use crate::catalog::Catalog;
use crate::layout::{Layout, Occupancy, Placement};

/// Every valid layout of `catalog`, the empty one included, each exactly once.
pub fn enumerate_layouts(catalog: &Catalog) -> Vec<Layout> {
    let candidates = all_placements(catalog);
    let mut out = Vec::new();
    let mut current = Vec::new();
    walk(
        catalog,
        &candidates,
        0,
        Occupancy::EMPTY,
        &mut current,
        &mut out,
    );
    out
}

/// The valid layouts to which no further instance can be added.
pub fn maximal_layouts(catalog: &Catalog) -> Vec<Layout> {
    let candidates = all_placements(catalog);
    enumerate_layouts(catalog)
        .into_iter()
        .filter(|layout| {
            Occupancy::of(catalog, layout).is_ok_and(|occ| {
                !candidates
                    .iter()
                    .any(|&(index, start)| occ.fits(&catalog.profiles()[index], index, start))
            })
        })
        .collect()
}

/// (profile index, start) for every placement the catalog allows on an empty GPU.
pub(crate) fn all_placements(catalog: &Catalog) -> Vec<(usize, u8)> {
    catalog
        .profiles()
        .iter()
        .enumerate()
        .flat_map(|(index, p)| p.starts.iter().map(move |&s| (index, s)))
        .collect()
}

fn walk(
    catalog: &Catalog,
    candidates: &[(usize, u8)],
    next: usize,
    occupancy: Occupancy,
    current: &mut Vec<Placement>,
    out: &mut Vec<Layout>,
) {
    let Some(&(index, start)) = candidates.get(next) else {
        out.push(Layout::from(current.clone()));
        return;
    };
    walk(catalog, candidates, next + 1, occupancy, current, out);
    let profile = &catalog.profiles()[index];
    if occupancy.fits(profile, index, start) {
        let mut with = occupancy;
        with.add(profile, index, start);
        current.push(Placement::new(profile.id, start));
        walk(catalog, candidates, next + 1, with, current, out);
        current.pop();
    }
}
