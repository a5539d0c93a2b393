//! A [`Catalog`] from what NVML reports about a GPU's instance profiles. Pure, so the same
//! code is checked against recorded hardware output (`docs/hardware/`).

use serde::{Deserialize, Serialize};
use slicehub_mig::{Catalog, Profile};

use slicehub_core::CoreError;

/// One GPU-instance profile as NVML reports it (`nvmlDeviceGetGpuInstanceProfileInfoV` and
/// `nvmlDeviceGetGpuInstancePossiblePlacements_v2`), or as `nvidia-smi mig -lgip/-lgipp` print it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProfileReadout {
    /// NVML profile index (`NVML_GPU_INSTANCE_PROFILE_*`); names the variant when `name` is absent.
    pub index: u32,
    pub id: u32,
    /// e.g. `MIG 1g.10gb+me`, from drivers that report names.
    pub name: Option<String>,
    /// NVML's `sliceCount`: compute slices.
    pub compute_slices: u32,
    /// NVML's `instanceCount`: most instances of this profile on one GPU.
    pub instance_count: u32,
    /// NVML's `memorySizeMB`, which is in MiB.
    pub memory_mib: u64,
    pub placements: Vec<PlacementReadout>,
}

/// A possible placement: `size` memory slices from `start`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlacementReadout {
    pub start: u32,
    pub size: u32,
}

/// The catalog of a GPU named `product_name` with `memory_mib` in total. Profiles with no
/// possible placement are left out (they cannot be created); the key, family and nominal size
/// are the built-in catalog's when the product is one SliceHub knows.
pub fn catalog_from_readout(
    product_name: &str,
    memory_mib: u64,
    readout: &[ProfileReadout],
) -> Result<Catalog, CoreError> {
    let bad = |reason: String| {
        CoreError::Gpu(format!(
            "the MIG profiles NVML reports for {product_name} are unusable: {reason}"
        ))
    };
    let mut profiles = Vec::new();
    for r in readout.iter().filter(|r| !r.placements.is_empty()) {
        profiles.push(profile(r).map_err(&bad)?);
    }
    profiles.sort_by_key(|p| (p.compute_slices, p.memory_slices, p.media_extensions, p.id));
    let (key, family, memory_gb) = match Catalog::for_model(product_name) {
        Ok(known) => (
            known.key().to_string(),
            known.family().to_string(),
            known.memory_gb(),
        ),
        Err(_) => {
            let short = product_name.trim().trim_start_matches("NVIDIA ").trim();
            let family = short.split_whitespace().next().unwrap_or(short).to_string();
            (
                short.to_string(),
                family,
                u32::try_from(memory_mib.div_ceil(1024)).unwrap_or(0),
            )
        }
    };
    Catalog::new(key, family, memory_gb, product_name.trim(), profiles)
        .map_err(|e| bad(e.to_string()))
}

fn profile(r: &ProfileReadout) -> Result<Profile, String> {
    let name = match &r.name {
        Some(name) => name.trim().trim_start_matches("MIG ").trim().to_string(),
        None => derived_name(r),
    };
    let size = r.placements[0].size;
    if r.placements.iter().any(|p| p.size != size) {
        return Err(format!(
            "{name} (id {}): placements of different sizes",
            r.id
        ));
    }
    let small = |what: &str, v: u32| {
        u8::try_from(v).map_err(|_| format!("{name} (id {}): {what} {v} out of range", r.id))
    };
    let mut starts = r
        .placements
        .iter()
        .map(|p| small("start", p.start))
        .collect::<Result<Vec<u8>, String>>()?;
    starts.sort_unstable();
    starts.dedup();
    let memory_slices = small("placement size", size)?;
    let compute_slices = small("compute slices", r.compute_slices)?;
    let max_instances = small("instance count", r.instance_count)?;
    Ok(Profile {
        media_extensions: name.contains("+me"),
        name,
        id: r.id,
        memory_slices,
        compute_slices,
        memory_mib: r.memory_mib,
        starts,
        max_instances,
        multiprocessors: None,
    })
}

