//! A100 80GB (SXM4 and PCIe; mig-parted treats A800-80GB the same).
//! Geometry: MIG User Guide, "A100 MIG Profiles" (profile names scaled for 80GB).
//! Memory: widely published `nvidia-smi mig -lgip` output of A100-80GB
//! (9.50 / 19.50 / 39.25 / 79.25 GiB); newer drivers report slightly different values.

use super::profile;
use crate::catalog::Catalog;
use crate::error::MigError;

pub(crate) fn catalog() -> Result<Catalog, MigError> {
    Catalog::new(
        "A100-80GB",
        "A100",
        80,
        "NVIDIA A100 80GB (SXM4, PCIe)",
        vec![
            profile("1g.10gb", 19, 1, 1, 9728, &[0, 1, 2, 3, 4, 5, 6], 7, false),
            profile(
                "1g.10gb+me",
                20,
                1,
                1,
                9728,
                &[0, 1, 2, 3, 4, 5, 6],
                1,
                true,
            ),
            profile("1g.20gb", 15, 2, 1, 19968, &[0, 2, 4, 6], 4, false),
            profile("2g.20gb", 14, 2, 2, 19968, &[0, 2, 4], 3, false),
            profile("3g.40gb", 9, 4, 3, 40192, &[0, 4], 2, false),
            profile("4g.40gb", 5, 4, 4, 40192, &[0], 1, false),
            profile("7g.80gb", 0, 8, 7, 81152, &[0], 1, false),
        ],
    )
}
