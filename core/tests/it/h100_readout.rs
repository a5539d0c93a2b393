//! The catalog code against a real H100 80GB (docs/hardware/h100, recorded read-only).
//!
//! Two independent readouts of the same GPU must both give the built-in `H100-80GB` catalog:
//! `nvidia-smi mig -lgip/-lgipp` fed through `catalog_from_readout`, and the catalog that
//! `slicehub gpu inspect --json` built from NVML itself. Nothing here assumes a particular
//! GPU: the UUID is only compared between files of the same recording.

use std::path::PathBuf;

use slicehub_core::gpu::Catalog;
use slicehub_gpu::{catalog_from_readout, PlacementReadout, ProfileReadout};

fn recorded(name: &str) -> String {
    let path: PathBuf = [
        env!("CARGO_MANIFEST_DIR"),
        "..",
        "docs",
        "hardware",
        "h100",
        name,
    ]
    .iter()
    .collect();
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A row of `nvidia-smi mig -lgip`:
/// `|   0  MIG 1g.10gb         19     7/7        9.75       No     16     1     0   |`
struct LgipRow {
    name: String,
    id: u32,
    total: u32,
    memory_gib: f64,
}

fn parse_lgip(text: &str) -> Vec<LgipRow> {
    text.lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line
                .trim_matches(|c| c == '|' || c == ' ')
                .split_whitespace()
                .collect();
            if fields.get(1) != Some(&"MIG") {
                return None;
            }
            let (_, total) = fields.get(4)?.split_once('/')?;
            Some(LgipRow {
                name: fields.get(2)?.to_string(),
                id: fields.get(3)?.parse().ok()?,
                total: total.parse().ok()?,
                memory_gib: fields.get(5)?.parse().ok()?,
            })
        })
        .collect()
}

/// A line of `nvidia-smi mig -lgipp`: `GPU  0 Profile ID 14 Placements: {0,2,4}:2`
/// (`Placement :` when there is one). Gives (profile id, placements).
fn parse_lgipp(text: &str) -> Vec<(u32, Vec<PlacementReadout>)> {
    text.lines()
        .filter_map(|line| {
            let rest = line.split_once("Profile ID")?.1;
            let (id, rest) = rest.split_once("Placement")?;
            let (starts, size) = rest.split_once('{')?.1.split_once("}:")?;
            let size: u32 = size.trim().parse().ok()?;
            let placements = starts
                .split(',')
                .map(|s| {
                    s.trim()
                        .parse()
                        .map(|start| PlacementReadout { start, size })
                })
                .collect::<Result<Vec<_>, _>>()
                .ok()?;
            Some((id.trim().parse().ok()?, placements))
        })
        .collect()
}

fn h100() -> &'static Catalog {
    Catalog::by_key("H100-80GB").unwrap()
}

fn inspect() -> serde_json::Value {
    serde_json::from_str(&recorded("inspect.json")).expect("inspect.json is JSON")
}

#[test]
fn nvidia_smi_readout_gives_the_builtin_h100_catalog() {
    let rows = parse_lgip(&recorded("lgip.txt"));
    let placements = parse_lgipp(&recorded("lgipp.txt"));
    assert_eq!(
        rows.len(),
        h100().profiles().len(),
        "one -lgip row per profile"
    );
    assert_eq!(placements.len(), rows.len(), "one -lgipp line per profile");
    let readout: Vec<ProfileReadout> = rows
        .iter()
        .map(|row| {
            let compute: u32 = row
                .name
                .split_once("g.")
                .and_then(|(c, _)| c.parse().ok())
                .unwrap();
            ProfileReadout {
                // -lgip prints no profile index; names are given, so it is not needed.
                index: 0,
                id: row.id,
                name: Some(row.name.clone()),
                compute_slices: compute,
                instance_count: row.total,
                memory_mib: (row.memory_gib * 1024.0).round() as u64,
                placements: placements
                    .iter()
                    .find(|(id, _)| *id == row.id)
                    .unwrap()
                    .1
                    .clone(),
            }
        })
        .collect();
    let gpu = &inspect()["gpus"][0];
    let name = gpu["name"].as_str().unwrap();
    let memory = gpu["memory_mib"].as_u64().unwrap();
    let catalog = catalog_from_readout(name, memory, &readout).unwrap();
    assert_eq!(catalog.key(), "H100-80GB");
    assert_eq!(catalog.profiles().len(), h100().profiles().len());
    for (read, builtin) in catalog.profiles().iter().zip(h100().profiles()) {
        let shape = |p: &slicehub_core::gpu::Profile| {
            (
                p.name.clone(),
                p.id,
                p.memory_slices,
                p.compute_slices,
                p.starts.clone(),
                p.max_instances,
                p.media_extensions,
            )
        };
        assert_eq!(shape(read), shape(builtin));
        // -lgip prints GiB with two decimals: within 6 MiB of NVML's exact figure.
        assert!(
            read.memory_mib.abs_diff(builtin.memory_mib) <= 6,
            "{}",
            read.name
        );
    }
}

