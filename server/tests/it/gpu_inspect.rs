//! `slicehub gpu inspect` on the simulated backend: no database, no Docker, read only.

use std::path::Path;
use std::process::Output;

use slicehub_end2end::cli::{self, text};

const BIN: &str = env!("CARGO_BIN_EXE_slicehub");

fn slicehub(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut all = vec![
        ("SLICEHUB_GPU_BACKEND", "simulated"),
        ("SLICEHUB_GPU_SIMULATED", "1 x A100-40GB, 2 x H100-80GB"),
        // Unreachable on purpose: inspecting GPUs must not need the database.
        (
            "SLICEHUB_DATABASE_URL",
            "postgres://nobody:nothing@127.0.0.1:1/none",
        ),
        ("SLICEHUB_DOCKER_HOST", "unix:///nonexistent/docker.sock"),
    ];
    all.extend_from_slice(env);
    cli::run(BIN, dir, args, &all)
}

const ONE_INSTANCE: &str = r#"{"version": 1, "gpus": [{"uuid": "GPU-simulated-02-h100-80gb",
  "model": "H100-80GB",
  "instances": [{"profile_id": 9, "start": 4, "gpu_instance_id": 1, "compute_instance_id": 0}]}]}"#;

#[test]
fn json_lists_gpus_profiles_with_placements_and_instances_without_a_database() {
    let dir = tempfile::tempdir().unwrap();
    let out = slicehub(dir.path(), &["gpu", "inspect", "--json"], &[]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(!dir.path().join("data").exists(), "inspect creates nothing");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    assert_eq!(report["kind"], "Simulated");
    assert_eq!(report["backend"], "simulated: 1 x A100-40GB, 2 x H100-80GB");
    let gpus = report["gpus"].as_array().unwrap();
    assert_eq!(gpus.len(), 3);
    let h100 = &gpus[1];
    assert_eq!(h100["index"], 1);
    assert_eq!(h100["uuid"], "GPU-simulated-01-h100-80gb");
    assert_eq!(h100["name"], "NVIDIA H100 80GB HBM3");
    assert_eq!(
        (h100["mig_mode"].as_str(), h100["mig_mode_pending"].as_str()),
        (Some("Enabled"), Some("Enabled"))
    );
    assert_eq!(h100["catalog"]["key"], "H100-80GB");
    assert_eq!(h100["same_as_builtin"], true);
    let profiles = h100["catalog"]["profiles"].as_array().unwrap();
    assert_eq!(profiles.len(), 7);
    let three_g = profiles.iter().find(|p| p["name"] == "3g.40gb").unwrap();
    assert_eq!(three_g["id"], 9);
    assert_eq!(three_g["memory_slices"], 4);
    assert_eq!(three_g["compute_slices"], 3);
    assert_eq!(three_g["max_instances"], 2);
    assert_eq!(three_g["starts"], serde_json::json!([0, 4]));
    assert_eq!(h100["instances"], serde_json::json!([]));
    assert_eq!(h100["health"]["ok"], true);
    assert_eq!(h100["errors"], serde_json::json!([]));
    assert_eq!(gpus[0]["catalog"]["key"], "A100-40GB");
}

#[test]
fn instances_recorded_in_the_state_file_are_shown() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("data")).unwrap();
    std::fs::write(dir.path().join("data/simulated-gpus.json"), ONE_INSTANCE).unwrap();
    let out = slicehub(dir.path(), &["gpu", "inspect", "--json"], &[]);
    assert!(out.status.success(), "{}", text(&out));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let instances = report["gpus"][2]["instances"].as_array().unwrap();
    assert_eq!(instances.len(), 1);
    assert_eq!(instances[0]["profile_name"], "3g.40gb");
    assert_eq!(
        instances[0]["placement"],
        serde_json::json!({"profile_id": 9, "start": 4})
    );
    assert_eq!(instances[0]["gpu_instance_id"], 1);
    assert_eq!(instances[0]["compute_instance_id"], 0);
    assert_eq!(instances[0]["mig_uuid"], "MIG-simulated-02-h100-80gb-1-0");

    let out = slicehub(dir.path(), &["gpu", "inspect"], &[]);
    assert!(out.status.success(), "{}", text(&out));
    let shown = text(&out);
    assert!(
        shown.contains("GPU backend: simulated: 1 x A100-40GB, 2 x H100-80GB"),
        "{shown}"
    );
    assert!(
        shown.contains("GPU 2  NVIDIA H100 80GB HBM3  GPU-simulated-02-h100-80gb"),
        "{shown}"
    );
    assert!(shown.contains("MIG enabled (pending: enabled)"), "{shown}");
    assert!(
        shown.contains("profiles (H100-80GB; same as built-in H100-80GB)"),
        "{shown}"
    );
    assert!(
        shown
            .lines()
            .any(|l| l.trim_start().starts_with("3g.40gb") && l.trim_end().ends_with("0,4")),
        "{shown}"
    );
    assert!(
        shown.contains("3g.40gb@4  GI 1  CI 0  MIG-simulated-02-h100-80gb-1-0"),
        "{shown}"
    );
}

#[test]
fn a_corrupt_state_file_fails_naming_it_and_stays_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("data")).unwrap();
    let path = dir.path().join("data/simulated-gpus.json");
    std::fs::write(&path, "{ not json").unwrap();
    let out = slicehub(dir.path(), &["gpu", "inspect"], &[]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        text(&out).contains("simulated-gpus.json: is not a valid state file"),
        "{}",
        text(&out)
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "{ not json");
}

#[test]
fn the_nvml_backend_without_nvml_exits_1_saying_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let out = slicehub(
        dir.path(),
        &["gpu", "inspect"],
        &[
            ("SLICEHUB_GPU_BACKEND", "nvml"),
            (
                "SLICEHUB_GPU_NVML_LIBRARY",
                "/nonexistent/libnvidia-ml.so.1",
            ),
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let msg = text(&out);
    assert!(
        msg.contains("gpu.backend is `nvml`, but NVML cannot be used"),
        "{msg}"
    );
    assert!(
        msg.contains("set gpu.backend to `auto` or `simulated`"),
        "{msg}"
    );
}

#[test]
fn help_lists_the_gpu_command() {
    let dir = tempfile::tempdir().unwrap();
    let out = slicehub(dir.path(), &["gpu", "--help"], &[]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("inspect"), "{}", text(&out));
}

#[test]
fn activity_says_where_no_gpu_keeps_gpm_samples() {
    let dir = tempfile::tempdir().unwrap();
    let out = slicehub(dir.path(), &["gpu", "inspect", "--activity", "1"], &[]);
    assert!(out.status.success(), "{}", text(&out));
    let printed = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        printed.matches("activity over 1 s: no GPM samples on this GPU (with MIG on, jobs are never judged idle)").count(),
        3,
        "{printed}"
    );
    let out = slicehub(dir.path(), &["gpu", "inspect", "--json", "--activity", "1"], &[]);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    assert_eq!(report["gpus"][1]["activity"]["gpm"], false);
    assert_eq!(report["gpus"][1]["activity"]["busy_percent"], serde_json::Value::Null);
    let out = slicehub(dir.path(), &["gpu", "inspect", "--activity", "soon"], &[]);
    assert!(!out.status.success(), "a number of seconds: {}", text(&out));
}
