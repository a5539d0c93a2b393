//! H200 141GB (SXM5, NVL).
//! Geometry: MIG User Guide "H200 MIG Profiles" table (ids and placements as on H100).
//! Memory: 1g (16.00 GiB), 2-slice (32.50 GiB) and 7g (140.00 GiB) from a published
//! `nvidia-smi mig -lgip` of an H200; the 3g/4g.71gb value is estimated from the H100
//! ratio (half of 7g minus overhead) and is not confirmed on hardware.

use super::profile;
use crate::catalog::Catalog;
use crate::error::MigError;

pub(crate) fn catalog() -> Result<Catalog, MigError> {
    Catalog::new(
        "H200-141GB",
        "H200",
        141,
        "NVIDIA H200 141GB (SXM5, NVL)",
        vec![
            profile("1g.18gb", 19, 1, 1, 16384, &[0, 1, 2, 3, 4, 5, 6], 7, false),
            profile(
                "1g.18gb+me",
                20,
                1,
                1,
                16384,
                &[0, 1, 2, 3, 4, 5, 6],
                1,
                true,
            ),
            profile("1g.35gb", 15, 2, 1, 33280, &[0, 2, 4, 6], 4, false),
            profile("2g.35gb", 14, 2, 2, 33280, &[0, 2, 4], 3, false),
            profile("3g.71gb", 9, 4, 3, 71424, &[0, 4], 2, false),
            profile("4g.71gb", 5, 4, 4, 71424, &[0], 1, false),
            profile("7g.141gb", 0, 8, 7, 143360, &[0], 1, false),
        ],
    )
}