/// `<compute>g.<GB>gb` plus the variant of the profile index, for drivers that report no
/// names. NVIDIA rounds the memory up to whole GB (81152 MiB is `7g.80gb`).
fn derived_name(r: &ProfileReadout) -> String {
    let variant = match r.index {
        7 => "+me",
        10..=12 => "+gfx",
        13 | 14 => "-me",
        15 | 16 => "+me.all",
        _ => "",
    };
    format!(
        "{}g.{}gb{variant}",
        r.compute_slices,
        r.memory_mib.div_ceil(1024)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn readout(
        index: u32,
        id: u32,
        compute: u32,
        count: u32,
        mib: u64,
        starts: &[u32],
        size: u32,
    ) -> ProfileReadout {
        ProfileReadout {
            index,
            id,
            name: None,
            compute_slices: compute,
            instance_count: count,
            memory_mib: mib,
            placements: starts
                .iter()
                .map(|&start| PlacementReadout { start, size })
                .collect(),
        }
    }

    /// The H100 80GB readout of BUILD-NOTES "GPUs", in NVML's profile-index order.
    fn h100_readout() -> Vec<ProfileReadout> {
        vec![
            readout(0, 19, 1, 7, 9984, &[0, 1, 2, 3, 4, 5, 6], 1),
            readout(1, 14, 2, 3, 20096, &[0, 2, 4], 2),
            readout(2, 9, 3, 2, 40448, &[0, 4], 4),
            readout(3, 5, 4, 1, 40448, &[0], 4),
            readout(4, 0, 7, 1, 81152, &[0], 8),
            readout(7, 20, 1, 1, 9984, &[0, 1, 2, 3, 4, 5, 6], 1),
            readout(9, 15, 1, 4, 20096, &[0, 2, 4, 6], 2),
        ]
    }

    #[test]
    fn the_h100_readout_without_names_is_the_builtin_catalog() {
        let catalog =
            catalog_from_readout("NVIDIA H100 80GB HBM3", 81559, &h100_readout()).unwrap();
        let builtin = Catalog::by_key("H100-80GB").unwrap();
        assert_eq!(catalog.key(), "H100-80GB");
        assert_eq!(catalog.profiles(), builtin.profiles());
    }

    #[test]
    fn reported_names_win_and_lose_their_prefix() {
        let mut r = h100_readout();
        r[5].name = Some("MIG 1g.10gb+me".into());
        let catalog = catalog_from_readout("NVIDIA H100 80GB HBM3", 81559, &r).unwrap();
        assert!(
            catalog
                .profile_by_name("1g.10gb+me")
                .unwrap()
                .media_extensions
        );
    }

    #[test]
    fn unplaceable_profiles_are_left_out_and_unknown_products_get_a_key() {
        let mut r = h100_readout();
        r[6].placements.clear();
        let catalog = catalog_from_readout("NVIDIA RTX PRO 6000", 97887, &r).unwrap();
        assert_eq!((catalog.key(), catalog.family()), ("RTX PRO 6000", "RTX"));
        assert_eq!(catalog.memory_gb(), 96);
        assert!(catalog.profile_by_id(15).is_err());
    }

    #[test]
    fn impossible_readouts_are_errors_not_panics() {
        let mut r = h100_readout();
        r[2].placements[1].size = 2;
        let e = catalog_from_readout("NVIDIA H100 80GB HBM3", 81559, &r).unwrap_err();
        assert!(
            e.to_string().contains("placements of different sizes"),
            "{e}"
        );
        let mut r = h100_readout();
        r[0].placements[0].start = 300;
        assert!(catalog_from_readout("NVIDIA H100 80GB HBM3", 81559, &r).is_err());
        let mut r = h100_readout();
        r[4].placements[0].start = 4;
        let e = catalog_from_readout("NVIDIA H100 80GB HBM3", 81559, &r).unwrap_err();
        assert!(e.to_string().contains("exceeds 8 memory slices"), "{e}");
        assert!(catalog_from_readout("NVIDIA H100 80GB HBM3", 81559, &[]).is_err());
    }
}
