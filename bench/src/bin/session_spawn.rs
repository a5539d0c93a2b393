//! Sessions through a real portal on the real Docker engine (simulated GPUs):
//! - spawn overhead: start → ready through the portal, against a bare `docker run` of the
//!   same JupyterLab image plus polling its status API;
//! - 30 notebooks started at once, against 30 bare `docker run`s at once (the control),
//!   with the portal's CPU seconds during the burst;
//! - HTTP throughput and WebSocket round trip through the portal on the notebook's own
//!   origin (`SESSION.nb.localhost`, with its grant and JupyterLab's cookies) against the
//!   container directly at its session-network address;
//! - the portal's RSS with 50 running sessions.
//!
//! cargo run --release -p slicehub-bench --bin session-spawn -- [path/to/slicehub]

use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use slicehub_bench::bare::{bare_spawn, remove, JUPYTERLAB};
use slicehub_bench::process::{cpu_seconds, median, rss_kib, rss_parts_kib};
use slicehub_end2end::classroom::{Classroom, COURSE};
use slicehub_end2end::form::{client, post, urlencode};
use slicehub_end2end::notebook::NotebookVisit;
use slicehub_end2end::{workspace_root, Portal};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::Message;

const BUSYBOX: &str = "slicehub/busybox:offline";
const RUNS: usize = 11;

struct Bench {
    portal: Portal,
    students: Vec<String>,
}

impl Bench {
    async fn start(bin: &std::path::Path, students: usize) -> Bench {
        let class = Classroom::start(
            bin,
            &[
                ("SLICEHUB_GPU_SIMULATED", "8 x H100-80GB"),
                ("SLICEHUB_LOG_LEVEL", "warn"),
                ("SLICEHUB_SESSIONS_IMAGES", BUSYBOX),
            ],
        )
        .await;
        class.portal.cli(
            &["course", "policy", COURSE, "--images", &format!("{JUPYTERLAB},{BUSYBOX}")],
            "",
        );
        let names: Vec<String> = (0..students).map(|i| format!("s{i:02}")).collect();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let cookies = class.enroll(&names).await;
        Bench { portal: class.portal, students: cookies }
    }

