//! H100 80GB (SXM5 HBM3, PCIe; mig-parted treats H800-80GB the same).
//! Ground truth: `nvidia-smi mig -lgip/-lgipp` and NVML on a real H100 80GB HBM3,
//! driver 580 (BUILD-NOTES "GPUs"). Matches the MIG User Guide "H100 MIG Profiles" table.

use super::profile;
use crate::catalog::Catalog;
use crate::error::MigError;

pub(crate) fn catalog() -> Result<Catalog, MigError> {
    Catalog::new(
        "H100-80GB",
        "H100",
        80,
        "NVIDIA H100 80GB (SXM5 HBM3, PCIe)",
        vec![
            profile("1g.10gb", 19, 1, 1, 9984, &[0, 1, 2, 3, 4, 5, 6], 7, false),
            profile(
                "1g.10gb+me",
                20,
                1,
                1,
                9984,
                &[0, 1, 2, 3, 4, 5, 6],
                1,
                true,
            ),
            profile("1g.20gb", 15, 2, 1, 20096, &[0, 2, 4, 6], 4, false),
            profile("2g.20gb", 14, 2, 2, 20096, &[0, 2, 4], 3, false),
            profile("3g.40gb", 9, 4, 3, 40448, &[0, 4], 2, false),
            profile("4g.40gb", 5, 4, 4, 40448, &[0], 1, false),
            profile("7g.80gb", 0, 8, 7, 81152, &[0], 1, false),
        ],
    )
}
