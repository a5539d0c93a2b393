//! GPUs used whole (no MIG) through the real binary and the Docker engine: a card without
//! MIG and an H100 with MIG off are each one slice; a student's container is given exactly
//! that GPU; a second claim waits for it; the course policy decides who may take a whole
//! GPU; no MIG layout can be put on one. On SQLite, then on PostgreSQL.
//! Needs `slicehub/busybox:offline`.

use std::time::Duration;

use serde_json::Value;
use slicehub_end2end::classroom::Classroom;
use slicehub_end2end::jobs::{claim_job, wait_for_state};
use slicehub_end2end::Portal;

use crate::common::{listed_sessions as sessions, listed_state as state, on_sqlite_then_postgres};

const BIN: &str = env!("CARGO_BIN_EXE_slicehub");
const BUSYBOX: &str = "slicehub/busybox:offline";

#[tokio::test(flavor = "multi_thread")]
async fn a_whole_gpu_is_one_students_slice_at_a_time() {
    on_sqlite_then_postgres(whole_gpus).await;
}

async fn whole_gpus(database: Option<String>) {
    let mut env = vec![
        ("SLICEHUB_GPU_SIMULATED", "1 x L40S-48GB, 1 x H100-80GB mig=off"),
        ("SLICEHUB_SESSIONS_DEFAULT_IMAGE", BUSYBOX),
        ("SLICEHUB_SESSIONS_MEMORY_MIB_PER_MEMORY_SLICE", "128"),
        ("SLICEHUB_SESSIONS_RECONCILE_SECONDS", "1"),
        ("SLICEHUB_SESSIONS_SAMPLE_SECONDS", "1"),
        ("SLICEHUB_METRICS_TOKEN", METRICS_TOKEN),
    ];
    if let Some(url) = &database {
        env.push(("SLICEHUB_DATABASE_URL", url.as_str()));
    }
    let class = Classroom::start(BIN.as_ref(), &env).await;
    let portal = &class.portal;
    let inspect = portal.cli(&["gpu", "inspect"], "");
    assert!(inspect.contains("used whole (no MIG): one slice, 142 multiprocessors"), "{inspect}");
    assert!(inspect.contains("MIG unsupported") && inspect.contains("MIG disabled"), "{inspect}");
    let cookies = class.enroll(&["first", "second", "third"]).await;

    // A whole GPU is 7 compute slices: more than a course allows by default (4).
    let refused = claim_job(&portal.url, &cookies[0], "l40s.48gb", BUSYBOX, "sleep 600").await.unwrap_err();
    assert!(refused.contains("compute slice"), "{refused}");
    assert!(sessions(portal).is_empty(), "a refused claim leaves nothing behind");
    portal.cli(&["course", "policy", "CS-101", "--profiles", "l40s.48gb,h100.80gb", "--max-slices", "7"], "");

    let first = claim_job(&portal.url, &cookies[0], "l40s.48gb", BUSYBOX, "sleep 600").await.unwrap();
    let list = || sessions(portal);
    let running = wait_for_state(list, &first, &["ready"], Duration::from_secs(60)).await;
    assert_eq!(visible_devices(&running), "GPU-simulated-00-l40s-48gb", "exactly its GPU, by UUID");
    let second = claim_job(&portal.url, &cookies[1], "l40s.48gb", BUSYBOX, "sleep 600").await.unwrap();
    wait_for_state(list, &second, &["queued"], Duration::from_secs(30)).await;
    let third = claim_job(&portal.url, &cookies[2], "h100.80gb", BUSYBOX, "sleep 600").await.unwrap();
    let other = wait_for_state(list, &third, &["ready"], Duration::from_secs(60)).await;
    assert_eq!(visible_devices(&other), "GPU-simulated-01-h100-80gb");
    assert_eq!(state(portal, &second), "queued", "one student at a time on a whole GPU");
    whole_gpu_slices_carry_no_mig_instance_labels(portal).await;

    assert!(portal.cli(&["session", "stop", &first], "").contains("ended"));
    let next = wait_for_state(list, &second, &["ready"], Duration::from_secs(60)).await;
    assert_eq!(visible_devices(&next), "GPU-simulated-00-l40s-48gb", "the waiting claim gets the freed GPU");

    let layout = portal.cli_fails(&["gpu", "layout", "1", "all-balanced"]);
    assert!(layout.contains("used whole"), "{layout}");
    for id in [&second, &third] {
        portal.cli(&["session", "stop", id], "");
    }
}

const METRICS_TOKEN: &str = "whole-gpus-metrics-token-0123456789";

/// On `/metrics` a slice of a GPU used whole names its GPU as DCGM does (UUID, model) and
/// no MIG instance: `GPU_I_ID` and `GPU_I_PROFILE` are empty, as DCGM leaves them out.
async fn whole_gpu_slices_carry_no_mig_instance_labels(portal: &Portal) {
    let label = |line: &str, name: &str| -> Option<String> {
        line.split(&format!("{name}=\"")).nth(1).map(|rest| rest.split('"').next().unwrap_or("").to_string())
    };
    let until = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let body = reqwest::Client::new()
            .get(format!("{}/metrics", portal.url))
            .bearer_auth(METRICS_TOKEN)
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        let slices: Vec<&str> = body.lines().filter(|l| l.starts_with("slicehub_slice_memory_used_bytes{")).collect();
        if slices.len() == 2 {
            for line in slices {
                assert!(label(line, "UUID").is_some_and(|u| u.starts_with("GPU-simulated-0")), "{line}");
                assert!(label(line, "modelName").is_some_and(|m| !m.is_empty()), "{line}");
                assert_eq!(label(line, "GPU_I_ID").unwrap_or_default(), "", "{line}");
                assert_eq!(label(line, "GPU_I_PROFILE").unwrap_or_default(), "", "{line}");
            }
            return;
        }
        assert!(std::time::Instant::now() < until, "two running slices never sampled: {body}");
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// `NVIDIA_VISIBLE_DEVICES` of the session's container, as the engine has it.
fn visible_devices(session: &Value) -> String {
    let container = session["container"].as_str().expect("a container");
    let out = std::process::Command::new("docker")
        .args(["inspect", "--format", "{{range .Config.Env}}{{println .}}{{end}}", container])
        .output()
        .expect("docker runs");
    let env = String::from_utf8_lossy(&out.stdout).to_string();
    env.lines()
        .find_map(|l| l.strip_prefix("NVIDIA_VISIBLE_DEVICES="))
        .unwrap_or_else(|| panic!("no NVIDIA_VISIBLE_DEVICES in {env}"))
        .to_string()
}
