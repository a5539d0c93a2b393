//! Sessions through the Slurm pool (the test cluster of `scripts/slurm-cluster.sh`: two
//! slurmd nodes with seven 1g.10gb GRES, in containers on this machine) against the local
//! Docker path of the same portal:
//! - spawn, median of 5: claim → JupyterLab answering through the portal's proxy, for a
//!   course on the local engine and one on Slurm, alternating;
//! - 30 claims at once on the cluster (training jobs, `sleep`): how long the claims take to
//!   answer, until Slurm holds all 30, until the 7 that fit run, and what the 23 others show.
//!
//! cargo run --release -p slicehub-bench --bin slurm-spawn -- [path/to/slicehub]

use std::time::{Duration, Instant};

use slicehub_bench::process::median;
use slicehub_end2end::classroom::Classroom;
use slicehub_end2end::form::{base64, client, post, urlencode};
use slicehub_end2end::notebook::NotebookVisit;
use slicehub_end2end::slurm_cluster::SlurmCluster;
use slicehub_end2end::{workspace_root, Portal};

const JUPYTERLAB: &str = "slicehub/jupyterlab:offline";
const SLURM_COURSE: &str = "HPC-1";
const RUNS: usize = 5;
const AT_ONCE: usize = 30;

async fn sessions_of(portal: &Portal, cookie: &str) -> serde_json::Value {
    let resp = post(&client(), &portal.url, Some(cookie), "my_sessions", String::new()).await;
    resp.json().await.unwrap()
}

async fn claim(portal: &Portal, cookie: &str, course_id: u32, command: &str) -> String {
    let body = format!(
        "course_id={course_id}&profile=1g.10gb&image={}&command={}",
        urlencode(JUPYTERLAB),
        urlencode(command)
    );
    let resp = post(&client(), &portal.url, Some(cookie), "start_session", body).await;
    assert!(resp.status().is_success(), "{}", resp.text().await.unwrap());
    resp.json::<serde_json::Value>().await.unwrap()["id"].as_str().unwrap().to_string()
}

