//! A mixed fleet through the real binary and the Docker engine: a MIG H100, an H100 with
//! MIG off, two L40S used whole (weighed at 4 compute slices by the admin) and an L4 split
//! into 4 MPS shares. Four students share the L4 at once and a fifth waits; each share
//! holds its GPU and its caps; the launch card says what each size costs and guarantees;
//! the weights decide what a budget affords; a drained L4 hands out no freed share; a lab
//! books shares as it books slices. On SQLite, then on PostgreSQL.
//! Needs `slicehub/busybox:offline`.

use std::time::Duration;

use serde_json::Value;
use slicehub_end2end::classroom::Classroom;
use slicehub_end2end::form::{client, post};
use slicehub_end2end::jobs::{claim_job, wait_for_state};
use slicehub_end2end::Portal;

use crate::common::{listed_sessions as sessions, listed_state as state, on_sqlite_then_postgres};

const BIN: &str = env!("CARGO_BIN_EXE_slicehub");
const BUSYBOX: &str = "slicehub/busybox:offline";
const SHARE: &str = "l4.24gb.1of4";
const L4: &str = "GPU-simulated-04-l4-24gb";

#[tokio::test(flavor = "multi_thread")]
async fn four_students_share_an_l4_and_a_fifth_waits() {
    on_sqlite_then_postgres(shared_gpus).await;
}

async fn shared_gpus(database: Option<String>) {
    let mut env = vec![
        ("SLICEHUB_GPU_SIMULATED", "1 x H100-80GB, 1 x H100-80GB mig=off, 2 x L40S-48GB, 1 x L4-24GB"),
        ("SLICEHUB_GPU_SHARES", "4 = 4 mps"),
        ("SLICEHUB_GPU_WEIGHTS", "l40s.48gb = 4"),
        ("SLICEHUB_SESSIONS_DEFAULT_IMAGE", BUSYBOX),
        ("SLICEHUB_SESSIONS_MEMORY_MIB_PER_MEMORY_SLICE", "128"),
        ("SLICEHUB_SESSIONS_RECONCILE_SECONDS", "1"),
        ("SLICEHUB_QUOTAS_MIN_LAUNCH_MINUTES", "60"),
    ];
    if let Some(url) = &database {
        env.push(("SLICEHUB_DATABASE_URL", url.as_str()));
    }
    let class = Classroom::start(BIN.as_ref(), &env).await;
    let portal = &class.portal;
    let inspect = portal.cli(&["gpu", "inspect"], "");
    assert!(inspect.contains("split into 4 shares (no MIG)") && inspect.contains(SHARE), "{inspect}");
    assert!(inspect.contains("same as built-in L4-24GB"), "{inspect}");
    let names = ["s1", "s2", "s3", "s4", "s5"];
    let cookies = class.enroll(&names).await;
    portal.cli(
        &["course", "policy", "CS-101", "--profiles", &format!("1g.10gb,l40s.48gb,h100.80gb,{SHARE}"), "--max-slices", "7", "--quota-hours", "5"],
        "",
    );

    // What each size costs and gives, as the student's launch card has it; 5 slice-hours
    // cover an hour of an L40S at the admin's weight of 4, not of a whole H100 at 7.
    let options = launch_options(portal, &cookies[0]).await;
    let share = option(&options, SHARE);
    assert_eq!(share["per_hour"], "1.75");
    let words = share["guarantees"].as_str().unwrap_or_default();
    assert!(words.contains("capped share (MPS)") && words.contains("25%") && words.contains("not isolated"), "{words}");
    assert_eq!((option(&options, "l40s.48gb")["per_hour"].clone(), option(&options, "l40s.48gb")["affordable"].clone()), ("4".into(), true.into()));
    assert_eq!(option(&options, "h100.80gb")["affordable"], false);
    assert!(option(&options, "1g.10gb")["guarantees"].as_str().unwrap_or_default().contains("MIG slice"));
    let refused = claim_job(&portal.url, &cookies[0], "h100.80gb", BUSYBOX, "sleep 600").await.unwrap_err();
    assert!(refused.contains("slice-hours"), "{refused}");

    let list = || sessions(portal);
    let mut held = Vec::new();
    for cookie in &cookies[..4] {
        held.push(claim_job(&portal.url, cookie, SHARE, BUSYBOX, "sleep 600").await.unwrap());
    }
    for id in &held {
        let running = wait_for_state(list, id, &["ready"], Duration::from_secs(60)).await;
        let env = container_env(&running);
        assert!(env.contains(&format!("NVIDIA_VISIBLE_DEVICES={L4}")), "the L4 by UUID: {env}");
        assert!(env.contains("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=25") && env.contains("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=0=5758M"), "{env}");
    }
    let starts: std::collections::BTreeSet<String> = list().iter().filter(|s| s["profile"] == SHARE).map(|s| s["placement"].to_string()).collect();
    assert_eq!(starts.len(), 4, "four different shares: {starts:?}");

    // A fifth student waits: the L4 never runs more sessions than it has shares.
    let fifth = claim_job(&portal.url, &cookies[4], SHARE, BUSYBOX, "sleep 600").await.unwrap();
    wait_for_state(list, &fifth, &["queued"], Duration::from_secs(30)).await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(state(portal, &fifth), "queued");
    assert_eq!(containers_on(portal, L4), 4, "nothing more on the L4 than its shares");

    let board = admin_board(portal, &class.admin).await;
    let l4 = board["gpus"].as_array().unwrap().iter().find(|g| g["gpu"]["uuid"] == L4).expect("the L4 on the board");
    assert_eq!(l4["mode"], "4 capped shares (MPS)");
    assert_eq!(l4["free"], "0 of 4 shares");
    assert!(l4["guarantees"].as_str().unwrap_or_default().contains("5758 MiB"), "{l4}");

    assert!(portal.cli(&["session", "stop", &held[0]], "").contains("ended"));
    let next = wait_for_state(list, &fifth, &["ready"], Duration::from_secs(60)).await;
    assert!(container_env(&next).contains(&format!("NVIDIA_VISIBLE_DEVICES={L4}")));

    // Drained, the L4 places nothing: a share freed meanwhile stays free until it returns.
    portal.cli(&["gpu", "drain", "4"], "");
    assert!(portal.cli(&["session", "stop", &held[1]], "").contains("ended"));
    let again = claim_job(&portal.url, &cookies[0], SHARE, BUSYBOX, "sleep 600").await.unwrap();
    wait_for_state(list, &again, &["queued"], Duration::from_secs(30)).await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(state(portal, &again), "queued", "a drained GPU's free share is not handed out");
    portal.cli(&["gpu", "undrain", "4"], "");
    wait_for_state(list, &again, &["ready"], Duration::from_secs(60)).await;

    // A lab booked tomorrow keeps shares as it keeps MIG slices: never more than the GPU has.
    let tomorrow = tomorrow_utc();
    let client = client();
    let book = |slices: &str| {
        let body = format!("code=CS-101&profile={SHARE}&slices={slices}&date={tomorrow}&start=10:00&end=11:00&weeks=1");
        post(&client, &portal.url, Some(&class.admin), "book_lab", body)
    };
    let five = book("5").await;
    assert_eq!(five.status(), 400);
    let words = five.text().await.unwrap();
    assert!(words.contains("Only 4 of the 5 l4.24gb.1of4 slices"), "{words}");
    assert_eq!(book("2").await.status(), 200);
    let board = admin_board(portal, &class.admin).await;
    assert!(board["bookings"].to_string().contains(SHARE), "{}", board["bookings"]);

    for id in held.iter().skip(2).chain([&fifth, &again]) {
        portal.cli(&["session", "stop", id], "");
    }
}

