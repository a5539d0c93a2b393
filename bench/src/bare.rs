//! The control of the spawn benchmarks: the notebook image run with `docker run`, as the
//! portal would run it, without the portal.

use std::time::{Duration, Instant};

use slicehub_end2end::form::client;

pub const JUPYTERLAB: &str = "slicehub/jupyterlab:offline";

/// `docker run` of the image as the portal would run it, then polling its status API:
/// the time to ready, and the container's name (left running for the caller to remove).
pub async fn bare_spawn(n: usize) -> (f64, String) {
    let token = "bench-token-bench-token-bench-token-0000";
    let name = format!("bench-bare-{n}");
    let t = Instant::now();
    let out = std::process::Command::new("docker")
        .args([
            "run", "-d", "--name", &name, "-p", "127.0.0.1::8888", "--user", "1000:100",
            "-e", &format!("JUPYTER_TOKEN={token}"), "-e", "SLICEHUB_BASE_URL=/bare/",
            JUPYTERLAB, "slicehub-notebook",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // With 30 starting at once the engine may not report the port at once.
    let port = loop {
        let out = std::process::Command::new("docker").args(["port", &name, "8888/tcp"]).output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        if let Some(port) = text.lines().next().and_then(|l| l.trim().rsplit(':').next()?.parse::<u16>().ok()) {
            break port;
        }
        assert!(t.elapsed() < Duration::from_secs(120), "no port for {name}: {text}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let url = format!("http://127.0.0.1:{port}/bare/api/status");
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
