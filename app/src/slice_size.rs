//! What a profile name says about its size: `3g.40gb` is a MIG slice of 3 compute slices,
//! `l40s.48gb` a whole GPU, `l4.24gb.1of4` one of four shares of one. What a whole GPU or
//! a share counts is the server's to say (an admin weighs each model).

/// A GPU has seven compute slices.
pub const GPU_SLICES: u32 = 7;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SliceSize {
    Mig(u32),
    Whole,
    /// One of this many shares of a GPU.
    Share(u32),
}

/// `None` for a name of neither form (`whole-gpu`, `9g.90gb`).
pub fn slice_size(profile: &str) -> Option<SliceSize> {
    if let Some((whole, count)) = profile.rsplit_once(".1of") {
        let count = count.parse::<u32>().ok().filter(|n| (2..=GPU_SLICES).contains(n))?;
        return matches!(slice_size(whole)?, SliceSize::Whole).then_some(SliceSize::Share(count));
    }
    let (head, rest) = match profile.split_once('.') {
        Some((head, rest)) => (head, Some(rest)),
        None => (profile, None),
    };
    match head.strip_suffix('g').map(str::parse::<u32>) {
        Some(Ok(n)) => (1..=GPU_SLICES).contains(&n).then_some(SliceSize::Mig(n)),
        _ => rest.is_some_and(|r| r.ends_with("gb")).then_some(SliceSize::Whole),
    }
}


#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_say_mig_slices_whole_gpus_and_shares() {
        assert_eq!(slice_size("3g.40gb"), Some(SliceSize::Mig(3)));
        assert_eq!(slice_size("1g.10gb+me"), Some(SliceSize::Mig(1)));
        assert_eq!(slice_size("l40s.48gb"), Some(SliceSize::Whole));
        assert_eq!(slice_size("rtx6000ada.48gb"), Some(SliceSize::Whole));
        assert_eq!(slice_size("9g.90gb"), None);
        assert_eq!(slice_size("whole-gpu"), None);
        assert_eq!(slice_size("l4.24gb.1of4"), Some(SliceSize::Share(4)));
        assert_eq!(slice_size("l4.24gb.1of9"), None);
        assert_eq!(slice_size("3g.40gb.1of2"), None, "only a whole GPU is shared");
    }
}
