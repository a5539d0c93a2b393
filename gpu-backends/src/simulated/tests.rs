use std::fs;
use std::path::{Path, PathBuf};

use super::*;
use slicehub_core::gpu::MigMode;

fn state_in(dir: &Path) -> PathBuf {
    dir.join("data").join(SIMULATED_STATE_FILE)
}

fn p(profile_id: u32, start: u8) -> Placement {
    Placement::new(profile_id, start)
}

/// H100-80GB profile ids: 19 = 1g.10gb, 15 = 1g.20gb, 14 = 2g.20gb, 9 = 3g.40gb, 0 = 7g.80gb.
const H100: &str = "1 x A100-40GB, 2 x H100-80GB";

fn placements(backend: &SimulatedBackend, gpu: u32) -> Vec<Placement> {
    backend
        .instances(gpu)
        .unwrap()
        .iter()
        .map(|i| i.placement)
        .collect()
}

#[test]
fn inventory_becomes_indexed_gpus_with_stable_uuids() {
    let dir = tempfile::tempdir().unwrap();
    let backend = SimulatedBackend::open(H100, state_in(dir.path())).unwrap();
    let gpus = backend.list_gpus().unwrap();
    assert_eq!(gpus.len(), 3);
    assert_eq!(gpus[2].index, 2);
    assert_eq!(gpus[2].name, "NVIDIA H100 80GB HBM3");
    assert_eq!(gpus[2].uuid, "GPU-simulated-02-h100-80gb");
    assert_eq!(
        (gpus[0].mig_mode, gpus[0].mig_mode_pending),
        (MigMode::Enabled, MigMode::Enabled)
    );
    assert_eq!(backend.kind(), BackendKind::Simulated);
    assert_eq!(backend.catalog(1).unwrap().key(), "H100-80GB");
    assert_eq!(
        &backend.catalog(0).unwrap(),
        Catalog::by_key("A100-40GB").unwrap()
    );
    assert!(!state_in(dir.path()).exists(), "opening writes nothing");
}

#[test]
fn create_gives_smallest_free_ids_and_stable_mig_uuids() {
    let dir = tempfile::tempdir().unwrap();
    let backend = SimulatedBackend::open(H100, state_in(dir.path())).unwrap();
    let a = backend.create_instance(1, p(9, 4)).unwrap();
    let b = backend.create_instance(1, p(14, 0)).unwrap();
    assert_eq!((a.gpu_instance_id, b.gpu_instance_id), (1, 2));
    assert_eq!(a.profile_name, "3g.40gb");
    assert_eq!(a.compute_instance_id, Some(0));
    assert_eq!(a.compute_instance_count, 1);
    assert_eq!(
        a.mig_uuid.as_deref(),
        Some("MIG-simulated-01-h100-80gb-1-0")
    );
    assert_eq!(a.memory_total_mib, Some(40448));
    backend.destroy_instance(1, p(9, 4)).unwrap();
    let c = backend.create_instance(1, p(19, 6)).unwrap();
    assert_eq!(c.gpu_instance_id, 1, "the freed id is reused");
    let listed = backend.instances(1).unwrap();
    assert_eq!(
        listed.iter().map(|i| i.placement).collect::<Vec<_>>(),
        vec![p(14, 0), p(19, 6)]
    );
    assert_eq!(listed[0], b, "listing answers what create answered");
}

#[test]
fn taken_or_disallowed_placements_are_insufficient_resources_and_change_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let backend = SimulatedBackend::open(H100, state_in(dir.path())).unwrap();
    backend.create_instance(1, p(14, 2)).unwrap();
    let before = fs::read(state_in(dir.path())).unwrap();
    for (placement, words) in [
        (p(19, 3), "overlaps placement 2g.20gb@2"),
        (p(14, 2), "overlaps placement 2g.20gb@2"),
        (p(9, 2), "allowed starts: 0,4"),
        (p(0, 0), "overlaps"),
    ] {
        let e = backend.create_instance(1, placement).unwrap_err();
        assert!(
            matches!(e, CoreError::InsufficientResources(_)),
            "{placement}: {e}"
        );
        assert!(e.to_string().contains(words), "{e}");
    }
    assert_eq!(placements(&backend, 1), vec![p(14, 2)]);
    assert_eq!(fs::read(state_in(dir.path())).unwrap(), before);
    backend.create_instance(1, p(20, 0)).unwrap();
    let e = backend.create_instance(1, p(20, 1)).unwrap_err();
    assert!(e.to_string().contains("maximum of 1 instances"), "{e}");
}