#[test]
fn the_catalog_nvml_gave_slicehub_is_the_builtin_h100_catalog() {
    let report = inspect();
    assert_eq!(report["kind"], "Nvml");
    let gpu = &report["gpus"][0];
    assert_eq!(gpu["errors"], serde_json::json!([]));
    let catalog: Catalog = serde_json::from_value(gpu["catalog"].clone()).expect("a valid catalog");
    assert_eq!(catalog.key(), "H100-80GB");
    assert_eq!(catalog.profiles(), h100().profiles());
    assert_eq!(gpu["same_as_builtin"], true);
    assert_eq!(
        Catalog::for_model(gpu["name"].as_str().unwrap())
            .unwrap()
            .key(),
        "H100-80GB"
    );
}

#[test]
fn inspect_agrees_with_nvidia_smi_about_the_same_gpu() {
    let report = inspect();
    let gpu = &report["gpus"][0];
    let smi = recorded("nvidia-smi-q.txt");
    let uuid = gpu["uuid"].as_str().unwrap();
    assert!(uuid.starts_with("GPU-") && smi.contains(uuid), "{uuid}");
    let current = smi
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("MIG Mode"))
        .find_map(|l| {
            l.trim()
                .strip_prefix("Current")
                .map(|v| v.trim_start_matches([' ', ':']))
        })
        .unwrap();
    assert_eq!(gpu["mig_mode"].as_str().unwrap(), current);
    let instances = gpu["instances"].as_array().unwrap();
    if current == "Disabled" {
        assert!(instances.is_empty());
    }
}

/// A GPU with MIG off, read through NVML by `slicehub gpu inspect --json` on a lent H100
/// and a lent H200 (docs/hardware/whole-gpu, read-only): one whole-GPU slice whose memory is
/// nvidia-smi's and whose multiprocessors are PyTorch's, equal to the built-in catalog.
#[test]
fn a_gpu_with_mig_off_reads_as_one_whole_slice_equal_to_nvidia_smi_and_torch() {
    for gpu in ["h100", "h200"] {
        let file = |name: &str| -> String {
            let path: PathBuf = [env!("CARGO_MANIFEST_DIR"), "..", "docs", "hardware", "whole-gpu", gpu, name].iter().collect();
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        };
        let inspect: serde_json::Value = serde_json::from_str(&file("inspect.json")).unwrap();
        let read = &inspect["gpus"][0];
        let catalog: Catalog = serde_json::from_value(read["catalog"].clone()).expect("a valid catalog");
        assert!(catalog.is_whole(), "{gpu}");
        let profile = &catalog.profiles()[0];
        let smi = file("nvidia-smi.csv");
        let row: Vec<&str> = smi.lines().nth(1).unwrap().split(", ").collect();
        assert_eq!(row[4], "Disabled", "{gpu}: MIG is off there");
        assert_eq!(format!("{} MiB", profile.memory_mib), row[3], "{gpu}: memory as nvidia-smi says");
        let torch = file("torch.txt");
        let sms = torch.split_whitespace().find_map(|w| w.strip_prefix("multi_processor_count=")).unwrap();
        assert_eq!(profile.multiprocessors.map(|n| n.to_string()).as_deref(), Some(sms), "{gpu}: SMs as PyTorch counts them");
        let builtin = Catalog::whole_for_model(read["name"].as_str().unwrap()).unwrap();
        assert_eq!(builtin.profiles(), catalog.profiles(), "{gpu}: the built-in table is the hardware's");
        assert_eq!(read["instances"][0]["mig_uuid"], read["uuid"], "{gpu}: the device is the GPU");
    }
}
