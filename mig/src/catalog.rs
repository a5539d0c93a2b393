use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

use crate::catalogs;
use crate::error::MigError;
use crate::shares::Shares;
use crate::static_layouts::{self, StaticLayout};

/// Memory slices of every MIG-capable GPU this crate models (A100, H100, H200, B200).
pub const MEMORY_SLICES: u8 = 8;
/// Compute (SM) slices of every MIG-capable GPU this crate models.
pub const COMPUTE_SLICES: u8 = 7;
/// Upper bound on profiles per catalog; lets per-profile counters live on the stack.
pub const MAX_PROFILES: usize = 16;

/// One GPU-instance profile as NVML reports it (`nvidia-smi mig -lgip` / `-lgipp`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Profile {
    /// Short name without the "MIG " prefix, e.g. `1g.10gb` or `1g.10gb+me`.
    pub name: String,
    /// NVML GPU-instance profile id (the "ID" column of `nvidia-smi mig -lgip`).
    pub id: u32,
    /// Memory slices occupied (the placement size, out of 8).
    pub memory_slices: u8,
    /// Compute slices used (out of 7).
    pub compute_slices: u8,
    /// Memory of one instance in MiB.
    pub memory_mib: u64,
    /// Memory slices where an instance may start, ascending.
    pub starts: Vec<u8>,
    /// Most instances of this profile one GPU can hold.
    pub max_instances: u8,
    /// The `+me` variant: the instance also gets the media engines.
    pub media_extensions: bool,
    /// Streaming multiprocessors of one instance, where known (whole GPUs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub multiprocessors: Option<u32>,
}

impl Profile {
    /// Bit `i` set = memory slice `i` used by an instance of this profile at `start`.
    /// `None` when the placement would run past the last memory slice.
    pub fn mask_at(&self, start: u8) -> Option<u8> {
        let end = u16::from(start) + u16::from(self.memory_slices);
        if self.memory_slices == 0 || end > u16::from(MEMORY_SLICES) {
            return None;
        }
        let bits = (1u16 << self.memory_slices) - 1;
        Some((bits << start) as u8)
    }

    pub fn allows_start(&self, start: u8) -> bool {
        self.starts.contains(&start)
    }

    /// "0,2,4" — the allowed starts as nvidia-smi prints them.
    pub fn starts_text(&self) -> String {
        self.starts
            .iter()
            .map(u8::to_string)
            .collect::<Vec<_>>()
            .join(",")
    }

    /// Memory slices × compute slices: how much of the GPU one instance takes.
    pub fn area(&self) -> u32 {
        u32::from(self.memory_slices) * u32::from(self.compute_slices)
    }
}

/// The MIG profiles one GPU model offers. Built through [`Catalog::new`] (or deserialized),
/// which checks the invariants every other part of the crate relies on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "CatalogData")]
pub struct Catalog {
    key: String,
    family: String,
    memory_gb: u32,
    model: String,
    profiles: Vec<Profile>,
    /// One profile that is the whole GPU (no MIG): a GPU without MIG, or with MIG off.
    whole: bool,
    /// Set when the whole GPU is split into shares: its one profile is a share.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    shares: Option<Shares>,
}

/// The profile id of a whole GPU, apart from every MIG profile id NVML gives.
pub const WHOLE_PROFILE_ID: u32 = 1000;

/// Unchecked form of a [`Catalog`], as it appears in JSON/TOML.
#[derive(Debug, Clone, Deserialize)]
pub struct CatalogData {
    pub key: String,
    pub family: String,
    pub memory_gb: u32,
    pub model: String,
    pub profiles: Vec<Profile>,
    #[serde(default)]
    pub whole: bool,
    #[serde(default)]
    pub shares: Option<Shares>,
}

impl TryFrom<CatalogData> for Catalog {
    type Error = MigError;

    fn try_from(data: CatalogData) -> Result<Self, MigError> {
        let catalog = Catalog {
            key: data.key,
            family: data.family,
            memory_gb: data.memory_gb,
            model: data.model,
            profiles: data.profiles,
            whole: data.whole,
            shares: data.shares,
        };
        catalog.check()?;
        Ok(catalog)
    }
}