#[test]
fn destroy_releases_exactly_that_instance() {
    let dir = tempfile::tempdir().unwrap();
    let backend = SimulatedBackend::open(H100, state_in(dir.path())).unwrap();
    let keep_a = backend.create_instance(1, p(14, 0)).unwrap();
    backend.create_instance(1, p(14, 2)).unwrap();
    let keep_b = backend.create_instance(1, p(9, 4)).unwrap();
    let other_gpu = backend.create_instance(2, p(0, 0)).unwrap();
    backend.destroy_instance(1, p(14, 2)).unwrap();
    assert_eq!(backend.instances(1).unwrap(), vec![keep_a, keep_b]);
    assert_eq!(backend.instances(2).unwrap(), vec![other_gpu]);
    backend.create_instance(1, p(19, 2)).unwrap();
    let e = backend.destroy_instance(1, p(14, 2)).unwrap_err();
    assert!(matches!(e, CoreError::NotFound(_)), "{e}");
    assert!(
        e.to_string()
            .contains("GPU 1 has no MIG instance 2g.20gb@2"),
        "{e}"
    );
    assert!(
        e.to_string()
            .contains("it has: 2g.20gb@0, 1g.10gb@2, 3g.40gb@4"),
        "{e}"
    );
}

#[test]
fn unknown_gpus_and_profiles_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let backend = SimulatedBackend::open(H100, state_in(dir.path())).unwrap();
    let e = backend.instances(3).unwrap_err();
    assert!(matches!(e, CoreError::NotFound(_)), "{e}");
    assert!(e.to_string().contains("there is no GPU 3"), "{e}");
    let e = backend.create_instance(1, p(42, 0)).unwrap_err();
    assert!(matches!(e, CoreError::InvalidRequest(_)), "{e}");
    assert!(
        e.to_string()
            .contains("no MIG profile with id 42 on H100-80GB"),
        "{e}"
    );
    // A100-40GB has no 1g.20gb (it has 1g.10gb at id 15): the name finds no profile there.
    let catalog = backend.catalog(0).unwrap();
    let e = slicehub_core::gpu::placement_by_name(0, &catalog, "3g.40gb", 4).unwrap_err();
    assert!(matches!(e, CoreError::InvalidRequest(_)), "{e}");
    assert!(e.to_string().contains("does not exist on A100-40GB"), "{e}");
}

#[test]
fn instances_survive_a_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let first = SimulatedBackend::open(H100, state_in(dir.path())).unwrap();
    first.create_instance(1, p(9, 0)).unwrap();
    first.create_instance(2, p(15, 6)).unwrap();
    let before: Vec<_> = (0..3).map(|g| first.instances(g).unwrap()).collect();
    drop(first);
    let again = SimulatedBackend::open(H100, state_in(dir.path())).unwrap();
    let after: Vec<_> = (0..3).map(|g| again.instances(g).unwrap()).collect();
    assert_eq!(before, after);
    let e = again.create_instance(1, p(9, 0)).unwrap_err();
    assert!(matches!(e, CoreError::InsufficientResources(_)), "{e}");
}

fn refused(dir: &Path, spec: &str, content: &[u8]) -> String {
    let path = state_in(dir);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(&path, content).unwrap();
    let Err(e) = SimulatedBackend::open(spec, &path) else {
        panic!("{} was accepted", String::from_utf8_lossy(content));
    };
    assert!(matches!(e, CoreError::GpuStateFile { .. }), "{e}");
    assert_eq!(
        fs::read(&path).unwrap(),
        content,
        "the file is left byte for byte"
    );
    let message = e.to_string();
    assert!(
        message.contains(&path.display().to_string()),
        "names the file: {message}"
    );
    assert!(message.contains("left untouched"), "{message}");
    message
}

#[test]
fn a_corrupt_state_file_is_refused_and_left_as_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let m = refused(dir.path(), H100, b"{\"version\": 1, \"gpus\": [");
    assert!(m.contains("is not a valid state file"), "{m}");
    let m = refused(dir.path(), H100, b"\xff\xfe garbage");
    assert!(m.contains("is not a valid state file"), "{m}");
    let m = refused(dir.path(), H100, br#"{"version": 7, "gpus": []}"#);
    assert!(m.contains("version 7"), "{m}");
    let overlapping = br#"{"version": 1, "gpus": [{"uuid": "GPU-simulated-01-h100-80gb", "model": "H100-80GB",
        "instances": [{"profile_id": 9, "start": 0, "gpu_instance_id": 1, "compute_instance_id": 0},
                      {"profile_id": 14, "start": 2, "gpu_instance_id": 2, "compute_instance_id": 0}]}]}"#;
    let m = refused(dir.path(), H100, overlapping);
    assert!(
        m.contains("GPU-simulated-01-h100-80gb (H100-80GB)") && m.contains("overlaps"),
        "{m}"
    );
    let same_id = br#"{"version": 1, "gpus": [{"uuid": "GPU-simulated-01-h100-80gb", "model": "H100-80GB",
        "instances": [{"profile_id": 9, "start": 0, "gpu_instance_id": 1, "compute_instance_id": 0},
                      {"profile_id": 9, "start": 4, "gpu_instance_id": 1, "compute_instance_id": 0}]}]}"#;
    assert!(refused(dir.path(), H100, same_id).contains("must be distinct"));
}

