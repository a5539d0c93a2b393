use serde::{Deserialize, Serialize};

use crate::catalog::Catalog;
use crate::layout::{Layout, Occupancy, Placement};

/// A named layout an admin can put on a GPU in static mode, as mig-parted's
/// `config-default.yaml` defines it: profile counts, resolved here to concrete placements.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StaticLayout {
    /// mig-parted's name, e.g. `all-1g.10gb`, `all-1g.10gb.me`, `all-balanced`.
    pub name: String,
    /// (profile name, instances), as in mig-parted's `mig-devices`.
    pub counts: Vec<(String, u8)>,
    pub layout: Layout,
}

pub(crate) fn for_catalog(catalog: &Catalog) -> Vec<StaticLayout> {
    let mut wanted: Vec<(String, Vec<(usize, u8)>)> = catalog
        .profiles()
        .iter()
        .enumerate()
        .map(|(i, p)| {
            (
                format!("all-{}", p.name.replace('+', ".")),
                vec![(i, p.max_instances)],
            )
        })
        .collect();
    if let Some(balanced) = balanced(catalog) {
        wanted.push(("all-balanced".to_string(), balanced));
    }
    wanted
        .into_iter()
        .filter_map(|(name, counts)| {
            let layout = resolve(catalog, &counts)?;
            let counts = counts
                .iter()
                .map(|&(i, n)| (catalog.profiles()[i].name.clone(), n))
                .collect();
            Some(StaticLayout {
                name,
                counts,
                layout,
            })
        })
        .collect()
}

/// mig-parted's `all-balanced` on 7-slice GPUs: two 1g, one 2g and one 3g instance.
fn balanced(catalog: &Catalog) -> Option<Vec<(usize, u8)>> {
    let find = |memory: u8, compute: u8| {
        catalog.profiles().iter().position(|p| {
            p.memory_slices == memory && p.compute_slices == compute && !p.media_extensions
        })
    };
    Some(vec![(find(1, 1)?, 2), (find(2, 2)?, 1), (find(4, 3)?, 1)])
}

/// Concrete placements for profile counts: larger instances first, lowest start first.
fn resolve(catalog: &Catalog, counts: &[(usize, u8)]) -> Option<Layout> {
    let mut instances: Vec<usize> = counts
        .iter()
        .flat_map(|&(i, n)| std::iter::repeat_n(i, usize::from(n)))
        .collect();
    instances.sort_by_key(|&i| {
        let p = &catalog.profiles()[i];
        (
            std::cmp::Reverse(p.memory_slices),
            std::cmp::Reverse(p.compute_slices),
            i,
        )
    });
    let mut chosen = Vec::with_capacity(instances.len());
    place(catalog, &instances, Occupancy::EMPTY, &mut chosen).then(|| Layout::from(chosen))
}

fn place(
    catalog: &Catalog,
    instances: &[usize],
    occupancy: Occupancy,
    chosen: &mut Vec<Placement>,
) -> bool {
    let Some((&index, rest)) = instances.split_first() else {
        return true;
    };
    let profile = &catalog.profiles()[index];
    for &start in &profile.starts {
        if occupancy.fits(profile, index, start) {
            let mut next = occupancy;
            next.add(profile, index, start);
            chosen.push(Placement::new(profile.id, start));
            if place(catalog, rest, next, chosen) {
                return true;
            }
            chosen.pop();
        }
    }
    false
}
