//! B200 180GB.
//! Geometry: MIG User Guide "B200 MIG Profiles" table (memory fractions 1/8, 2/8, 4/8, full;
//! ids and placements as on H100, also seen in a B200 placement capture).
//! Memory: from a published capture of B200 MIG placements (20992 / 45312 / 91136 /
//! 182784 MiB); not confirmed on hardware here.

use super::profile;
use crate::catalog::Catalog;
use crate::error::MigError;

pub(crate) fn catalog() -> Result<Catalog, MigError> {
    Catalog::new(
        "B200-180GB",
        "B200",
        180,
        "NVIDIA B200 180GB",
        vec![
            profile("1g.23gb", 19, 1, 1, 20992, &[0, 1, 2, 3, 4, 5, 6], 7, false),
            profile(
                "1g.23gb+me",
                20,
                1,
                1,
                20992,
                &[0, 1, 2, 3, 4, 5, 6],
                1,
                true,
            ),
            profile("1g.45gb", 15, 2, 1, 45312, &[0, 2, 4, 6], 4, false),
            profile("2g.45gb", 14, 2, 2, 45312, &[0, 2, 4], 3, false),
            profile("3g.90gb", 9, 4, 3, 91136, &[0, 4], 2, false),
            profile("4g.90gb", 5, 4, 4, 91136, &[0], 1, false),
            profile("7g.180gb", 0, 8, 7, 182784, &[0], 1, false),
        ],
    )
}
