//! The MIG engine's rules as both backends apply them, with its errors in the boundary's terms.

use slicehub_mig::{Catalog, Layout, MigError, Placement};

use crate::CoreError;

/// Whether `placement` can be created next to `existing` on GPU `gpu_index`.
pub fn check_create(
    gpu_index: u32,
    catalog: &Catalog,
    existing: &[Placement],
    placement: Placement,
) -> Result<(), CoreError> {
    catalog
        .profile_by_id(placement.profile_id)
        .map_err(|e| mig_error(gpu_index, catalog, e))?;
    let layout = Layout::from(existing.to_vec());
    layout.check_insert(catalog, placement).map_err(|e| {
        CoreError::InsufficientResources(format!(
            "GPU {gpu_index} cannot hold {} (now {}): {e}",
            placement.describe(catalog),
            layout.describe(catalog)
        ))
    })
}

/// The placement of profile `profile_name` (e.g. `3g.40gb` or `MIG 3g.40gb`) at `start`;
/// an unknown profile or one of another GPU model is a clear [`CoreError::InvalidRequest`].
pub fn placement_by_name(
    gpu_index: u32,
    catalog: &Catalog,
    profile_name: &str,
    start: u8,
) -> Result<Placement, CoreError> {
    let profile = catalog
        .profile_by_name(profile_name)
        .map_err(|e| mig_error(gpu_index, catalog, e))?;
    Ok(Placement::new(profile.id, start))
}

/// A [`MigError`] about GPU `gpu_index` as the boundary reports it.
pub fn mig_error(gpu_index: u32, catalog: &Catalog, e: MigError) -> CoreError {
    match e {
        MigError::UnknownModel { .. }
        | MigError::UnknownProfile { .. }
        | MigError::ProfileNotOnModel { .. }
        | MigError::UnknownProfileId { .. } => {
            CoreError::InvalidRequest(format!("GPU {gpu_index} ({}): {e}", catalog.key()))
        }
        MigError::NotInLayout { .. } => CoreError::NotFound(format!("GPU {gpu_index}: {e}")),
        MigError::StartNotAllowed { .. }
        | MigError::Overlap { .. }
        | MigError::ComputeExhausted { .. }
        | MigError::MaxInstances { .. }
        | MigError::NoRoom { .. } => {
            CoreError::InsufficientResources(format!("GPU {gpu_index}: {e}"))
        }
        other => CoreError::Gpu(format!("GPU {gpu_index}: {other}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h100() -> &'static Catalog {
        Catalog::by_key("H100-80GB").unwrap()
    }

    #[test]
    fn overlaps_and_disallowed_starts_are_insufficient_resources() {
        let taken = [Placement::new(14, 0)];
        let overlap = check_create(0, h100(), &taken, Placement::new(19, 1)).unwrap_err();
        assert!(
            matches!(overlap, CoreError::InsufficientResources(_)),
            "{overlap}"
        );
        assert!(
            overlap.to_string().contains("overlaps placement 2g.20gb@0"),
            "{overlap}"
        );
        let odd = check_create(0, h100(), &[], Placement::new(9, 2)).unwrap_err();
        assert!(matches!(odd, CoreError::InsufficientResources(_)), "{odd}");
        assert!(odd.to_string().contains("allowed starts: 0,4"), "{odd}");
    }

    #[test]
    fn profiles_of_other_models_are_invalid_requests() {
        let e = placement_by_name(1, h100(), "1g.5gb", 0).unwrap_err();
        assert!(matches!(e, CoreError::InvalidRequest(_)), "{e}");
        assert!(e.to_string().contains("does not exist on H100-80GB"), "{e}");
        let e = placement_by_name(1, h100(), "9g.1tb", 0).unwrap_err();
        assert!(
            e.to_string().contains("unknown MIG profile '9g.1tb'"),
            "{e}"
        );
        let e = check_create(1, h100(), &[], Placement::new(42, 0)).unwrap_err();
        assert!(matches!(e, CoreError::InvalidRequest(_)), "{e}");
        assert!(
            e.to_string()
                .contains("no MIG profile with id 42 on H100-80GB"),
            "{e}"
        );
        assert_eq!(
            placement_by_name(1, h100(), "MIG 3g.40gb", 4).unwrap(),
            Placement::new(9, 4)
        );
    }
}
