//! `gpu.shares` (which GPUs are split into shares, and how) and `gpu.weights` (how many
//! compute slices a whole GPU of a model counts as).

use slicehub_mig::{mig_compute_slices, Shares, Sharing, COMPUTE_SLICES, MAX_SHARES, MIN_SHARES};

/// One GPU split into shares: `gpu` is its index (`1`) or UUID (`GPU-…`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuShares {
    pub gpu: String,
    pub shares: Shares,
}

/// A whole GPU's profile (`l40s.48gb`) and the compute slices an hour of it counts as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelWeight {
    pub profile: String,
    pub compute_slices: u32,
}

/// `1 = 4 mps, GPU-8f3… = 2 time-sliced-no-isolation`.
pub fn parse_shares(text: &str) -> Result<Vec<GpuShares>, ()> {
    let mut out: Vec<GpuShares> = Vec::new();
    for entry in text.split(',').map(str::trim).filter(|e| !e.is_empty()) {
        let (gpu, rest) = entry.split_once('=').ok_or(())?;
        let gpu = gpu.trim();
        let numbered = !gpu.is_empty() && gpu.bytes().all(|b| b.is_ascii_digit());
        let uuid = gpu.starts_with("GPU-") && gpu.len() > 4 && gpu.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
        if !(numbered || uuid) || out.iter().any(|s| s.gpu == gpu) {
            return Err(());
        }
        let mut words = rest.split_whitespace();
        let count = words.next().and_then(|n| n.parse::<u8>().ok()).ok_or(())?;
        if !(MIN_SHARES..=MAX_SHARES).contains(&count) {
            return Err(());
        }
        let sharing = match words.next() {
            Some(w) if w.eq_ignore_ascii_case(Sharing::Mps.config_word()) => Sharing::Mps,
            Some(w) if w.eq_ignore_ascii_case(Sharing::TimeSliced.config_word()) => Sharing::TimeSliced,
            _ => return Err(()),
        };
        if words.next().is_some() {
            return Err(());
        }
        out.push(GpuShares { gpu: gpu.to_string(), shares: Shares { count, sharing } });
    }
    Ok(out)
}

/// `l40s.48gb = 4, t4.16gb = 1`: whole-GPU profiles, each at most once, 1 to 7 slices.
pub fn parse_weights(text: &str) -> Result<Vec<ModelWeight>, ()> {
    let mut out: Vec<ModelWeight> = Vec::new();
    for entry in text.split(',').map(str::trim).filter(|e| !e.is_empty()) {
        let (profile, slices) = entry.split_once('=').ok_or(())?;
        let profile = profile.trim().to_ascii_lowercase();
        let named_like_whole = profile
            .split_once('.')
            .is_some_and(|(family, gb)| {
                !family.is_empty()
                    && family.bytes().all(|b| b.is_ascii_alphanumeric())
                    && gb.strip_suffix("gb").is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
            });
        let is_mig = mig_compute_slices(&profile).is_some();
        if !named_like_whole || is_mig || out.iter().any(|w| w.profile == profile) {
            return Err(());
        }
        let compute_slices = slices.trim().parse::<u32>().map_err(|_| ())?;
        if !(1..=u32::from(COMPUTE_SLICES)).contains(&compute_slices) {
            return Err(());
        }
        out.push(ModelWeight { profile, compute_slices });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_are_read_by_index_or_uuid_with_their_kind() {
        let s = parse_shares("1 = 4 mps, GPU-8f3a-01 = 2 time-sliced-no-isolation").unwrap();
        assert_eq!(s[0], GpuShares { gpu: "1".into(), shares: Shares { count: 4, sharing: Sharing::Mps } });
        assert_eq!(s[1].gpu, "GPU-8f3a-01");
        assert_eq!(s[1].shares.sharing, Sharing::TimeSliced);
        assert_eq!(parse_shares("").unwrap(), vec![]);
    }

    #[test]
    fn time_slicing_must_be_named_for_what_it_lacks() {
        assert!(parse_shares("1 = 2 time-sliced").is_err());
        assert!(parse_shares("1 = 2").is_err());
        assert!(parse_shares("1 = 8 mps").is_err());
        assert!(parse_shares("1 = 1 mps").is_err());
        assert!(parse_shares("1 = 2 mps, 1 = 3 mps").is_err(), "one GPU once");
        assert!(parse_shares("gpu0 = 2 mps").is_err());
        assert!(parse_shares("1 = 2 mps extra").is_err());
    }

    #[test]
    fn weights_name_whole_gpus_and_stay_within_a_gpu() {
        let w = parse_weights("L40S.48gb = 4, t4.16gb=1").unwrap();
        assert_eq!(w[0], ModelWeight { profile: "l40s.48gb".into(), compute_slices: 4 });
        assert_eq!(w[1].compute_slices, 1);
        assert!(parse_weights("3g.40gb = 2").is_err(), "a MIG slice counts its own compute slices");
        assert!(parse_weights("l4.24gb = 8").is_err());
        assert!(parse_weights("l4.24gb = 0").is_err());
        assert!(parse_weights("l4.24gb = 1.5").is_err());
        assert!(parse_weights("l4 = 2").is_err());
        assert!(parse_weights("l4.24gb = 2, L4.24GB = 3").is_err());
    }
}