    /// Starts a session for student `i` and returns its id once ready, with the time taken.
    async fn spawn(&self, i: usize, image: &str, command: &str) -> (String, f64) {
        let t = Instant::now();
        let body = format!(
            "course_id=1&profile=1g.10gb&image={}&command={}",
            urlencode(image),
            urlencode(command)
        );
        let resp = post(&client(), &self.portal.url, Some(&self.students[i]), "start_session", body).await;
        assert!(resp.status().is_success(), "{}", resp.text().await.unwrap());
        let id = resp.json::<serde_json::Value>().await.unwrap()["id"].as_str().unwrap().to_string();
        loop {
            let resp = post(&client(), &self.portal.url, Some(&self.students[i]), "my_sessions", String::new()).await;
            let list: serde_json::Value = resp.json().await.unwrap();
            let state = list[0]["state"].as_str().unwrap_or("").to_string();
            if state == "ready" {
                return (id, t.elapsed().as_secs_f64());
            }
            assert!(state != "failed" && state != "ended", "{list}");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    async fn stop(&self, i: usize, id: &str) {
        post(&client(), &self.portal.url, Some(&self.students[i]), "stop_session", format!("id={id}")).await;
    }

    /// JupyterLab's `IP:8888` on the session network.
    fn address_of(&self, id: &str) -> String {
        let out = std::process::Command::new("docker")
            .args(["inspect", "-f", "{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}", &format!("slicehub-{id}")])
            .output()
            .unwrap();
        format!("{}:8888", String::from_utf8_lossy(&out.stdout).trim())
    }

    /// The session's token, from the portal's database (the container holds only its hash).
    fn token_of(&self, id: &str) -> String {
        let db = self.portal.dir.path().join("data/slicehub.db");
        let out = std::process::Command::new("python3")
            .args([
                "-c",
                "import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute('SELECT token FROM gpu_sessions WHERE id = ?', (sys.argv[2],)).fetchone()[0])",
            ])
            .arg(&db)
            .arg(id)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }
}

/// Requests per second of `GET url` with 16 connections for 5 s.
async fn throughput(client: reqwest::Client, url: String, headers: Vec<(&'static str, String)>) -> f64 {
    let until = Instant::now() + Duration::from_secs(5);
    let tasks: Vec<_> = (0..16)
        .map(|_| {
            let client = client.clone();
            let url = url.clone();
            let headers = headers.clone();
            tokio::spawn(async move {
                let mut n = 0u64;
                while Instant::now() < until {
                    let mut r = client.get(&url);
                    for (k, v) in &headers {
                        r = r.header(*k, v);
                    }
                    let resp = r.send().await.unwrap();
                    assert_eq!(resp.status(), 200);
                    resp.bytes().await.unwrap();
                    n += 1;
                }
                n
            })
        })
        .collect();
    let mut total = 0;
    for t in tasks {
        total += t.await.unwrap();
    }
    total as f64 / 5.0
}

/// Median round trip of `kernel_info_request` over the kernel channel WebSocket, in ms.
/// `connect_to` is where the TCP connection goes (`*.localhost` names resolve in browsers,
/// not in the system resolver).
async fn ws_rtt(url: String, connect_to: &str, headers: Vec<(&'static str, String)>, session: &str) -> f64 {
    let mut request = url.into_client_request().unwrap();
    for (k, v) in headers {
        request.headers_mut().insert(k, v.parse().unwrap());
    }
    let stream = tokio::net::TcpStream::connect(connect_to).await.unwrap();
    stream.set_nodelay(true).unwrap();
    let (mut socket, _) = tokio::time::timeout(Duration::from_secs(60), tokio_tungstenite::client_async(request, stream))
        .await
        .expect("the kernel channel opens within 60 s")
        .unwrap();
    let mut rtts = Vec::new();
    for n in 0..300 {
        let msg_id = format!("rtt-{n}");
        let msg = serde_json::json!({
            "header": {"msg_id": msg_id, "username": "bench", "session": session,
                       "msg_type": "kernel_info_request", "version": "5.3", "date": "2026-11-21T00:00:00Z"},
            "parent_header": {}, "metadata": {}, "content": {}, "buffers": [], "channel": "shell",
        });
        let t = Instant::now();
        socket.send(Message::text(msg.to_string())).await.unwrap();
        loop {
            let next = tokio::time::timeout(Duration::from_secs(30), socket.next()).await;
            let text = match next {
                Ok(Some(Ok(Message::Text(text)))) => text,
                Ok(Some(Ok(_))) => continue,
                other => panic!("kernel channel: no reply to {msg_id}: {other:?}"),
            };
            let reply: serde_json::Value = serde_json::from_str(&text).unwrap();
            if reply["parent_header"]["msg_id"] == msg_id.as_str() && reply["msg_type"] == "kernel_info_reply" {
                break;
            }
        }
        if n >= 20 {
            rtts.push(t.elapsed().as_secs_f64() * 1000.0);
        }
    }
    socket.close(None).await.ok();
    median(rtts)
}

/// The floor for any proxy in user space: a relay on its own runtime (as another process
/// would have) that copies bytes between the client and `upstream`, nothing else.
/// Returns the address it listens on.
fn tcp_relay(upstream: &str) -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap().to_string();
    listener.set_nonblocking(true).unwrap();
    let upstream = upstream.to_string();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            loop {
                let Ok((mut client, _)) = listener.accept().await else { continue };
                let upstream = upstream.clone();
                tokio::spawn(async move {
                    let Ok(mut server) = tokio::net::TcpStream::connect(&upstream).await else { return };
                    let _ = client.set_nodelay(true);
                    let _ = server.set_nodelay(true);
                    let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                });
            }
        });
    });
    address
}

