//! Built-in profile tables, one file per GPU model, and NVML product-name matching.
//!
//! Geometry (ids, sizes, starts, max instances) follows NVIDIA's MIG User Guide
//! "Supported MIG Profiles" tables and `nvidia-smi mig -lgipp`; the H100-80GB table is the
//! readout of a real H100 (see BUILD-NOTES "GPUs"). Memory in MiB is what NVML reports and
//! varies a little between driver releases; each file says where its numbers come from.

mod a100_40gb;
mod a100_80gb;
mod b200_180gb;
mod h100_80gb;
mod h100_94gb;
mod h200_141gb;
pub(crate) mod whole;

use crate::catalog::{Catalog, Profile};

pub(crate) fn all() -> Vec<Catalog> {
    [
        a100_40gb::catalog(),
        a100_80gb::catalog(),
        h100_80gb::catalog(),
        h100_94gb::catalog(),
        h200_141gb::catalog(),
        b200_180gb::catalog(),
    ]
    .into_iter()
    .filter_map(Result::ok)
    .collect()
}

#[allow(clippy::too_many_arguments)]
fn profile(
    name: &str,
    id: u32,
    memory_slices: u8,
    compute_slices: u8,
    memory_mib: u64,
    starts: &[u8],
    max_instances: u8,
    media_extensions: bool,
) -> Profile {
    Profile {
        name: name.to_string(),
        id,
        memory_slices,
        compute_slices,
        memory_mib,
        starts: starts.to_vec(),
        max_instances,
        media_extensions,
        multiprocessors: None,
    }
}

/// (family, nominal GB) for an NVML product name or a catalog key; `None` if not MIG-capable
/// here or ambiguous (an A100 name without its memory size).
pub(crate) fn identify(name: &str) -> Option<(&'static str, u32)> {
    let tokens = words(name);
    let family = tokens.iter().find_map(|t| match t.as_str() {
        "a100" | "a800" => Some("A100"),
        "h100" | "h800" => Some("H100"),
        "h200" => Some("H200"),
        "b200" => Some("B200"),
        _ => None,
    })?;
    let memory_gb = tokens.iter().find_map(|t| {
        let digits = t.strip_suffix("gb")?;
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        digits.parse::<u32>().ok()
    });
    let memory_gb = match (family, memory_gb) {
        (_, Some(gb)) => gb,
        ("H100", None) if tokens.iter().any(|t| t == "nvl") => 94,
        ("H100", None) => 80,
        ("H200", None) => 141,
        ("B200", None) => 180,
        _ => return None,
    };
    Some((family, memory_gb))
}

/// The lower-case words of a product name or key: `NVIDIA A100-SXM4-40GB` → a100, sxm4, 40gb.
pub(crate) fn words(name: &str) -> Vec<String> {
    name.split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|t| !t.is_empty())
        .map(str::to_ascii_lowercase)
        .collect()
}
