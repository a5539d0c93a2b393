//! The mixed fleet of issue #28: one H100-80GB with MIG on, one with MIG off (used whole),
//! two L40S-48GB used whole and one L4-24GB split into 4 MPS shares. Only the MIG GPU can
//! be re-sliced; a whole or shared GPU is static by nature (the portal treats
//! `catalog.is_whole()` as `Mode::Static`, its instances always there), so it carries all
//! its instances as a fixed layout, all free.

use std::sync::OnceLock;

use slicehub_mig::{Catalog, GpuState, Layout, MigError, Placement, Shares, Sharing};

/// How the MIG GPU of the fleet is run.
#[derive(Debug, Clone, Copy)]
pub enum MigGpu<'l> {
    /// Re-sliced per claim (the allocator's dynamic mode).
    Dynamic,
    /// One layout for the whole lab.
    Fixed(&'l Layout),
}

/// What kind of GPU a profile of the fleet runs on, for per-kind rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    MigSlice,
    WholeGpu,
    Share,
}

impl Kind {
    pub fn label(self) -> &'static str {
        match self {
            Kind::MigSlice => "MIG slices",
            Kind::WholeGpu => "whole GPUs",
            Kind::Share => "shares",
        }
    }
}

pub struct MixedFleet {
    pub mig: &'static Catalog,
    /// The GPUs that are static by nature, in fleet order after the MIG GPU.
    pub fixed: Vec<&'static Catalog>,
}

/// `l4.24gb` split into 4 MPS shares; built once, as the portal builds it from its config.
fn l4_in_four() -> Result<&'static Catalog, MigError> {
    static SHARED: OnceLock<Catalog> = OnceLock::new();
    if let Some(c) = SHARED.get() {
        return Ok(c);
    }
    let shared = Catalog::whole_by_key("L4-24GB")?.shared(Shares { count: 4, sharing: Sharing::Mps })?;
    Ok(SHARED.get_or_init(|| shared))
}

impl MixedFleet {
    /// The issue's fleet: H100 (MIG), H100 (whole), 2 × L40S (whole), L4 in 4 shares.
    pub fn issue_28() -> Result<MixedFleet, MigError> {
        let l40s = Catalog::whole_by_key("L40S-48GB")?;
        Ok(MixedFleet {
            mig: Catalog::by_key("H100-80GB")?,
            fixed: vec![Catalog::whole_by_key("H100-80GB")?, l40s, l40s, l4_in_four()?],
        })
    }

    /// One line naming the GPUs in order.
    pub fn describe(&self) -> String {
        let mut parts = vec![format!("{} MIG on", self.mig.key())];
        for c in &self.fixed {
            let p = &c.profiles()[0];
            parts.push(match c.shares() {
                Some(s) => format!("{} in {} shares ({})", c.key(), s.count, p.name),
                None => format!("{} whole ({})", c.key(), p.name),
            });
        }
        parts.join(", ")
    }

    /// The fleet's GPUs, the MIG GPU first.
    pub fn gpus(&self, mig: MigGpu<'_>) -> Vec<GpuState<'static>> {
        let first = match mig {
            MigGpu::Dynamic => Some(GpuState::dynamic(self.mig)),
            MigGpu::Fixed(layout) => GpuState::with_fixed_layout(self.mig, layout.clone()).ok(),
        };
        first
            .into_iter()
            .chain(self.fixed.iter().filter_map(|c| all_instances(c).ok()))
            .collect()
    }

    /// The kind of GPU `profile` runs on.
    pub fn kind(&self, profile: &str) -> Kind {
        if self.mig.profile_by_name(profile).is_ok() {
            Kind::MigSlice
        } else if slicehub_mig::share_of(profile).is_some() {
            Kind::Share
        } else {
            Kind::WholeGpu
        }
    }
}

/// A whole or shared GPU with every instance its one profile allows, all free.
fn all_instances(catalog: &'static Catalog) -> Result<GpuState<'static>, MigError> {
    let profile = &catalog.profiles()[0];
    let layout = Layout::from_placements(
        catalog,
        profile.starts.iter().map(|&s| Placement::new(profile.id, s)),
    )?;
    GpuState::with_fixed_layout(catalog, layout)
}

#[cfg(test)]
mod tests {
    use super::*;
    use slicehub_mig::{allocate, Mode};

    #[test]
    fn the_fleet_is_one_dynamic_mig_gpu_and_four_static_ones_with_every_instance() {
        let fleet = MixedFleet::issue_28().unwrap();
        let gpus = fleet.gpus(MigGpu::Dynamic);
        assert_eq!(gpus.len(), 5);
        assert_eq!(gpus[0].mode, Mode::Dynamic);
        let instances: Vec<usize> = gpus[1..].iter().map(|g| g.layout.len()).collect();
        assert_eq!(instances, [1, 1, 1, 4]);
        assert!(gpus[1..].iter().all(|g| g.mode == Mode::Static && g.held.is_empty()));
        assert_eq!(allocate(&gpus, "l40s.48gb").unwrap().gpu_index, 2);
        assert_eq!(allocate(&gpus, "l4.24gb.1of4").unwrap().gpu_index, 4);
        assert_eq!(allocate(&gpus, "h100.80gb").unwrap().gpu_index, 1);
        assert_eq!(allocate(&gpus, "3g.40gb").unwrap().gpu_index, 0);
        assert_eq!(fleet.kind("3g.40gb"), Kind::MigSlice);
        assert_eq!(fleet.kind("l4.24gb.1of4"), Kind::Share);
        assert_eq!(fleet.kind("h100.80gb"), Kind::WholeGpu);
    }

    #[test]
    fn a_fixed_mig_gpu_carries_its_layout() {
        let fleet = MixedFleet::issue_28().unwrap();
        let layout = fleet.mig.static_layout("all-1g.10gb").unwrap().layout;
        let gpus = fleet.gpus(MigGpu::Fixed(&layout));
        assert_eq!(gpus.len(), 5);
        assert_eq!((gpus[0].mode, gpus[0].layout.len()), (Mode::Static, 7));
        assert!(allocate(&gpus, "2g.20gb").is_err(), "an all-1g GPU has no 2g instance");
    }
}
