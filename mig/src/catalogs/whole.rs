//! GPUs used whole: the common models without MIG, and the MIG-capable ones with MIG off.
//!
//! Memory and streaming multiprocessors from NVIDIA's data sheets (SMs: CUDA cores divided
//! by the cores of one SM of that architecture). The MiB figure is what `nvidia-smi` reports
//! for the card (ECC and the driver's reserve take some of the nominal memory); only the
//! H100 80GB's was read here (docs/hardware/whole-gpu/), the others are the usual
//! readings of those cards and serve the simulated backend. On real hardware NVML's own
//! figures replace them.

use crate::catalog::Catalog;

struct WholeModel {
    key: &'static str,
    family: &'static str,
    memory_gb: u32,
    memory_mib: u64,
    multiprocessors: u32,
    model: &'static str,
}

const MODELS: [WholeModel; 15] = [
    WholeModel { key: "L40S-48GB", family: "L40S", memory_gb: 48, memory_mib: 46068, multiprocessors: 142, model: "NVIDIA L40S (Ada)" },
    WholeModel { key: "L4-24GB", family: "L4", memory_gb: 24, memory_mib: 23034, multiprocessors: 58, model: "NVIDIA L4 (Ada)" },
    WholeModel { key: "A10-24GB", family: "A10", memory_gb: 24, memory_mib: 23028, multiprocessors: 72, model: "NVIDIA A10 (Ampere)" },
    WholeModel { key: "A40-48GB", family: "A40", memory_gb: 48, memory_mib: 46068, multiprocessors: 84, model: "NVIDIA A40 (Ampere)" },
    WholeModel { key: "RTX4090-24GB", family: "RTX4090", memory_gb: 24, memory_mib: 24564, multiprocessors: 128, model: "NVIDIA GeForce RTX 4090 (Ada)" },
    WholeModel { key: "RTX6000ADA-48GB", family: "RTX6000ADA", memory_gb: 48, memory_mib: 49140, multiprocessors: 142, model: "NVIDIA RTX 6000 Ada Generation" },
    WholeModel { key: "T4-16GB", family: "T4", memory_gb: 16, memory_mib: 15360, multiprocessors: 40, model: "NVIDIA T4 (Turing)" },
    WholeModel { key: "V100-16GB", family: "V100", memory_gb: 16, memory_mib: 16160, multiprocessors: 80, model: "NVIDIA V100 16GB (Volta)" },
    WholeModel { key: "V100-32GB", family: "V100", memory_gb: 32, memory_mib: 32768, multiprocessors: 80, model: "NVIDIA V100 32GB (Volta)" },
    WholeModel { key: "A100-40GB", family: "A100", memory_gb: 40, memory_mib: 40960, multiprocessors: 108, model: "NVIDIA A100 40GB, MIG off" },
    WholeModel { key: "A100-80GB", family: "A100", memory_gb: 80, memory_mib: 81920, multiprocessors: 108, model: "NVIDIA A100 80GB, MIG off" },
    WholeModel { key: "H100-80GB", family: "H100", memory_gb: 80, memory_mib: 81559, multiprocessors: 132, model: "NVIDIA H100 80GB, MIG off" },
    WholeModel { key: "H100-94GB", family: "H100", memory_gb: 94, memory_mib: 95830, multiprocessors: 132, model: "NVIDIA H100 NVL, MIG off" },
    WholeModel { key: "H200-141GB", family: "H200", memory_gb: 141, memory_mib: 143771, multiprocessors: 132, model: "NVIDIA H200, MIG off" },
    WholeModel { key: "B200-180GB", family: "B200", memory_gb: 180, memory_mib: 183359, multiprocessors: 148, model: "NVIDIA B200, MIG off" },
];

pub(crate) fn all() -> Vec<Catalog> {
    MODELS
        .iter()
        .filter_map(|m| {
            Catalog::whole_gpu(m.key, m.family, m.memory_gb, m.model, m.memory_mib, Some(m.multiprocessors)).ok()
        })
        .collect()
}

/// (family, nominal GB) of a GPU without MIG from its NVML product name or key, matching
/// whole words only (an A10 is not an A100, an L4 not an L40S); `None` for the MIG-capable
/// families (see `identify` beside) and for names that leave the memory open (a V100).
pub(crate) fn identify(name: &str) -> Option<(&'static str, u32)> {
    let tokens = super::words(name);
    let has = |t: &str| tokens.iter().any(|w| w == t);
    let gb = tokens.iter().find_map(|t| t.strip_suffix("gb").and_then(|d| d.parse::<u32>().ok()));
    let family = if has("l40s") {
        "L40S"
    } else if has("l4") {
        "L4"
    } else if has("a10") {
        "A10"
    } else if has("a40") {
        "A40"
    } else if has("4090") || has("rtx4090") {
        "RTX4090"
    } else if has("6000") && has("ada") || has("rtx6000ada") {
        "RTX6000ADA"
    } else if has("t4") {
        "T4"
    } else if has("v100") {
        "V100"
    } else {
        return None;
    };
    let memory_gb = match family {
        "V100" => gb?,
        _ => MODELS.iter().find(|m| m.family == family)?.memory_gb,
    };
    Some((MODELS.iter().find(|m| m.family == family)?.family, memory_gb))
}
