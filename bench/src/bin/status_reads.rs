//! What following sessions costs the portal:
//! - status reads: 16 keep-alive clients asking `my_sessions` for 30 students (each with a
//!   running job) as fast as they can for 5 s; reads per second, and the portal's CPU per
//!   read and reads per CPU-second (one core); then the same list through the REST API
//!   (`GET /api/v1/sessions` with each student's token), against the page's read;
//! - 30 notebooks started at once with 30 "browsers" following over server-sent events as
//!   the sessions page does (one read when it opens, then the list each event brings); the portal's
//!   CPU seconds per spawn, and the wall time against 30 bare `docker run`s of the same
//!   image at once (the control, run first).
//!
//! cargo run --release -p slicehub-bench --bin status-reads -- [path/to/slicehub]

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use slicehub_bench::bare::{bare_spawn, remove, JUPYTERLAB};
use slicehub_bench::process::cpu_seconds;
use slicehub_end2end::classroom::{Classroom, COURSE};
use slicehub_end2end::form::{post, urlencode};
use slicehub_end2end::{workspace_root, Portal};

const BUSYBOX: &str = "slicehub/busybox:offline";
const STUDENTS: usize = 30;

fn keep_alive_client() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .pool_max_idle_per_host(64)
        .build()
        .unwrap()
}

async fn start(portal: &Portal, client: &reqwest::Client, cookie: &str, image: &str, command: &str) -> String {
    let body = format!(
        "course_id=1&profile=1g.10gb&image={}&command={}",
        urlencode(image),
        urlencode(command)
    );
    let resp = post(client, &portal.url, Some(cookie), "start_session", body).await;
    assert!(resp.status().is_success(), "{}", resp.text().await.unwrap());
    resp.json::<serde_json::Value>().await.unwrap()["id"].as_str().unwrap().to_string()
}

async fn first_state(portal: &Portal, client: &reqwest::Client, cookie: &str) -> String {
    let resp = post(client, &portal.url, Some(cookie), "my_sessions", String::new()).await;
    let list: serde_json::Value = resp.json().await.unwrap();
    list[0]["state"].as_str().unwrap_or("").to_string()
}

async fn stop_all(portal: &Portal, client: &reqwest::Client, cookies: &[String], ids: &[String]) {
    for (cookie, id) in cookies.iter().zip(ids) {
        post(client, &portal.url, Some(cookie), "stop_session", format!("id={id}")).await;
    }
}

/// Follows the student's event stream as the sessions page does: one read when it opens,
/// then the list each event brings, until the first session is ready. Returns the reads
/// and the events.
async fn follow_until_ready(portal: &Portal, client: &reqwest::Client, cookie: &str) -> (u64, u64) {
    let mut stream = client
        .get(format!("{}/api/sessions/events", portal.url))
        .header("cookie", cookie)
        .send()
        .await
        .unwrap();
    let (mut reads, mut events) = (1, 0);
    if first_state(portal, client, cookie).await == "ready" {
        return (reads, events);
    }
    // Bytes until an event is whole: a chunk may end inside a character.
    let mut bytes: Vec<u8> = Vec::new();
    while let Ok(Some(chunk)) = stream.chunk().await {
        bytes.extend_from_slice(&chunk);
        while let Some(end) = bytes.windows(2).position(|w| w == b"\n\n") {
            let event = String::from_utf8_lossy(&bytes.drain(..end + 2).collect::<Vec<u8>>()).into_owned();
            let Some(data) = event.lines().find_map(|l| l.strip_prefix("data:")) else {
                continue;
            };
            events += 1;
            let data: serde_json::Value = serde_json::from_str(data.trim()).unwrap();
            let state = match data["sessions"][0]["state"].as_str() {
                Some(state) => state.to_string(),
                // Sent without the list (events were missed): the page reads it.
                None => {
                    reads += 1;
                    first_state(portal, client, cookie).await
                }
            };
            match state.as_str() {
                "ready" => return (reads, events),
                "failed" | "ended" => panic!("a session failed"),
                _ => {}
            }
        }
    }
    panic!("the event stream ended");
}

/// The control: `n` bare `docker run`s of the notebook image at once, each polled until
/// JupyterLab answers; the wall time.
async fn bare_burst(n: usize) -> f64 {
    let t = Instant::now();
    let runs = futures_util::future::join_all((0..n).map(|i| bare_spawn(200 + i))).await;
    let took = t.elapsed().as_secs_f64();
    for (_, name) in &runs {
        remove(name);
    }
    took
}

#[derive(Clone, Copy)]
enum Request {
    /// The sessions list, as the page reads it.
    StatusRead,
    /// The cheapest request through the same middleware and login: a cached health report.
    Health,
    /// The sessions list through the REST API, with a personal access token.
    ApiRead,
}

