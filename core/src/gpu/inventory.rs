//! The simulated inventory (`1 x A100-40GB, 2 x H100-80GB`) and the models it may name.

use slicehub_mig::Catalog;

use super::MigMode;

/// A GPU model the simulated backend can stand in for: a built-in catalog of
/// `slicehub-mig` (MIG, or the whole GPU) and what NVML calls that product.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SimulatedModel {
    pub catalog: &'static Catalog,
    pub product_name: &'static str,
    pub memory_mib: u64,
    pub mig_mode: MigMode,
}

/// NVML's product name for each built-in model. Its total memory is the whole-GPU
/// catalog's (`slicehub-mig`), which every model has, MIG-capable or not.
const PRODUCTS: &[(&str, &str)] = &[
    ("A100-40GB", "NVIDIA A100-SXM4-40GB"),
    ("A100-80GB", "NVIDIA A100-SXM4-80GB"),
    ("H100-80GB", "NVIDIA H100 80GB HBM3"),
    ("H100-94GB", "NVIDIA H100 NVL"),
    ("H200-141GB", "NVIDIA H200"),
    ("B200-180GB", "NVIDIA B200"),
    ("L40S-48GB", "NVIDIA L40S"),
    ("L4-24GB", "NVIDIA L4"),
    ("A10-24GB", "NVIDIA A10"),
    ("A40-48GB", "NVIDIA A40"),
    ("RTX4090-24GB", "NVIDIA GeForce RTX 4090"),
    ("RTX6000ADA-48GB", "NVIDIA RTX 6000 Ada Generation"),
    ("T4-16GB", "Tesla T4"),
    ("V100-16GB", "Tesla V100-SXM2-16GB"),
    ("V100-32GB", "Tesla V100-SXM2-32GB"),
];

/// `H100-80GB mig=off`: a MIG-capable model used whole.
const MIG_OFF: &str = "mig=off";

impl SimulatedModel {
    /// The model for a catalog key such as `H100-80GB` or `L40S-48GB` (case and separators
    /// ignored); `H100-80GB mig=off` is that GPU with MIG off, used whole.
    pub fn by_key(key: &str) -> Option<SimulatedModel> {
        let (key, mig_off) = match key.trim().rsplit_once(char::is_whitespace) {
            Some((model, flag)) if flag.eq_ignore_ascii_case(MIG_OFF) => (model.trim(), true),
            _ => (key.trim(), false),
        };
        let mig = Catalog::by_key(key).ok();
        let (catalog, mig_mode) = match (mig, mig_off) {
            (Some(catalog), false) => (catalog, MigMode::Enabled),
            (Some(_), true) => (Catalog::whole_by_key(key).ok()?, MigMode::Disabled),
            (None, false) => (Catalog::whole_by_key(key).ok()?, MigMode::Unsupported),
            (None, true) => return None,
        };
        let (_, product_name) = PRODUCTS.iter().find(|(k, _)| *k == catalog.key())?;
        let whole = Catalog::whole_by_key(catalog.key()).ok()?;
        let memory_mib = whole.profiles().first()?.memory_mib;
        Some(SimulatedModel { catalog, product_name, memory_mib, mig_mode })
    }

    /// Every model the simulated backend offers: the MIG ones, then those without MIG.
    pub fn all() -> Vec<SimulatedModel> {
        let mig = Catalog::builtin().iter().filter_map(|c| SimulatedModel::by_key(c.key()));
        let whole = Catalog::builtin_whole().iter().filter(|c| Catalog::by_key(c.key()).is_err());
        mig.chain(whole.filter_map(|c| SimulatedModel::by_key(c.key()))).collect()
    }

