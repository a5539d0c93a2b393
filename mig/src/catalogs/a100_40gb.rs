//! A100 40GB (SXM4 and PCIe; mig-parted treats A800-40GB the same).
//! Geometry: MIG User Guide, "A100 MIG Profiles" table and its `-lgipp` example.
//! Memory: the guide's `nvidia-smi mig -lgip` example (4.75 / 9.62 / 19.50 / 39.25 GiB);
//! newer drivers report slightly more (e.g. 20096 MiB for 3g.20gb).

use super::profile;
use crate::catalog::Catalog;
use crate::error::MigError;

pub(crate) fn catalog() -> Result<Catalog, MigError> {
    Catalog::new(
        "A100-40GB",
        "A100",
        40,
        "NVIDIA A100 40GB (SXM4, PCIe)",
        vec![
            profile("1g.5gb", 19, 1, 1, 4864, &[0, 1, 2, 3, 4, 5, 6], 7, false),
            profile("1g.5gb+me", 20, 1, 1, 4864, &[0, 1, 2, 3, 4, 5, 6], 1, true),
            profile("1g.10gb", 15, 2, 1, 9856, &[0, 2, 4, 6], 4, false),
            profile("2g.10gb", 14, 2, 2, 9856, &[0, 2, 4], 3, false),
            profile("3g.20gb", 9, 4, 3, 19968, &[0, 4], 2, false),
            profile("4g.20gb", 5, 4, 4, 19968, &[0], 1, false),
            profile("7g.40gb", 0, 8, 7, 40192, &[0], 1, false),
        ],
    )
}