#[tokio::main]
async fn main() {
    let bin = std::env::args()
        .nth(1)
        .map(Into::into)
        .unwrap_or_else(|| workspace_root().join("target/release/slicehub"));
    let bench = Bench::start(&bin, 50).await;
    println!("portal: {} (8 x simulated H100-80GB, SQLite)", bin.display());

    // 1. Spawn overhead, one at a time.
    let mut bare = Vec::new();
    let mut portal = Vec::new();
    for n in 0..RUNS {
        let (took, name) = bare_spawn(n).await;
        remove(&name);
        bare.push(took);
        let (id, took) = bench.spawn(0, JUPYTERLAB, "").await;
        portal.push(took);
        bench.stop(0, &id).await;
    }
    let paired = median(portal.iter().zip(&bare).map(|(p, b)| p / b).collect());
    let (bare_m, portal_m) = (median(bare), median(portal));
    println!(
        "spawn, median of {RUNS}: bare docker run + status {:.0} ms, portal start→ready {:.0} ms, overhead {:+.0} ms ({:.2}x; median of each portal spawn over the bare one just before it {paired:.2}x)",
        bare_m * 1000.0, portal_m * 1000.0, (portal_m - bare_m) * 1000.0, portal_m / bare_m
    );

    // 2. 30 at once (BENCH_AT_ONCE=N for fewer), after the control: as many bare
    // `docker run`s at once, each polled until JupyterLab answers.
    let at_once: usize = std::env::var("BENCH_AT_ONCE").ok().and_then(|v| v.parse().ok()).unwrap_or(30);
    let t = Instant::now();
    let bare_burst = futures_util::future::join_all((0..at_once).map(|i| bare_spawn(100 + i))).await;
    let bare_all = t.elapsed().as_secs_f64();
    for (_, name) in &bare_burst {
        remove(name);
    }
    let cpu_before = cpu_seconds(bench.portal.pid());
    let t = Instant::now();
    let spawns: Vec<_> = (0..at_once)
        .map(|i| {
            let b = &bench;
            async move { b.spawn(i, JUPYTERLAB, "").await }
        })
        .collect();
    let ready = futures_util::future::join_all(spawns).await;
    let all = t.elapsed().as_secs_f64();
    let cpu = cpu_seconds(bench.portal.pid()) - cpu_before;
    println!(
        "{at_once} notebooks at once: {at_once} bare docker runs all ready after {bare_all:.1} s; through the portal after {all:.1} s ({:.2}x the control, {:.1}x one spawn); portal CPU during the burst {cpu:.1} s ({:.2} s per spawn)",
        all / bare_all,
        all / portal_m,
        cpu / at_once as f64
    );

    // 3. Proxy on the notebook's origin against direct, on one of them.
    let (id, _) = &ready[0];
    let address = bench.address_of(id);
    let token = bench.token_of(id);
    for (i, (id, _)) in ready.iter().enumerate().skip(1) {
        bench.stop(i, id).await;
    }
    let base = format!("/user/s00/{id}/");
    let visit = NotebookVisit::open(&bench.portal, &bench.students[0], &format!("{base}lab")).await;
    let cookies = visit.cookie_header();
    let direct = throughput(
        reqwest::Client::new(),
        format!("http://{address}{base}api/status"),
        vec![("authorization", format!("token {token}"))],
    )
    .await;
    let proxied = throughput(
        visit.client.clone(),
        format!("{}{base}api/status", visit.origin),
        vec![("cookie", cookies.clone())],
    )
    .await;
    println!(
        "HTTP GET api/status, 16 connections, 5 s: direct {direct:.0} req/s, through the portal on the notebook origin {proxied:.0} req/s ({:.2}x)",
        proxied / direct
    );
    let kernel: serde_json::Value = visit
        .post_json(&format!("{base}api/kernels"), &serde_json::json!({"name": "python3"}), &visit.origin, true)
        .await
        .json()
        .await
        .expect("starting a kernel through the portal");
    let channels = format!("{base}api/kernels/{}/channels", kernel["id"].as_str().unwrap());
    let portal_addr = bench.portal.url.trim_start_matches("http://").to_string();
    let relay = tcp_relay(&address);
    // Three rounds, each path in turn, so a busy moment of the shared machine falls on all.
    let (mut direct, mut proxied, mut relayed) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..3 {
        let tag = |path: &str| format!("bench-{path}-{round}");
        direct.push(
            ws_rtt(format!("ws://{address}{channels}"), &address, vec![("authorization", format!("token {token}"))], &tag("direct"))
                .await,
        );
        proxied.push(
            ws_rtt(
                format!("{}{channels}", visit.origin.replacen("http://", "ws://", 1)),
                &portal_addr,
                vec![("cookie", cookies.clone()), ("origin", visit.origin.clone())],
                &tag("proxied"),
            )
            .await,
        );
        relayed.push(
            ws_rtt(format!("ws://{address}{channels}"), &relay, vec![("authorization", format!("token {token}"))], &tag("relayed"))
                .await,
        );
    }
    let rounds = |v: &[f64]| v.iter().map(|x| format!("{x:.2}")).collect::<Vec<_>>().join(" / ");
    let (direct_rtt, proxied_rtt, relayed_rtt) = (median(direct.clone()), median(proxied.clone()), median(relayed.clone()));
    println!(
        "WebSocket kernel_info round trip, median of 280, 3 rounds: direct {} ms, through the portal on the notebook origin {} ms, through a bare TCP relay (control) {} ms; median added: portal {:.2} ms, relay {:.2} ms",
        rounds(&direct),
        rounds(&proxied),
        rounds(&relayed),
        proxied_rtt - direct_rtt,
        relayed_rtt - direct_rtt
    );
    bench.stop(0, id).await;

    // 4. RSS with 50 running sessions (training jobs: the portal's side is the same).
    let (idle, _) = rss_kib(bench.portal.pid());
    let (idle_anon, idle_file) = rss_parts_kib(bench.portal.pid());
    let spawns: Vec<_> = (0..50)
        .map(|i| {
            let b = &bench;
            async move { b.spawn(i, BUSYBOX, "sleep 600").await }
        })
        .collect();
    let running = futures_util::future::join_all(spawns).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let (rss, peak) = rss_kib(bench.portal.pid());
    let (anon, file) = rss_parts_kib(bench.portal.pid());
    let mib = |kib: u64| kib as f64 / 1024.0;
    println!(
        "portal RSS: {:.1} MiB with no session (anonymous {:.1}, file-backed {:.1}), {:.1} MiB with 50 running (anonymous {:.1}, file-backed {:.1}; peak {:.1} MiB)",
        mib(idle), mib(idle_anon), mib(idle_file), mib(rss), mib(anon), mib(file), mib(peak)
    );
    for (i, (id, _)) in running.iter().enumerate() {
        bench.stop(i, id).await;
    }
}