/// 16 keep-alive clients send `request` as fast as they can for 5 s, each as one student
/// after another: requests per second, and the portal's CPU per request in µs.
async fn hammer(portal: &Arc<Portal>, cookies: &Arc<Vec<String>>, tokens: &Arc<Vec<String>>, client: &reqwest::Client, request: Request) -> (f64, f64) {
    let count = Arc::new(AtomicU64::new(0));
    let until = Instant::now() + Duration::from_secs(5);
    let cpu_before = cpu_seconds(portal.pid());
    let workers: Vec<_> = (0..16)
        .map(|w| {
            let (portal, cookies, tokens, client, count) = (portal.clone(), cookies.clone(), tokens.clone(), client.clone(), count.clone());
            tokio::spawn(async move {
                let mut i = w;
                while Instant::now() < until {
                    let cookie = &cookies[i % STUDENTS];
                    match request {
                        Request::StatusRead => assert_eq!(first_state(&portal, &client, cookie).await, "ready"),
                        Request::ApiRead => {
                            let resp = client.get(format!("{}/api/v1/sessions", portal.url)).bearer_auth(&tokens[i % STUDENTS]).send().await.unwrap();
                            let list: serde_json::Value = resp.json().await.unwrap();
                            assert_eq!(list[0]["state"], "ready", "{list}");
                        }
                        Request::Health => {
                            let resp = client.get(format!("{}/healthz", portal.url)).header("cookie", cookie).send().await.unwrap();
                            assert!(resp.status().is_success());
                            resp.bytes().await.unwrap();
                        }
                    }
                    count.fetch_add(1, Ordering::Relaxed);
                    i += 16;
                }
            })
        })
        .collect();
    futures_util::future::join_all(workers).await;
    let cpu = cpu_seconds(portal.pid()) - cpu_before;
    let n = count.load(Ordering::Relaxed) as f64;
    (n / 5.0, cpu * 1e6 / n.max(1.0))
}

#[tokio::main]
async fn main() {
    let bin = std::env::args()
        .nth(1)
        .map(Into::into)
        .unwrap_or_else(|| workspace_root().join("target/release/slicehub"));
    let class = Classroom::start(
        &bin,
        &[
                ("SLICEHUB_GPU_SIMULATED", "8 x H100-80GB"),
                ("SLICEHUB_LOG_LEVEL", "warn"),
                ("SLICEHUB_SESSIONS_IMAGES", BUSYBOX),
                ("SLICEHUB_SERVER_API_REQUESTS_PER_MINUTE", "60000"),
                ("SLICEHUB_SERVER_API_BURST", "10000"),
            ],
    )
    .await;
    class.portal.cli(&["course", "policy", COURSE, "--images", &format!("{JUPYTERLAB},{BUSYBOX}")], "");
    let names: Vec<String> = (0..STUDENTS).map(|i| format!("r{i:02}")).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let cookies = Arc::new(class.enroll(&names).await);
    let portal = Arc::new(class.portal);
    let client = keep_alive_client();
    println!("portal: {} (8 x simulated H100-80GB, SQLite)", bin.display());

    // 1. Status reads with a running job each.
    let mut jobs = Vec::new();
    for cookie in cookies.iter() {
        jobs.push(start(&portal, &client, cookie, BUSYBOX, "sleep 600").await);
    }
    for cookie in cookies.iter() {
        while first_state(&portal, &client, cookie).await != "ready" {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    // Each student's token, for the REST API's read (paced far above what 16 clients ask).
    let tokens: Arc<Vec<String>> = Arc::new(
        names
            .iter()
            .map(|n| portal.cli(&["token", "create", n, "--name", "bench", "--scope", "read"], "").lines().next().unwrap_or_default().to_string())
            .collect(),
    );
    let (per_second, micros) = hammer(&portal, &cookies, &tokens, &client, Request::StatusRead).await;
    println!(
        "status reads (my_sessions), 16 clients, 5 s: {per_second:.0} reads/s; portal CPU {micros:.0} µs per read, {:.0} reads per CPU-second",
        1e6 / micros
    );
    let (api_per_second, api_micros) = hammer(&portal, &cookies, &tokens, &client, Request::ApiRead).await;
    println!(
        "the same list through the REST API (GET /api/v1/sessions, a token each), 16 clients, 5 s: {api_per_second:.0} reads/s; portal CPU {api_micros:.0} µs per read ({:+.0} µs against the page's read)",
        api_micros - micros
    );
    let (per_second, floor) = hammer(&portal, &cookies, &tokens, &client, Request::Health).await;
    println!(
        "control: GET /healthz with the same logins, 16 clients, 5 s: {per_second:.0} requests/s; portal CPU {floor:.0} µs per request (the status read costs {:.0} µs more)",
        micros - floor
    );
    stop_all(&portal, &client, &cookies, &jobs).await;

    // 2. 30 notebooks at once, followed over server-sent events, after the control.
    let at_once: usize = std::env::var("BENCH_AT_ONCE").ok().and_then(|v| v.parse().ok()).unwrap_or(STUDENTS);
    let bare = bare_burst(at_once).await;
    let cpu_before = cpu_seconds(portal.pid());
    let t = Instant::now();
    let mut ids = Vec::new();
    for cookie in cookies.iter().take(at_once) {
        ids.push(start(&portal, &client, cookie, JUPYTERLAB, "").await);
    }
    let follows: Vec<_> = cookies
        .iter()
        .take(at_once)
        .map(|cookie| follow_until_ready(&portal, &client, cookie))
        .collect();
    let (reads, events) = futures_util::future::join_all(follows)
        .await
        .into_iter()
        .fold((0, 0), |(r, e), (reads, events)| (r + reads, e + events));
    let all = t.elapsed().as_secs_f64();
    let cpu = cpu_seconds(portal.pid()) - cpu_before;
    println!(
        "{at_once} notebooks at once, followed over SSE ({events} events, {reads} reads): control {bare:.1} s, through the portal {all:.1} s ({:.2}x); portal CPU {cpu:.2} s ({:.3} s per spawn)",
        all / bare,
        cpu / at_once as f64
    );
    stop_all(&portal, &client, &cookies, &ids).await;
}
