//! Classroom traces for the mixed fleet (issue #28): the lab's arrivals and session
//! lengths (`trace::classroom`), each request asking for a MIG slice, a whole GPU or a
//! share in the proportions of [`MIX`].

use slicehub_core::quotas::milli_slices;

use crate::rng::Rng;
use crate::simulate::Claim;
use crate::trace::{classroom, Mix, Spec};

/// Percent of requests per profile. Half the class works in notebooks on MIG slices, most
/// of them small; a quarter takes a share of the L4 (small models, inference); the rest
/// need a whole card: an L40S (graphics, mid-sized training) or an H100 (80 GB projects).
pub const MIX: [(&str, u32); 8] = [
    ("1g.10gb", 25),
    ("2g.20gb", 12),
    ("3g.40gb", 8),
    ("4g.40gb", 3),
    ("7g.80gb", 2),
    ("l4.24gb.1of4", 25),
    ("l40s.48gb", 15),
    ("h100.80gb", 10),
];

/// The labs both benches run: the 40-student, 3-hour lab of the single-model rows, and the
/// same lab with half the students.
pub fn labs() -> [(&'static str, Spec); 2] {
    let lab = Spec::lab(Mix::Mixed);
    [("lab 40 st, 3 h", lab), ("lab 20 st, 3 h", Spec { students: 20, ..lab })]
}

/// The mix in words, for the bench's header.
pub fn describe_mix() -> String {
    MIX.iter()
        .map(|(p, pct)| format!("{pct}% {p}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The lab `spec` (its `mix` is ignored) for `seed`: arrivals and lengths as in
/// `classroom`, profiles drawn from [`MIX`] by a second splitmix64 stream of the same
/// seed. Each claim counts its weight (`core/src/quotas/weights.rs`: a MIG slice its
/// `Ng`, a whole GPU 7, one of N shares 7/N).
pub fn mixed_lab(spec: Spec, seed: u64) -> Vec<Claim<'static>> {
    let times = classroom(Spec { mix: Mix::All1g, ..spec }, seed);
    let mut rng = Rng::new(seed ^ 0x2828_2828_2828_2828);
    times
        .into_iter()
        .map(|r| {
            let profile = pick(&mut rng);
            Claim {
                arrival: r.arrival,
                departure: r.departure,
                profile,
                milli_slices: milli_slices(profile).max(0) as u64,
            }
        })
        .collect()
}

fn pick(rng: &mut Rng) -> &'static str {
    let mut x = rng.between(0, 99);
    for (profile, pct) in MIX {
        if x < pct {
            return profile;
        }
        x -= pct;
    }
    MIX[0].0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mixed_fleet::MixedFleet;
    use slicehub_mig::allocate;

    #[test]
    fn the_mix_adds_up_and_every_profile_has_a_gpu_in_the_fleet() {
        assert_eq!(MIX.iter().map(|(_, p)| p).sum::<u32>(), 100);
        let fleet = MixedFleet::issue_28().unwrap();
        let gpus = fleet.gpus(crate::mixed_fleet::MigGpu::Dynamic);
        for (profile, _) in MIX {
            assert!(allocate(&gpus, profile).is_ok(), "{profile}");
        }
    }

    #[test]
    fn claims_count_their_weight_and_follow_the_mix() {
        let claims: Vec<Claim<'static>> =
            (1..=20).flat_map(|s| mixed_lab(Spec::lab(Mix::Mixed), s)).collect();
        let weight = |p: &str| claims.iter().find(|c| c.profile == p).map(|c| c.milli_slices);
        assert_eq!(weight("3g.40gb"), Some(3000));
        assert_eq!(weight("l40s.48gb"), Some(7000));
        assert_eq!(weight("l4.24gb.1of4"), Some(1750));
        let share = |p: &str| claims.iter().filter(|c| c.profile == p).count() as f64 / claims.len() as f64;
        assert!((share("1g.10gb") - 0.25).abs() < 0.05, "{}", share("1g.10gb"));
        assert!((share("l4.24gb.1of4") - 0.25).abs() < 0.05);
        assert_eq!(mixed_lab(Spec::lab(Mix::Mixed), 3), mixed_lab(Spec::lab(Mix::All1g), 3));
    }
}