impl Catalog {
    /// Checks the catalog invariants: ids and names unique, every placement inside the
    /// 8 memory slices, compute within 7, max instances achievable by the starts.
    pub fn new(
        key: impl Into<String>,
        family: impl Into<String>,
        memory_gb: u32,
        model: impl Into<String>,
        profiles: Vec<Profile>,
    ) -> Result<Catalog, MigError> {
        let catalog = Catalog {
            key: key.into(),
            family: family.into(),
            memory_gb,
            model: model.into(),
            profiles,
            whole: false,
            shares: None,
        };
        catalog.check()?;
        Ok(catalog)
    }

    /// A GPU used whole: one profile, named like `l40s.48gb`, holding all 8 memory slices
    /// and all 7 compute slices at start 0, one instance at most. To the allocator, the
    /// queue and the slice holds it is a static GPU with that one instance.
    pub fn whole_gpu(
        key: impl Into<String>,
        family: impl Into<String>,
        memory_gb: u32,
        model: impl Into<String>,
        memory_mib: u64,
        multiprocessors: Option<u32>,
    ) -> Result<Catalog, MigError> {
        let family = family.into();
        let profile = Profile {
            name: whole_profile_name(&family, memory_gb),
            id: WHOLE_PROFILE_ID,
            memory_slices: MEMORY_SLICES,
            compute_slices: COMPUTE_SLICES,
            memory_mib,
            starts: vec![0],
            max_instances: 1,
            media_extensions: false,
            multiprocessors,
        };
        let catalog = Catalog {
            key: key.into(),
            family,
            memory_gb,
            model: model.into(),
            profiles: vec![profile],
            whole: true,
            shares: None,
        };
        catalog.check()?;
        Ok(catalog)
    }

    /// This whole GPU with its one profile replaced by `share` (see [`Catalog::shared`]).
    pub(crate) fn with_shares(&self, share: Profile, shares: Shares) -> Result<Catalog, MigError> {
        let catalog = Catalog { profiles: vec![share], shares: Some(shares), ..self.clone() };
        catalog.check()?;
        Ok(catalog)
    }

    /// Whether this GPU is used whole (see [`Catalog::whole_gpu`]), alone or in shares.
    pub fn is_whole(&self) -> bool {
        self.whole
    }

    /// How the GPU is split into shares, when it is (see [`Catalog::shared`]).
    pub fn shares(&self) -> Option<Shares> {
        self.shares
    }

    fn check(&self) -> Result<(), MigError> {
        let bad = |reason: String| MigError::InvalidCatalog {
            model: self.key.clone(),
            reason,
        };
        if self.key.trim().is_empty() {
            return Err(bad("empty key".into()));
        }
        if self.whole && (self.profiles.len() != 1 || self.profiles[0].id != WHOLE_PROFILE_ID) {
            return Err(bad("a whole GPU has exactly one profile, the whole GPU".into()));
        }
        if self.profiles.is_empty() || self.profiles.len() > MAX_PROFILES {
            return Err(bad(format!(
                "{} profiles (need 1 to {MAX_PROFILES})",
                self.profiles.len()
            )));
        }
        for (i, p) in self.profiles.iter().enumerate() {
            if p.name.trim().is_empty() {
                return Err(bad(format!("profile id {} has no name", p.id)));
            }
            if let Some(q) = self.profiles[..i].iter().find(|q| q.id == p.id) {
                return Err(bad(format!("{} and {} share id {}", q.name, p.name, p.id)));
            }
            if self.profiles[..i]
                .iter()
                .any(|q| q.name.eq_ignore_ascii_case(&p.name))
            {
                return Err(bad(format!("profile name {} appears twice", p.name)));
            }
            if !(1..=MEMORY_SLICES).contains(&p.memory_slices) {
                return Err(bad(format!(
                    "{}: {} memory slices",
                    p.name, p.memory_slices
                )));
            }
            if !(1..=COMPUTE_SLICES).contains(&p.compute_slices) {
                return Err(bad(format!(
                    "{}: {} compute slices",
                    p.name, p.compute_slices
                )));
            }
            if p.starts.is_empty() {
                return Err(bad(format!("{}: no allowed starts", p.name)));
            }
            if p.starts.windows(2).any(|w| w[0] >= w[1]) {
                return Err(bad(format!("{}: starts not strictly ascending", p.name)));
            }
            if let Some(s) = p.starts.iter().find(|&&s| p.mask_at(s).is_none()) {
                return Err(bad(format!(
                    "{}: start {s} + size {} exceeds {MEMORY_SLICES} memory slices",
                    p.name, p.memory_slices
                )));
            }
            let disjoint = disjoint_starts(p);
            let by_compute = COMPUTE_SLICES / p.compute_slices;
            if p.max_instances == 0 || p.max_instances > disjoint || p.max_instances > by_compute {
                return Err(bad(format!(
                    "{}: max {} instances, but starts allow {disjoint} and compute allows {by_compute}",
                    p.name, p.max_instances
                )));
            }
        }
        Ok(())
    }

