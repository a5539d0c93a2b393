//! A GPU used whole, split into capped shares: N sessions on one GPU at once. To the
//! allocator a share is an instance of one profile that the GPU holds N of, side by side,
//! as a static layout holds its instances; what a share guarantees depends on how the
//! GPU is shared ([`Sharing`]).

use serde::{Deserialize, Serialize};

use crate::catalog::{Catalog, Profile, COMPUTE_SLICES, MEMORY_SLICES, WHOLE_PROFILE_ID};
use crate::error::MigError;

/// Fewest and most shares one GPU may be split into.
pub const MIN_SHARES: u8 = 2;
pub const MAX_SHARES: u8 = 7;

/// How the sessions on one shared GPU are kept apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Sharing {
    /// NVIDIA MPS: each session's GPU memory is capped and its compute limited to its
    /// share of the multiprocessors; a fault in one session can end the others'.
    Mps,
    /// Plain time-slicing: no cap of any kind; the admin chose it knowing that.
    TimeSliced,
}

impl Sharing {
    /// The word the configuration uses: `mps`, `time-sliced-no-isolation`.
    pub fn config_word(self) -> &'static str {
        match self {
            Sharing::Mps => "mps",
            Sharing::TimeSliced => "time-sliced-no-isolation",
        }
    }
}

/// A GPU split into `count` shares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shares {
    pub count: u8,
    pub sharing: Sharing,
}

impl Shares {
    /// Percent of the GPU's multiprocessors one share may use (MPS's active thread
    /// percentage): an equal part, rounded down.
    pub fn compute_percent(&self) -> u8 {
        100 / self.count.max(1)
    }

    /// GPU memory of one share: an equal part of the whole GPU's, rounded down to a MiB.
    pub fn memory_mib(&self, whole_mib: u64) -> u64 {
        whole_mib / u64::from(self.count.max(1))
    }

    /// What one share of `share_mib` guarantees, for the GPU page and the launch card.
    pub fn guarantees(&self, share_mib: u64) -> String {
        match self.sharing {
            Sharing::Mps => format!(
                "capped share (MPS): at most {share_mib} MiB of GPU memory and {}% of its compute; not isolated from the GPU's other sessions (one MPS server, one /dev/shm)",
                self.compute_percent()
            ),
            Sharing::TimeSliced => {
                "time-sliced share: no memory cap, no compute share, not isolated from the GPU's other sessions".to_string()
            }
        }
    }
}

/// `l4.24gb.1of4`: one of four shares of an `l4.24gb`.
pub fn share_profile_name(whole_profile: &str, count: u8) -> String {
    format!("{whole_profile}.1of{count}")
}

/// The whole GPU's profile and the number of shares of a share's profile name
/// (`l4.24gb.1of4` → `("l4.24gb", 4)`); `None` for any other name.
pub fn share_of(profile: &str) -> Option<(&str, u8)> {
    let (whole, count) = profile.rsplit_once(".1of")?;
    let count = count.parse::<u8>().ok()?;
    (!whole.is_empty() && (MIN_SHARES..=MAX_SHARES).contains(&count)).then_some((whole, count))
}

/// Memory slices one share is placed on (of 8) so that `count` fit side by side.
fn share_memory_slices(count: u8) -> u8 {
    (MEMORY_SLICES / count).max(1)
}

impl Catalog {
    /// What a session on `profile` of this GPU is guaranteed, in words.
    pub fn guarantees(&self, profile: &Profile) -> String {
        match self.shares() {
            Some(shares) => shares.guarantees(profile.memory_mib),
            None if self.is_whole() => "the whole GPU: no one else's work runs on it".to_string(),
            None => "MIG slice: its own memory and compute; a fault stays inside it".to_string(),
        }
    }