#[test]
fn a_state_file_that_no_longer_fits_the_inventory_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let backend = SimulatedBackend::open(H100, state_in(dir.path())).unwrap();
    backend.create_instance(2, p(9, 4)).unwrap();
    drop(backend);
    let content = fs::read(state_in(dir.path())).unwrap();
    let m = refused(dir.path(), "1 x A100-40GB, 1 x H100-80GB", &content);
    assert!(
        m.contains("lists 1 MIG instance(s) on GPU-simulated-02-h100-80gb"),
        "{m}"
    );
    assert!(m.contains("was gpu.simulated changed?"), "{m}");
    let m = refused(
        dir.path(),
        "1 x A100-40GB, 1 x H100-80GB, 1 x H200-141GB",
        &content,
    );
    assert!(m.contains("GPU-simulated-02-h100-80gb"), "{m}");
    // GPUs the inventory dropped are fine while they hold no instance.
    SimulatedBackend::open(
        "1 x A100-40GB, 2 x H100-80GB, 1 x B200-180GB",
        state_in(dir.path()),
    )
    .unwrap();
    let shrunk =
        SimulatedBackend::open("1 x A100-40GB, 2 x H100-80GB", state_in(dir.path())).unwrap();
    shrunk.destroy_instance(2, p(9, 4)).unwrap();
    SimulatedBackend::open("1 x A100-40GB", state_in(dir.path())).unwrap();
}

#[test]
fn a_failed_write_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let backend = SimulatedBackend::open(H100, state_in(dir.path())).unwrap();
    // A directory where the temporary file must go makes the write fail.
    fs::create_dir_all(
        dir.path()
            .join("data")
            .join(format!("{SIMULATED_STATE_FILE}.tmp")),
    )
    .unwrap();
    let e = backend.create_instance(1, p(9, 0)).unwrap_err();
    assert!(e.to_string().contains("nothing was changed"), "{e}");
    assert!(backend.instances(1).unwrap().is_empty());
}

#[test]
fn utilization_is_unknown_and_health_ok() {
    let dir = tempfile::tempdir().unwrap();
    let backend = SimulatedBackend::open(H100, state_in(dir.path())).unwrap();
    assert_eq!(backend.utilization(0).unwrap(), GpuUtilization::default());
    assert!(backend.health(2).unwrap().ok);
    assert!(backend.health(9).is_err());
}

#[test]
fn a_gpu_without_mig_or_with_mig_off_is_one_instance_that_is_always_there() {
    let dir = tempfile::tempdir().unwrap();
    let backend = SimulatedBackend::open("1 x L4-24GB, 1 x H100-80GB mig=off", state_in(dir.path())).unwrap();
    let gpus = backend.list_gpus().unwrap();
    assert_eq!((gpus[0].name.as_str(), gpus[0].mig_mode), ("NVIDIA L4", MigMode::Unsupported));
    assert_eq!(gpus[1].mig_mode, MigMode::Disabled);
    for gpu in &gpus {
        let [instance] = backend.instances(gpu.index).unwrap().try_into().expect("one instance");
        assert_eq!(instance.mig_uuid.as_deref(), Some(gpu.uuid.as_str()), "the device is the GPU itself");
        assert_eq!(instance.placement, p(slicehub_mig::WHOLE_PROFILE_ID, 0));
        let err = backend.create_instance(gpu.index, p(19, 0)).unwrap_err().to_string();
        assert!(err.contains("used whole"), "{err}");
        // A hold left from when MIG was on lets go: the instance is gone, not refused.
        let gone = backend.destroy_instance(gpu.index, p(9, 0)).unwrap_err();
        assert!(matches!(gone, CoreError::NotFound(_)), "{gone}");
    }
    assert_eq!(backend.instances(0).unwrap()[0].profile_name, "l4.24gb");
    assert!(!state_in(dir.path()).exists(), "nothing written for GPUs used whole");
}