    pub fn key(&self) -> &'static str {
        self.catalog.key()
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InventoryEntry {
    pub count: u32,
    pub model: SimulatedModel,
}

/// Parses `1 x A100-40GB, 2 x H100-80GB` (the `x` may be `×` or `*`, spaces optional).
pub fn parse_inventory(text: &str) -> Result<Vec<InventoryEntry>, String> {
    let mut entries = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let normalized = part.replace(['×', '*'], "x");
        let (count, model) = match normalized
            .split_once(" x ")
            .or_else(|| normalized.split_once('x'))
        {
            Some((n, m))
                if n.trim().chars().all(|c| c.is_ascii_digit()) && !n.trim().is_empty() =>
            {
                (
                    n.trim().parse::<u32>().map_err(|e| e.to_string())?,
                    m.trim(),
                )
            }
            _ => (1, normalized.trim()),
        };
        if count == 0 || count > 64 {
            return Err(format!("`{part}`: the count must be 1 to 64"));
        }
        let model = SimulatedModel::by_key(model).ok_or_else(|| {
            let known: Vec<&str> = SimulatedModel::all().iter().map(|m| m.key()).collect();
            format!(
                "`{part}`: unknown GPU model `{model}` (models: {})",
                known.join(", ")
            )
        })?;
        entries.push(InventoryEntry { count, model });
    }
    if entries.is_empty() {
        return Err("the simulated inventory is empty".to_string());
    }
    Ok(entries)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inventories_parse_in_the_documented_forms() {
        let inv = parse_inventory("1 x A100-40GB, 2×h100-80gb").unwrap();
        assert_eq!(inv.len(), 2);
        assert_eq!(inv[1].count, 2);
        assert_eq!(inv[1].model.key(), "H100-80GB");
        assert_eq!(inv[1].model.product_name, "NVIDIA H100 80GB HBM3");
        assert_eq!(parse_inventory("B200-180GB").unwrap()[0].count, 1);
    }

    #[test]
    fn unknown_models_and_counts_are_refused() {
        let e = parse_inventory("2 x Z80").unwrap_err();
        assert!(
            e.contains("unknown GPU model `Z80`") && e.contains("H100-80GB"),
            "{e}"
        );
        assert!(parse_inventory("0 x A100-40GB")
            .unwrap_err()
            .contains("1 to 64"));
        assert!(parse_inventory(" , ").is_err());
    }

    #[test]
    fn every_builtin_catalog_is_a_simulated_model_whose_product_name_finds_it() {
        assert_eq!(SimulatedModel::all().len(), PRODUCTS.len());
        for model in SimulatedModel::all() {
            let found = match model.mig_mode {
                MigMode::Enabled => Catalog::for_model(model.product_name).unwrap(),
                _ => Catalog::whole_for_model(model.product_name).unwrap(),
            };
            assert_eq!(found.key(), model.key(), "{}", model.product_name);
            let gb = u64::from(found.memory_gb());
            assert!(
                (gb * 920..=gb * 1024).contains(&model.memory_mib),
                "{}",
                model.key()
            );
        }
    }

    #[test]
    fn cards_without_mig_and_mig_off_are_used_whole() {
        let inv = parse_inventory("2 x L40S-48GB, 1 x H100-80GB mig=off, 1 x H100-80GB").unwrap();
        let l40s = inv[0].model;
        assert_eq!((l40s.mig_mode, l40s.catalog.is_whole()), (MigMode::Unsupported, true));
        assert_eq!(l40s.product_name, "NVIDIA L40S");
        let off = inv[1].model;
        assert_eq!((off.mig_mode, off.catalog.is_whole(), off.key()), (MigMode::Disabled, true, "H100-80GB"));
        assert_eq!(off.catalog.profiles()[0].name, "h100.80gb");
        assert_eq!((inv[2].model.mig_mode, inv[2].model.catalog.is_whole()), (MigMode::Enabled, false));
        let e = parse_inventory("1 x L40S-48GB mig=off").unwrap_err();
        assert!(e.contains("unknown GPU model"), "MIG cannot be turned off where there is none: {e}");
    }
}
