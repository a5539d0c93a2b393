//! What an hour of each slice size counts in compute-slice-hours: a MIG slice its `Ng`, a
//! whole GPU the weight an admin gave its model (`gpu.weights`, 7 when not given), one of
//! N shares of a GPU 1/N of that GPU's weight. Counted in thousandths of a compute slice,
//! so a quarter of a GPU of weight 7 is exact.

use std::collections::BTreeMap;
use std::sync::{LazyLock, RwLock};

use slicehub_mig::{mig_compute_slices, share_of, COMPUTE_SLICES};

use crate::config::ModelWeight;

/// Thousandths of a compute slice in one.
pub const MILLI: i64 = 1000;

/// Whole-GPU weights by profile name; models not listed count 7.
#[derive(Debug, Clone, Default)]
pub struct Weights {
    whole: BTreeMap<String, i64>,
}

impl Weights {
    pub fn new(weights: &[ModelWeight]) -> Weights {
        Weights { whole: weights.iter().map(|w| (w.profile.to_ascii_lowercase(), i64::from(w.compute_slices))).collect() }
    }

    fn whole_weight(&self, profile: &str) -> i64 {
        self.whole.get(&profile.to_ascii_lowercase()).copied().unwrap_or(i64::from(COMPUTE_SLICES))
    }

    /// Thousandths of a compute slice an hour of `profile` counts: `3g.40gb` → 3000,
    /// `l40s.48gb` → its weight × 1000, `l4.24gb.1of4` → the L4's weight × 1000 / 4.
    pub fn milli_slices(&self, profile: &str) -> i64 {
        if let Some(n) = mig_compute_slices(profile).filter(|n| (1..=u32::from(COMPUTE_SLICES)).contains(n)) {
            return i64::from(n) * MILLI;
        }
        match share_of(profile) {
            Some((whole, count)) => self.whole_weight(whole) * MILLI / i64::from(count),
            None => self.whole_weight(profile) * MILLI,
        }
    }
}

static WEIGHTS: LazyLock<RwLock<Weights>> = LazyLock::new(|| RwLock::new(Weights::default()));

/// Sets the weights this process counts with (from `gpu.weights`), once at start.
pub fn install(weights: &[ModelWeight]) {
    if let Ok(mut held) = WEIGHTS.write() {
        *held = Weights::new(weights);
    }
}

/// [`Weights::milli_slices`] with the weights this process counts with.
pub fn milli_slices(profile: &str) -> i64 {
    match WEIGHTS.read() {
        Ok(weights) => weights.milli_slices(profile),
        Err(_) => Weights::default().milli_slices(profile),
    }
}

/// Compute slices of a profile for limits and caps: its weight, a part rounded up (a
/// quarter of a GPU of weight 7, 1.75, counts 2 against "at most 2 slices").
pub fn compute_slices(profile: &str) -> i64 {
    (milli_slices(profile) + MILLI - 1) / MILLI
}

/// Compute-slice-milliseconds `ms` of `profile` charge.
pub fn slice_ms(profile: &str, ms: i64) -> i64 {
    charge(ms, milli_slices(profile))
}

/// Compute-slice-milliseconds `ms` at `milli` thousandths of a slice charge.
pub fn charge(ms: i64, milli: i64) -> i64 {
    let charged = i128::from(ms) * i128::from(milli) / i128::from(MILLI);
    charged.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
}

/// "7", "1.75": the slice-hours an hour of `profile` uses, as people read it.
pub fn per_hour_text(profile: &str) -> String {
    per_milli_text(milli_slices(profile))
}

/// "7", "1.75", "2.333": thousandths of a slice as people read them.
pub fn per_milli_text(milli: i64) -> String {
    let text = format!("{}.{:03}", milli / MILLI, milli % MILLI);
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mig_slices_count_their_compute_and_gpus_their_weight() {
        let default = Weights::default();
        assert_eq!(default.milli_slices("3g.40gb"), 3000);
        assert_eq!(default.milli_slices("1g.10gb+me"), 1000);
        assert_eq!(default.milli_slices("l40s.48gb"), 7000);
        assert_eq!(default.milli_slices("l4.24gb.1of4"), 1750);
        assert_eq!(compute_slices("l4.24gb.1of4"), 2);
        assert_eq!(per_hour_text("l4.24gb.1of4"), "1.75");
        assert_eq!(per_hour_text("h100.80gb.1of3"), "2.333");
        assert_eq!(slice_ms("l4.24gb.1of4", 3_600_000), 6_300_000);

        let set = Weights::new(&[
            ModelWeight { profile: "L40S.48gb".into(), compute_slices: 4 },
            ModelWeight { profile: "l4.24gb".into(), compute_slices: 2 },
        ]);
        assert_eq!(set.milli_slices("l40s.48gb"), 4000);
        assert_eq!(set.milli_slices("l4.24gb.1of4"), 500);
        assert_eq!(set.milli_slices("3g.40gb"), 3000, "a weight never changes a MIG slice");
        assert_eq!(set.milli_slices("t4.16gb"), 7000, "models not listed count 7");
        assert_eq!(charge(i64::MAX, 4000), i64::MAX, "no overflow past the largest count");
        assert_eq!(charge(3_600_000, 500), 1_800_000);
    }
}
