//! A relay in front of slurmrestd that can play a controller failing over: while on, the
//! job list comes back empty and a job asked for by id answers 500 "Unable to contact
//! slurm controller", as slurmrestd does while slurmctld is away. It can also play Slurm
//! having forgotten one job (`MinJobAge` passed): that job is left out of the list and
//! asked for by id answers "Invalid job id specified". It can show a node with other GRES
//! than Slurm has for it (crafted entries, to test what could reach a job's `--gres`).
//! Everything else goes through unchanged, one request per upstream connection.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

pub struct SlurmFailover {
    /// What the portal's `slurm.url` names instead of slurmrestd.
    pub url: String,
    failing: Arc<AtomicBool>,
    /// The job Slurm plays as forgotten (0: none).
    forgotten: Arc<AtomicU64>,
    gres: Arc<GresPlay>,
}

/// The node GRES played.
#[derive(Default)]
struct GresPlay {
    /// Node name, its `gres` and `gres_used` as slurmrestd would give them.
    nodes: Mutex<Vec<(String, String, String)>>,
}

impl SlurmFailover {
    /// A relay to `upstream` (`http://host:port`).
    pub async fn start(upstream: &str) -> SlurmFailover {
        let upstream = upstream.trim_start_matches("http://").trim_end_matches('/').to_string();
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("relay port");
        let url = format!("http://{}", listener.local_addr().unwrap());
        let failing = Arc::new(AtomicBool::new(false));
        let forgotten = Arc::new(AtomicU64::new(0));
        let gres = Arc::new(GresPlay::default());
        let (shared, forgets, plays) = (failing.clone(), forgotten.clone(), gres.clone());
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                tokio::spawn(relay(client, upstream.clone(), shared.clone(), forgets.clone(), plays.clone()));
            }
        });
        SlurmFailover { url, failing, forgotten, gres }
    }

    /// Node `node` answers with these `gres` and `gres_used` from now on (any text: a
    /// crafted one too).
    pub fn node_gres(&self, node: &str, gres: &str, used: &str) {
        let mut nodes = self.gres.nodes.lock().unwrap();
        nodes.retain(|(n, _, _)| n != node);
        nodes.push((node.to_string(), gres.to_string(), used.to_string()));
    }

    pub fn failing(&self, on: bool) {
        self.failing.store(on, Ordering::SeqCst);
    }

    /// Slurm plays `job` as forgotten from now on (`None`: remembers every job again).
    pub fn forget(&self, job: Option<u64>) {
        self.forgotten.store(job.unwrap_or(0), Ordering::SeqCst);
    }
}

async fn answer(client: &mut TcpStream, status: &str, body: &str) {
    let answer = format!(
        "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = client.write_all(answer.as_bytes()).await;
}

async fn relay(
    mut client: TcpStream,
    upstream: String,
    failing: Arc<AtomicBool>,
    forgotten: Arc<AtomicU64>,
    gres: Arc<GresPlay>,
) {
    let mut buf = Vec::new();
    let head_end = loop {
        let mut chunk = [0u8; 4096];
        let Ok(n) = client.read(&mut chunk).await else { return };
        if n == 0 {
            return;
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i;
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
    let request_line = head.lines().next().unwrap_or_default().to_string();
    if failing.load(Ordering::SeqCst) && request_line.starts_with("GET ") {
        let path = request_line.split(' ').nth(1).unwrap_or_default();
        let canned = if path.ends_with("/jobs") {
            Some(("200 OK", r#"{"errors":[],"jobs":[]}"#))
        } else if path.contains("/job/") {
            Some((
                "500 Internal Server Error",
                r#"{"errors":[{"error":"Unable to contact slurm controller (connect failure)","error_number":1007}]}"#,
            ))
        } else {
            None
        };
        if let Some((status, body)) = canned {
            return answer(&mut client, status, body).await;
        }
    }
    let kept: Vec<&str> = head.split("\r\n").filter(|l| !l.to_ascii_lowercase().starts_with("connection:")).collect();
    let mut forwarded = format!("{}\r\nConnection: close\r\n\r\n", kept.join("\r\n")).into_bytes();
    forwarded.extend_from_slice(&buf[head_end + 4..]);
    let Ok(mut server) = TcpStream::connect(&upstream).await else { return };
    let path = request_line.split(' ').nth(1).unwrap_or_default().to_string();
    if request_line.starts_with("GET ") && path.ends_with("/nodes") && !gres.nodes.lock().unwrap().is_empty() {
        return play_nodes(&mut client, &mut server, &forwarded, &gres).await;
    }
    let forgotten = forgotten.load(Ordering::SeqCst);
    if forgotten != 0 && request_line.starts_with("GET ") {
        let path = request_line.split(' ').nth(1).unwrap_or_default();
        if path.ends_with(&format!("/job/{forgotten}")) {
            let body = r#"{"errors":[{"error":"Invalid job id specified","error_number":2017}],"jobs":[]}"#;
            return answer(&mut client, "500 Internal Server Error", body).await;
        }
        if path.ends_with("/jobs") {
            if server.write_all(&forwarded).await.is_err() {
                return;
            }
            let Some((head, body)) = whole_answer(&mut server).await else { return };
            let body = if head.contains("transfer-encoding: chunked") { crate::raw_http::dechunked(&body) } else { body };
            let Ok(mut list) = serde_json::from_slice::<serde_json::Value>(&body) else { return };
            if let Some(jobs) = list["jobs"].as_array_mut() {
                jobs.retain(|j| j["job_id"].as_u64() != Some(forgotten));
            }
            return answer(&mut client, "200 OK", &list.to_string()).await;
        }
    }
    if server.write_all(&forwarded).await.is_ok() {
        let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
    }
}

/// The node list with the played nodes' GRES in place of their own.
async fn play_nodes(client: &mut TcpStream, server: &mut TcpStream, forwarded: &[u8], gres: &GresPlay) {
    if server.write_all(forwarded).await.is_err() {
        return;
    }
    let Some((head, body)) = whole_answer(server).await else { return };
    let body = if head.contains("transfer-encoding: chunked") { crate::raw_http::dechunked(&body) } else { body };
    let Ok(mut list) = serde_json::from_slice::<serde_json::Value>(&body) else { return };
    let played = gres.nodes.lock().unwrap().clone();
    for node in list["nodes"].as_array_mut().into_iter().flatten() {
        if let Some((_, g, used)) = played.iter().find(|(n, _, _)| node["name"] == n.as_str()) {
            node["gres"] = serde_json::json!(g);
            node["gres_used"] = serde_json::json!(used);
        }
    }
    answer(client, "200 OK", &list.to_string()).await;
}

/// An answer's head (lower case) and body, read to its length: slurmrestd keeps the
/// connection open whatever the request asked.
async fn whole_answer(server: &mut TcpStream) -> Option<(String, Vec<u8>)> {
    let mut response = Vec::new();
    let mut chunk = [0u8; 16 * 1024];
    loop {
        if let Some(split) = response.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&response[..split]).to_ascii_lowercase();
            let body = &response[split + 4..];
            let length = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|n| n.trim().parse::<usize>().ok());
            let complete = match length {
                Some(n) => body.len() >= n,
                None => body.ends_with(b"0\r\n\r\n"),
            };
            if complete {
                let body = body[..length.unwrap_or(body.len()).min(body.len())].to_vec();
                return Some((head, body));
            }
        }
        let n = server.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        response.extend_from_slice(&chunk[..n]);
    }
}
