//! H100 94GB (H100 NVL, H100 SXM5 94GB).
//! Geometry: MIG User Guide "H100 MIG Profiles" (94GB names) and mig-parted's H100 NVL
//! configs; `-lgipp` on an H100 NVL shows the same placements as H100-80GB.
//! Memory: `nvidia-smi` on an H100 NVL, driver 560 (11008 / 22144 / 47488 MiB instances,
//! 7g.94gb listed as 93.12 GiB).

use super::profile;
use crate::catalog::Catalog;
use crate::error::MigError;

pub(crate) fn catalog() -> Result<Catalog, MigError> {
    Catalog::new(
        "H100-94GB",
        "H100",
        94,
        "NVIDIA H100 94GB (NVL, SXM5 94GB)",
        vec![
            profile("1g.12gb", 19, 1, 1, 11008, &[0, 1, 2, 3, 4, 5, 6], 7, false),
            profile(
                "1g.12gb+me",
                20,
                1,
                1,
                11008,
                &[0, 1, 2, 3, 4, 5, 6],
                1,
                true,
            ),
            profile("1g.24gb", 15, 2, 1, 22144, &[0, 2, 4, 6], 4, false),
            profile("2g.24gb", 14, 2, 2, 22144, &[0, 2, 4], 3, false),
            profile("3g.47gb", 9, 4, 3, 47488, &[0, 4], 2, false),
            profile("4g.47gb", 5, 4, 4, 47488, &[0], 1, false),
            profile("7g.94gb", 0, 8, 7, 95360, &[0], 1, false),
        ],
    )
}
