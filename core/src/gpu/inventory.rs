//! The simulated inventory (`1 x A100-40GB, 2 x H100-80GB`) and the models it may name.

use slicehub_mig::Catalog;

/// A GPU model the simulated backend can stand in for: a built-in MIG catalog of
/// `slicehub-mig` and what NVML calls that product.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SimulatedModel {
    pub catalog: &'static Catalog,
    pub product_name: &'static str,
    pub memory_mib: u64,
}

/// NVML's product name and total memory for each built-in catalog key; the MIG geometry
/// itself lives only in the catalog.
const PRODUCTS: &[(&str, &str, u64)] = &[
    ("A100-40GB", "NVIDIA A100-SXM4-40GB", 40960),
    ("A100-80GB", "NVIDIA A100-SXM4-80GB", 81920),
    ("H100-80GB", "NVIDIA H100 80GB HBM3", 81559),
    ("H100-94GB", "NVIDIA H100 NVL", 95830),
    ("H200-141GB", "NVIDIA H200", 143771),
    ("B200-180GB", "NVIDIA B200", 183359),
];

impl SimulatedModel {
    /// The model for a catalog key such as `H100-80GB` (case and separators ignored).
    pub fn by_key(key: &str) -> Option<SimulatedModel> {
        let catalog = Catalog::by_key(key).ok()?;
        let (_, product_name, memory_mib) =
            PRODUCTS.iter().find(|(k, _, _)| *k == catalog.key())?;
        Some(SimulatedModel {
            catalog,
            product_name,
            memory_mib: *memory_mib,
        })
    }

    /// Every model the simulated backend offers, in catalog order.
    pub fn all() -> Vec<SimulatedModel> {
        Catalog::builtin()
            .iter()
            .filter_map(|c| SimulatedModel::by_key(c.key()))
            .collect()
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
        assert_eq!(SimulatedModel::all().len(), Catalog::builtin().len());
        assert_eq!(PRODUCTS.len(), Catalog::builtin().len());
        for model in SimulatedModel::all() {
            let found = Catalog::for_model(model.product_name).unwrap();
            assert_eq!(found.key(), model.key(), "{}", model.product_name);
            let gb = u64::from(found.memory_gb());
            assert!(
                (gb * 1000..=gb * 1024).contains(&model.memory_mib),
                "{}",
                model.key()
            );
        }
    }
}
