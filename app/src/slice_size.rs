//! What a profile name says about its size: `3g.40gb` is a MIG slice of 3 compute slices,
//! `l40s.48gb` a whole GPU (which counts all 7, as the quotas count it).

/// A GPU has seven compute slices.
pub const GPU_SLICES: u32 = 7;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SliceSize {
    Mig(u32),
    Whole,
}

/// `None` for a name of neither form (`whole-gpu`, `9g.90gb`).
pub fn slice_size(profile: &str) -> Option<SliceSize> {
    let (head, rest) = match profile.split_once('.') {
        Some((head, rest)) => (head, Some(rest)),
        None => (profile, None),
    };
    match head.strip_suffix('g').map(str::parse::<u32>) {
        Some(Ok(n)) => (1..=GPU_SLICES).contains(&n).then_some(SliceSize::Mig(n)),
        _ => rest.is_some_and(|r| r.ends_with("gb")).then_some(SliceSize::Whole),
    }
}

/// Compute slices of a profile: also the slice-hours it uses per hour.
pub fn compute_slices(profile: &str) -> Option<u32> {
    slice_size(profile).map(|size| match size {
        SliceSize::Mig(n) => n,
        SliceSize::Whole => GPU_SLICES,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mig_names_count_their_compute_slices_and_whole_gpus_all_seven() {
        assert_eq!(compute_slices("3g.40gb"), Some(3));
        assert_eq!(compute_slices("1g.10gb+me"), Some(1));
        assert_eq!(compute_slices("l40s.48gb"), Some(7));
        assert_eq!(compute_slices("rtx6000ada.48gb"), Some(7));
        assert_eq!(compute_slices("9g.90gb"), None);
        assert_eq!(compute_slices("whole-gpu"), None);
    }
}