    /// Short key, e.g. `H100-80GB`.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// GPU family, e.g. `H100`.
    pub fn family(&self) -> &str {
        &self.family
    }

    /// Nominal memory in GB, e.g. 80.
    pub fn memory_gb(&self) -> u32 {
        self.memory_gb
    }

    /// Human description of the products this catalog covers.
    pub fn model(&self) -> &str {
        &self.model
    }

    pub fn profiles(&self) -> &[Profile] {
        &self.profiles
    }

    /// The built-in catalogs: A100-40GB, A100-80GB, H100-80GB, H100-94GB, H200-141GB, B200-180GB.
    pub fn builtin() -> &'static [Catalog] {
        static BUILTIN: OnceLock<Vec<Catalog>> = OnceLock::new();
        BUILTIN.get_or_init(catalogs::all)
    }

    /// The built-in whole-GPU catalogs: GPUs without MIG (L40S, L4, A10, A40, RTX 4090,
    /// RTX 6000 Ada, T4, V100) and the MIG-capable ones with MIG off.
    pub fn builtin_whole() -> &'static [Catalog] {
        static WHOLE: OnceLock<Vec<Catalog>> = OnceLock::new();
        WHOLE.get_or_init(catalogs::whole::all)
    }

    /// A built-in whole-GPU catalog by short key (`"L40S-48GB"`, `"H100-80GB"`).
    pub fn whole_by_key(key: &str) -> Result<&'static Catalog, MigError> {
        let wanted = normalize_key(key);
        Catalog::builtin_whole()
            .iter()
            .find(|c| normalize_key(&c.key) == wanted)
            .ok_or_else(|| unknown_whole_model(key))
    }

    /// The built-in whole-GPU catalog for an NVML product name ("NVIDIA L40S",
    /// "Tesla V100-SXM2-32GB", "NVIDIA H100 80GB HBM3") or a key.
    pub fn whole_for_model(name: &str) -> Result<&'static Catalog, MigError> {
        let (family, memory_gb) = catalogs::whole::identify(name)
            .or_else(|| catalogs::identify(name))
            .ok_or_else(|| unknown_whole_model(name))?;
        Catalog::builtin_whole()
            .iter()
            .find(|c| c.family == family && c.memory_gb == memory_gb)
            .ok_or_else(|| unknown_whole_model(name))
    }

    /// A built-in catalog by short key (`"H100-80GB"`, case and separators ignored).
    pub fn by_key(key: &str) -> Result<&'static Catalog, MigError> {
        let wanted = normalize_key(key);
        Catalog::builtin()
            .iter()
            .find(|c| normalize_key(&c.key) == wanted)
            .ok_or_else(|| unknown_model(key))
    }

    /// A built-in catalog for an NVML product name such as "NVIDIA H100 80GB HBM3",
    /// "NVIDIA A100-SXM4-40GB", "NVIDIA H100 PCIe", "NVIDIA H100 NVL", "NVIDIA H200" or a key.
    pub fn for_model(name: &str) -> Result<&'static Catalog, MigError> {
        let (family, memory_gb) = catalogs::identify(name).ok_or_else(|| unknown_model(name))?;
        Catalog::builtin()
            .iter()
            .find(|c| c.family == family && c.memory_gb == memory_gb)
            .ok_or_else(|| unknown_model(name))
    }

    /// A profile by name (`"3g.40gb"`, `"MIG 3g.40gb"`, case-insensitive).
    pub fn profile_by_name(&self, name: &str) -> Result<&Profile, MigError> {
        self.profile_index_by_name(name)
            .map(|i| &self.profiles[i])
            .ok_or_else(|| self.missing_profile(name))
    }

    /// A profile by NVML GPU-instance profile id.
    pub fn profile_by_id(&self, id: u32) -> Result<&Profile, MigError> {
        self.profile_index(id)
            .map(|i| &self.profiles[i])
            .ok_or_else(|| MigError::UnknownProfileId {
                id,
                model: self.key.clone(),
            })
    }

    pub(crate) fn profile_index(&self, id: u32) -> Option<usize> {
        self.profiles.iter().position(|p| p.id == id)
    }

    pub(crate) fn profile_index_by_name(&self, name: &str) -> Option<usize> {
        let wanted = strip_mig_prefix(name);
        self.profiles
            .iter()
            .position(|p| p.name.eq_ignore_ascii_case(wanted))
    }

    pub(crate) fn missing_profile(&self, name: &str) -> MigError {
        let wanted = strip_mig_prefix(name);
        let available = self.profile_names();
        let found_on: Vec<&str> = Catalog::builtin()
            .iter()
            .filter(|c| c.profile_index_by_name(wanted).is_some())
            .map(|c| c.key.as_str())
            .collect();
        if found_on.is_empty() {
            MigError::UnknownProfile {
                name: wanted.to_string(),
                model: self.key.clone(),
                available,
            }
        } else {
            MigError::ProfileNotOnModel {
                name: wanted.to_string(),
                model: self.key.clone(),
                found_on: found_on.join(", "),
                available,
            }
        }
    }

    fn profile_names(&self) -> String {
        self.profiles
            .iter()
            .map(|p| p.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// mig-parted's named layouts for this model: `all-<profile>` for every profile and
    /// `all-balanced`.
    pub fn static_layouts(&self) -> Vec<StaticLayout> {
        static_layouts::for_catalog(self)
    }

    /// One named static layout, e.g. `all-1g.10gb` or `all-balanced`.
    pub fn static_layout(&self, name: &str) -> Result<StaticLayout, MigError> {
        let layouts = self.static_layouts();
        let known = layouts
            .iter()
            .map(|l| l.name.as_str())
            .collect::<Vec<_>>()
            .join(", ");
        layouts
            .iter()
            .find(|l| l.name.eq_ignore_ascii_case(name.trim()))
            .cloned()
            .ok_or_else(|| MigError::UnknownStaticLayout {
                name: name.to_string(),
                model: self.key.clone(),
                known,
            })
    }
}

/// Most instances of `p` that fit side by side, ignoring compute (greedy interval scheduling).
fn disjoint_starts(p: &Profile) -> u8 {
    let mut count = 0u8;
    let mut free_from = 0u16;
    for &s in &p.starts {
        if u16::from(s) >= free_from {
            count += 1;
            free_from = u16::from(s) + u16::from(p.memory_slices);
        }
    }
    count
}

fn strip_mig_prefix(name: &str) -> &str {
    let name = name.trim();
    match name.get(..4) {
        Some(prefix) if prefix.eq_ignore_ascii_case("mig ") => name[4..].trim_start(),
        _ => name,
    }
}

fn normalize_key(key: &str) -> String {
    key.chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

/// The `N` of a name in MIG's form `Ng…` (`3g.40gb` → 3, `1g.10gb+me` → 1), whatever N
/// is; `None` for any other name (`l40s.48gb`, `g.10gb`).
pub fn mig_compute_slices(profile: &str) -> Option<u32> {
    let (n, _) = profile.split_once('g')?;
    (!n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())).then(|| n.parse().ok()).flatten()
}

/// `l40s.48gb`: the family in lower case without separators, then the memory, as MIG
/// profiles are named after their compute and memory.
pub fn whole_profile_name(family: &str, memory_gb: u32) -> String {
    format!("{}.{memory_gb}gb", normalize_key(family))
}

fn unknown_whole_model(name: &str) -> MigError {
    MigError::UnknownModel {
        name: name.to_string(),
        supported: Catalog::builtin_whole()
            .iter()
            .map(|c| c.key.as_str())
            .collect::<Vec<_>>()
            .join(", "),
    }
}

fn unknown_model(name: &str) -> MigError {
    MigError::UnknownModel {
        name: name.to_string(),
        supported: Catalog::builtin()
            .iter()
            .map(|c| c.key.as_str())
            .collect::<Vec<_>>()
            .join(", "),
    }
}
