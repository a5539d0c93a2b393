use std::fmt;

use serde::{Deserialize, Serialize};

use crate::catalog::{Catalog, Profile, COMPUTE_SLICES, MAX_PROFILES};
use crate::error::MigError;

/// One GPU instance: a profile at a starting memory slice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Placement {
    pub profile_id: u32,
    pub start: u8,
}

impl Placement {
    pub fn new(profile_id: u32, start: u8) -> Placement {
        Placement { profile_id, start }
    }

    /// "3g.40gb@4", or "id9@4" when the catalog does not know the id.
    pub fn describe(&self, catalog: &Catalog) -> String {
        match catalog.profile_by_id(self.profile_id) {
            Ok(p) => format!("{}@{}", p.name, self.start),
            Err(_) => format!("id{}@{}", self.profile_id, self.start),
        }
    }
}

impl fmt::Display for Placement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "id{}@{}", self.profile_id, self.start)
    }
}

/// The GPU instances on one GPU, kept sorted by start.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(from = "Vec<Placement>", into = "Vec<Placement>")]
pub struct Layout {
    placements: Vec<Placement>,
}

impl From<Vec<Placement>> for Layout {
    fn from(mut placements: Vec<Placement>) -> Layout {
        placements.sort_by_key(|p| (p.start, p.profile_id));
        Layout { placements }
    }
}

impl From<Layout> for Vec<Placement> {
    fn from(layout: Layout) -> Vec<Placement> {
        layout.placements
    }
}

impl Layout {
    pub fn new() -> Layout {
        Layout::default()
    }

    /// A layout from placements, checked against the catalog.
    pub fn from_placements(
        catalog: &Catalog,
        placements: impl IntoIterator<Item = Placement>,
    ) -> Result<Layout, MigError> {
        let mut layout = Layout::new();
        for p in placements {
            layout.insert(catalog, p)?;
        }
        Ok(layout)
    }

    pub fn placements(&self) -> &[Placement] {
        &self.placements
    }

    pub fn len(&self) -> usize {
        self.placements.len()
    }

    pub fn is_empty(&self) -> bool {
        self.placements.is_empty()
    }

    pub fn contains(&self, placement: Placement) -> bool {
        self.placements.contains(&placement)
    }

    /// Ok when every placement is a known profile at an allowed start, nothing overlaps,
    /// compute stays within 7 slices and no profile exceeds its max instances.
    pub fn validate(&self, catalog: &Catalog) -> Result<(), MigError> {
        Occupancy::of(catalog, self).map(|_| ())
    }

    /// Whether `placement` could be added now; the error says why not.
    pub fn check_insert(&self, catalog: &Catalog, placement: Placement) -> Result<(), MigError> {
        let occupancy = Occupancy::of(catalog, self)?;
        occupancy.check(catalog, self, placement)
    }

    /// Adds `placement`, or leaves the layout unchanged and says why not.
    pub fn insert(&mut self, catalog: &Catalog, placement: Placement) -> Result<(), MigError> {
        self.check_insert(catalog, placement)?;
        self.push_sorted(placement);
        Ok(())
    }

    /// Removes `placement`, or leaves the layout unchanged if it is not there.
    pub fn remove(&mut self, catalog: &Catalog, placement: Placement) -> Result<(), MigError> {
        match self.placements.iter().position(|&p| p == placement) {
            Some(i) => {
                self.placements.remove(i);
                Ok(())
            }
            None => Err(MigError::NotInLayout {
                placement: placement.describe(catalog),
            }),
        }
    }

    /// Starts where an instance of `profile` could be created now, ascending.
    pub fn free_starts(&self, catalog: &Catalog, profile: &Profile) -> Result<Vec<u8>, MigError> {
        let index = catalog
            .profile_index(profile.id)
            .ok_or_else(|| catalog.missing_profile(&profile.name))?;
        let occupancy = Occupancy::of(catalog, self)?;
        let profile = &catalog.profiles()[index];
        Ok(profile
            .starts
            .iter()
            .copied()
            .filter(|&s| occupancy.fits(profile, index, s))
            .collect())
    }

    /// "2g.20gb@0, 3g.40gb@4", or "empty".
    pub fn describe(&self, catalog: &Catalog) -> String {
        if self.placements.is_empty() {
            return "empty".to_string();
        }
        self.placements
            .iter()
            .map(|p| p.describe(catalog))
            .collect::<Vec<_>>()
            .join(", ")
    }