/// Tomorrow's date in UTC, `YYYY-MM-DD`.
fn tomorrow_utc() -> String {
    let out = std::process::Command::new("date").args(["-u", "-d", "tomorrow", "+%F"]).output().expect("date runs");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

async fn launch_options(portal: &Portal, cookie: &str) -> Value {
    let resp = post(&client(), &portal.url, Some(cookie), "launch_options", String::new()).await;
    assert_eq!(resp.status(), 200);
    resp.json().await.unwrap()
}

async fn admin_board(portal: &Portal, admin: &str) -> Value {
    let resp = post(&client(), &portal.url, Some(admin), "read_gpus", String::new()).await;
    assert_eq!(resp.status(), 200);
    resp.json().await.unwrap()
}

fn option<'a>(courses: &'a Value, profile: &str) -> &'a Value {
    courses[0]["profiles"]
        .as_array()
        .and_then(|all| all.iter().find(|p| p["name"] == profile))
        .unwrap_or_else(|| panic!("{profile} offered in {courses}"))
}

fn container_env(session: &Value) -> String {
    let container = session["container"].as_str().expect("a container");
    docker(&["inspect", "--format", "{{range .Config.Env}}{{println .}}{{end}}", container])
}

/// This portal's containers the engine runs on GPU `uuid`.
fn containers_on(portal: &Portal, uuid: &str) -> usize {
    let mine: Vec<String> = sessions(portal).iter().filter_map(|s| s["container"].as_str().map(String::from)).collect();
    let running = docker(&["ps", "--format", "{{.Names}}", "--filter", &format!("label=org.slicehub.gpu={uuid}")]);
    running.lines().filter(|name| mine.iter().any(|m| m == name)).count()
}

fn docker(args: &[&str]) -> String {
    let out = std::process::Command::new("docker").args(args).output().expect("docker runs");
    String::from_utf8_lossy(&out.stdout).to_string()
}
