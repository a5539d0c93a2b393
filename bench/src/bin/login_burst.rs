//! N sign-ins arriving at once at a real portal (debug or release binary, SQLite):
//! prints p50/p95/max latency, how many succeeded, and the portal's peak RSS.
//!
//! cargo run --release -p slicehub-bench --bin login-burst -- [N] [path/to/slicehub]

use std::time::{Duration, Instant};

use slicehub_end2end::form::{base64, client, post, sign_in, urlencode};
use slicehub_end2end::{workspace_root, Portal};

const ADMIN_PASSWORD: &str = "bench-admin-password";

#[tokio::main]
async fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(300);
    let bin = args
        .next()
        .map(Into::into)
        .unwrap_or_else(|| workspace_root().join("target/release/slicehub"));
    let portal = Portal::start(&bin, &[("SLICEHUB_ADMIN_PASSWORD", ADMIN_PASSWORD)]).await;
    let client = client();

    // N students with known passwords, through one roster import.
    portal.cli(&["course", "add", "BENCH-1", "Login burst"], "");
    let admin = sign_in(&client, &portal.url, "admin", ADMIN_PASSWORD)
        .await
        .expect("admin signs in");
    let mut csv = String::from("username,display name,email,password\n");
    for i in 0..n {
        csv.push_str(&format!("student{i},Student {i},,password-of-{i}\n"));
    }
    let started = Instant::now();
    let body = format!(
        "code=BENCH-1&csv_base64={}",
        urlencode(&base64(csv.as_bytes()))
    );
    let resp = post(&client, &portal.url, Some(&admin), "import_roster", body).await;
    assert!(
        resp.status().is_success(),
        "roster import: {}",
        resp.text().await.unwrap()
    );
    println!(
        "created {n} accounts by roster import in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let rss_before = peak_rss_kib(portal.pid());

    let tasks: Vec<_> = (0..n)
        .map(|i| {
            let client = client.clone();
            let url = portal.url.clone();
            tokio::spawn(async move {
                let t = Instant::now();
                let cookie = sign_in(
                    &client,
                    &url,
                    &format!("student{i}"),
                    &format!("password-of-{i}"),
                )
                .await;
                (t.elapsed(), cookie.is_some())
            })
        })
        .collect();
    let wall = Instant::now();
    let mut latencies = Vec::new();
    let mut ok = 0;
    for task in tasks {
        let (elapsed, signed_in) = task.await.unwrap();
        latencies.push(elapsed);
        ok += usize::from(signed_in);
    }
    let wall = wall.elapsed();
    latencies.sort();
    let pct = |p: f64| latencies[((latencies.len() as f64 * p).ceil() as usize).saturating_sub(1)];
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "{n} sign-ins at once: {ok} succeeded in {:.2} s",
        wall.as_secs_f64()
    );
    println!(
        "latency p50 {:.0} ms, p95 {:.0} ms, max {:.0} ms",
        ms(pct(0.50)),
        ms(pct(0.95)),
        ms(pct(1.0))
    );
    println!(
        "portal peak RSS {:.1} MiB (before the burst {:.1} MiB)",
        peak_rss_kib(portal.pid()) as f64 / 1024.0,
        rss_before as f64 / 1024.0
    );
}

/// The kernel's record of the process's highest resident set size (VmHWM), in KiB.
fn peak_rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}