    pub(crate) fn push_sorted(&mut self, placement: Placement) {
        let at = self
            .placements
            .partition_point(|p| (p.start, p.profile_id) < (placement.start, placement.profile_id));
        self.placements.insert(at, placement);
    }
}

/// What a layout uses: memory-slice bitmask, compute slices, instances per profile index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Occupancy {
    pub mask: u8,
    pub compute: u8,
    pub counts: [u8; MAX_PROFILES],
}

impl Occupancy {
    pub const EMPTY: Occupancy = Occupancy {
        mask: 0,
        compute: 0,
        counts: [0; MAX_PROFILES],
    };

    /// Occupancy of a layout, checking it placement by placement.
    pub fn of(catalog: &Catalog, layout: &Layout) -> Result<Occupancy, MigError> {
        let mut occupancy = Occupancy::EMPTY;
        let mut seen = Layout::new();
        for &placement in layout.placements() {
            occupancy.check(catalog, &seen, placement)?;
            let index = catalog
                .profile_index(placement.profile_id)
                .ok_or_else(|| unknown_id(catalog, placement.profile_id))?;
            occupancy.add(&catalog.profiles()[index], index, placement.start);
            seen.push_sorted(placement);
        }
        Ok(occupancy)
    }

    /// Occupancy of a layout without building error messages; `None` if the layout is invalid.
    pub fn of_valid(catalog: &Catalog, layout: &Layout) -> Option<Occupancy> {
        let mut occupancy = Occupancy::EMPTY;
        for placement in layout.placements() {
            let index = catalog.profile_index(placement.profile_id)?;
            let profile = &catalog.profiles()[index];
            if !profile.allows_start(placement.start)
                || !occupancy.fits(profile, index, placement.start)
            {
                return None;
            }
            occupancy.add(profile, index, placement.start);
        }
        Some(occupancy)
    }

    /// Fast check for the allocator: could `profile` (at `index`) start at `start`?
    #[inline]
    pub fn fits(&self, profile: &Profile, index: usize, start: u8) -> bool {
        let Some(mask) = profile.mask_at(start) else {
            return false;
        };
        self.mask & mask == 0
            && self.compute.saturating_add(profile.compute_slices) <= COMPUTE_SLICES
            && self.counts[index] < profile.max_instances
    }

    #[inline]
    pub fn add(&mut self, profile: &Profile, index: usize, start: u8) {
        if let Some(mask) = profile.mask_at(start) {
            self.mask |= mask;
        }
        self.compute = self.compute.saturating_add(profile.compute_slices);
        self.counts[index] = self.counts[index].saturating_add(1);
    }

    /// Same as [`Occupancy::fits`] but says why not, naming the placement in the way.
    pub fn check(
        &self,
        catalog: &Catalog,
        layout: &Layout,
        placement: Placement,
    ) -> Result<(), MigError> {
        let index = catalog
            .profile_index(placement.profile_id)
            .ok_or_else(|| unknown_id(catalog, placement.profile_id))?;
        let profile = &catalog.profiles()[index];
        let start = placement.start;
        let mask = match profile.mask_at(start) {
            Some(mask) if profile.allows_start(start) => mask,
            _ => {
                return Err(MigError::StartNotAllowed {
                    profile: profile.name.clone(),
                    start,
                    allowed: profile.starts_text(),
                })
            }
        };
        if self.mask & mask != 0 {
            let other = layout
                .placements()
                .iter()
                .find(|p| {
                    catalog
                        .profile_by_id(p.profile_id)
                        .ok()
                        .and_then(|q| q.mask_at(p.start))
                        .is_some_and(|m| m & mask != 0)
                })
                .map(|p| p.describe(catalog))
                .unwrap_or_else(|| "an existing instance".to_string());
            return Err(MigError::Overlap {
                profile: profile.name.clone(),
                start,
                other,
            });
        }
        if self.counts[index] >= profile.max_instances {
            return Err(MigError::MaxInstances {
                profile: profile.name.clone(),
                max: profile.max_instances,
            });
        }
        if self.compute.saturating_add(profile.compute_slices) > COMPUTE_SLICES {
            return Err(MigError::ComputeExhausted {
                profile: profile.name.clone(),
                start,
                needed: profile.compute_slices,
                free: COMPUTE_SLICES.saturating_sub(self.compute),
            });
        }
        Ok(())
    }
}

fn unknown_id(catalog: &Catalog, id: u32) -> MigError {
    MigError::UnknownProfileId {
        id,
        model: catalog.key().to_string(),
    }
}
