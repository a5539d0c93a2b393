//! The control of the spawn benchmarks: the notebook image run with `docker run`, as the
//! portal would run it, without the portal.

use std::time::{Duration, Instant};

use slicehub_end2end::form::client;

pub const JUPYTERLAB: &str = "slicehub/jupyterlab:offline";

/// The network the bare containers run on, as the portal's run on its session network
/// (this engine may have no default bridge).
const NETWORK: &str = "slicehub-bench-bare";

/// `docker run` of the image as the portal would run it, then polling its status API at
/// the container's address: the time to ready, and the container's name (left running for
/// the caller to remove).
pub async fn bare_spawn(n: usize) -> (f64, String) {
    let token = "bench-token-bench-token-bench-token-0000";
    let name = format!("bench-bare-{n}");
    let _ = std::process::Command::new("docker").args(["network", "create", NETWORK]).output();
    let _ = std::process::Command::new("docker").args(["rm", "-f", &name]).output();
    let t = Instant::now();
    let out = std::process::Command::new("docker")
        .args([
            "run", "-d", "--name", &name, "--network", NETWORK, "--user", "1000:100",
            "-e", &format!("SLICEHUB_TOKEN_SHA256={}", slicehub_core::auth::token_sha256(token)), "-e", "SLICEHUB_BASE_URL=/bare/",
            JUPYTERLAB, "slicehub-notebook",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let out = std::process::Command::new("docker")
        .args(["inspect", "-f", "{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}", &name])
        .output()
        .unwrap();
    let url = format!("http://{}:8888/bare/api/status", String::from_utf8_lossy(&out.stdout).trim());
    loop {
        if let Ok(r) = client().get(&url).header("authorization", format!("token {token}")).send().await {
            if r.status() == 200 {
                break;
            }
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    (t.elapsed().as_secs_f64(), name)
}

pub fn remove(name: &str) {
    std::process::Command::new("docker").args(["rm", "-f", name]).output().unwrap();
}