    /// This whole GPU split into `shares`: one profile of which the GPU holds
    /// `shares.count`, each at its own start. Only a whole GPU can be shared.
    pub fn shared(&self, shares: Shares) -> Result<Catalog, MigError> {
        let bad = |reason: String| MigError::InvalidCatalog { model: self.key().to_string(), reason };
        if !self.is_whole() {
            return Err(bad("only a GPU used whole (MIG off or not offered) can be split into shares".into()));
        }
        if !(MIN_SHARES..=MAX_SHARES).contains(&shares.count) {
            return Err(bad(format!("{} shares (a GPU is split into {MIN_SHARES} to {MAX_SHARES})", shares.count)));
        }
        let whole = &self.profiles()[0];
        let memory_slices = share_memory_slices(shares.count);
        let profile = Profile {
            name: share_profile_name(&whole.name, shares.count),
            id: WHOLE_PROFILE_ID,
            memory_slices,
            compute_slices: (COMPUTE_SLICES / shares.count).max(1),
            memory_mib: shares.memory_mib(whole.memory_mib),
            starts: (0..shares.count).map(|k| k * memory_slices).collect(),
            max_instances: shares.count,
            media_extensions: false,
            multiprocessors: whole
                .multiprocessors
                .map(|sms| sms * u32::from(shares.compute_percent()) / 100),
        };
        self.with_shares(profile, shares)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn l4() -> &'static Catalog {
        Catalog::whole_by_key("L4-24GB").unwrap()
    }

    #[test]
    fn a_gpu_splits_into_two_to_seven_shares_that_fit_side_by_side() {
        for count in MIN_SHARES..=MAX_SHARES {
            let shared = l4().shared(Shares { count, sharing: Sharing::Mps }).unwrap();
            let p = &shared.profiles()[0];
            assert_eq!(p.name, format!("l4.24gb.1of{count}"));
            assert_eq!(usize::from(p.max_instances), p.starts.len());
            assert_eq!(p.max_instances, count);
            assert_eq!(p.memory_mib, 23034 / u64::from(count));
            assert_eq!(shared.shares(), Some(Shares { count, sharing: Sharing::Mps }));
            assert!(shared.is_whole(), "a shared GPU still has no MIG instance to make");
            let layout = crate::Layout::from_placements(
                &shared,
                p.starts.iter().map(|&s| crate::Placement::new(WHOLE_PROFILE_ID, s)),
            );
            assert!(layout.is_ok(), "{count} shares: {layout:?}");
        }
        let four = l4().shared(Shares { count: 4, sharing: Sharing::Mps }).unwrap();
        assert_eq!(four.profiles()[0].multiprocessors, Some(58 * 25 / 100));
    }

    #[test]
    fn only_a_whole_gpu_and_two_to_seven_shares() {
        let mps = |count| Shares { count, sharing: Sharing::Mps };
        assert!(l4().shared(mps(1)).is_err());
        assert!(l4().shared(mps(8)).is_err());
        let h100 = Catalog::by_key("H100-80GB").unwrap();
        let e = h100.shared(mps(2)).unwrap_err().to_string();
        assert!(e.contains("only a GPU used whole"), "{e}");
    }

    #[test]
    fn share_names_name_their_gpu_and_count() {
        assert_eq!(share_of("l4.24gb.1of4"), Some(("l4.24gb", 4)));
        assert_eq!(share_of("h100.80gb.1of7"), Some(("h100.80gb", 7)));
        assert_eq!(share_of("l4.24gb.1of9"), None);
        assert_eq!(share_of("l4.24gb.1of"), None);
        assert_eq!(share_of(".1of2"), None);
        assert_eq!(share_of("3g.40gb"), None);
        assert_eq!(share_of("l4.24gb"), None);
    }

    #[test]
    fn guarantees_say_what_each_kind_of_share_caps() {
        let mps = Shares { count: 4, sharing: Sharing::Mps };
        assert_eq!(
            mps.guarantees(mps.memory_mib(23034)),
            "capped share (MPS): at most 5758 MiB of GPU memory and 25% of its compute; not isolated from the GPU's other sessions (one MPS server, one /dev/shm)"
        );
        let sliced = Shares { count: 2, sharing: Sharing::TimeSliced };
        assert!(sliced.guarantees(23034).starts_with("time-sliced share: no memory cap"));
    }
}