/// Claim → ready → `api/status` answering 200 through the proxy on the notebook's origin.
async fn spawn(portal: &Portal, cookie: &str, username: &str, course_id: u32) -> (String, f64) {
    let t = Instant::now();
    let id = claim(portal, cookie, course_id, "").await;
    loop {
        let list = sessions_of(portal, cookie).await;
        let me = list.as_array().unwrap().iter().find(|s| s["id"] == id.as_str()).unwrap().clone();
        if me["state"] == "ready" {
            break;
        }
        assert!(me["state"] != "failed" && me["state"] != "ended", "{me}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let base = format!("/user/{username}/{id}/");
    let mut visit = NotebookVisit::open(portal, cookie, &format!("{base}lab")).await;
    assert_eq!(visit.get(&format!("{base}api/status")).await.status(), 200);
    (id, t.elapsed().as_secs_f64())
}

async fn stop(portal: &Portal, cookie: &str, id: &str) {
    post(&client(), &portal.url, Some(cookie), "stop_session", format!("id={id}")).await;
}

#[tokio::main]
async fn main() {
    let bin = std::env::args()
        .nth(1)
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("target/release/slicehub"));
    let cluster = SlurmCluster::up();
    let names: Vec<String> = (0..AT_ONCE + 2).map(|i| format!("b{i:02}")).collect();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    // Each student's jobs run as their own cluster user: the administrator's links.
    let users_file = tempfile::NamedTempFile::new().expect("users file");
    std::fs::write(users_file.path(), names.join("\n")).expect("users file written");
    let users_path = users_file.path().to_str().expect("utf-8 path").to_string();
    let env = cluster.env(&[
        ("SLICEHUB_SLURM_COURSES", SLURM_COURSE),
        ("SLICEHUB_SLURM_USERS_FILE", users_path.as_str()),
        ("SLICEHUB_GPU_SIMULATED", "8 x H100-80GB"),
        ("SLICEHUB_LOG_LEVEL", "warn"),
    ]);
    let class = Classroom::start(&bin, &env).await;
    let portal = &class.portal;
    portal.cli(&["course", "add", SLURM_COURSE, "GPU cluster computing"], "");
    let cookies = class.enroll(&refs).await;
    for name in &refs {
        portal.cli(&["slurm", "link", name], "");
    }
    cluster.add_users(&refs);
    let csv: String = std::iter::once("username,display name,email\n".to_string())
        .chain(names.iter().map(|n| format!("{n},{n},\n")))
        .collect();
    let body = format!("code={SLURM_COURSE}&csv_base64={}", urlencode(&base64(csv.as_bytes())));
    let resp = post(&client(), &portal.url, Some(&class.admin), "import_roster", body).await;
    assert!(resp.status().is_success(), "{}", resp.text().await.unwrap());

    let (mut local, mut slurm) = (Vec::new(), Vec::new());
    for _ in 0..RUNS {
        let (id, s) = spawn(portal, &cookies[0], &names[0], 1).await;
        local.push(s);
        stop(portal, &cookies[0], &id).await;
        let (id, s) = spawn(portal, &cookies[1], &names[1], 2).await;
        slurm.push(s);
        stop(portal, &cookies[1], &id).await;
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    let (l, s) = (median(local) * 1000.0, median(slurm) * 1000.0);
    println!(
        "spawn to JupyterLab through the proxy, median of {RUNS}: local Docker {l:.0} ms, Slurm job {s:.0} ms, {:+.0} ms ({:.2}x)",
        s - l,
        s / l
    );

    // 30 claims at once on the cluster.
    let t = Instant::now();
    let claims: Vec<_> = (0..AT_ONCE)
        .map(|i| {
            let (url, cookie) = (portal.url.clone(), cookies[2 + i].clone());
            tokio::spawn(async move {
                let started = Instant::now();
                let body = format!("course_id=2&profile=1g.10gb&image={}&command=sleep+600", urlencode(JUPYTERLAB));
                let resp = post(&client(), &url, Some(&cookie), "start_session", body).await;
                assert!(resp.status().is_success(), "{}", resp.text().await.unwrap());
                started.elapsed().as_secs_f64()
            })
        })
        .collect();
    let mut answered = Vec::new();
    for c in claims {
        answered.push(c.await.unwrap());
    }
    let all_answered = t.elapsed().as_secs_f64();
    let in_slurm = loop {
        if cluster.live_jobs().len() >= AT_ONCE {
            break t.elapsed().as_secs_f64();
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    // Slurm's backfill plans one day ahead (bf_window): claims further back wait with its
    // reason but no estimated start.
    let (ready_at, waiting, estimated) = loop {
        let (mut ready, mut waiting, mut estimated) = (0, 0, 0);
        for cookie in &cookies[2..] {
            let list = sessions_of(portal, cookie).await;
            let me = &list[0];
            if me["state"] == "ready" {
                ready += 1;
            }
            if me["state"] == "queued" && me["cluster_wait"]["reason"].is_string() {
                waiting += 1;
            }
            if me["cluster_wait"]["expected_start_ms"].is_i64() {
                estimated += 1;
            }
        }
        if ready == 7 && waiting == AT_ONCE - 7 && estimated > 0 {
            break (t.elapsed().as_secs_f64(), waiting, estimated);
        }
        assert!(t.elapsed() < Duration::from_secs(120), "{ready} ready, {waiting} waiting, {estimated} with an estimate");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    answered.sort_by(|a, b| a.partial_cmp(b).unwrap());
    println!(
        "{AT_ONCE} claims at once on the cluster: claims answered in median {:.0} ms (slowest {:.0} ms, all after {:.1} s); \
         all {AT_ONCE} in Slurm after {in_slurm:.1} s; 7 running and {waiting} waiting with Slurm's reason after {ready_at:.1} s \
         ({estimated} of them with Slurm's estimated start)",
        median(answered.clone()) * 1000.0,
        answered.last().unwrap() * 1000.0,
        all_answered
    );
    for cookie in &cookies[2..] {
        let list = sessions_of(portal, cookie).await;
        stop(portal, cookie, list[0]["id"].as_str().unwrap()).await;
    }
}
