//! A relay in front of slurmrestd that can play a controller failing over: while on, the
//! job list comes back empty and a job asked for by id answers 500 "Unable to contact
//! slurm controller", as slurmrestd does while slurmctld is away. Everything else (and
//! everything while off) goes through unchanged, one request per upstream connection.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

pub struct SlurmFailover {
    /// What the portal's `slurm.url` names instead of slurmrestd.
    pub url: String,
    failing: Arc<AtomicBool>,
}

impl SlurmFailover {
    /// A relay to `upstream` (`http://host:port`).
    pub async fn start(upstream: &str) -> SlurmFailover {
        let upstream = upstream.trim_start_matches("http://").trim_end_matches('/').to_string();
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("relay port");
        let url = format!("http://{}", listener.local_addr().unwrap());
        let failing = Arc::new(AtomicBool::new(false));
        let shared = failing.clone();
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                tokio::spawn(relay(client, upstream.clone(), shared.clone()));
            }
        });
        SlurmFailover { url, failing }
    }

    pub fn failing(&self, on: bool) {
        self.failing.store(on, Ordering::SeqCst);
    }
}

async fn relay(mut client: TcpStream, upstream: String, failing: Arc<AtomicBool>) {
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
        let answer = if path.ends_with("/jobs") {
            Some(("200 OK", r#"{"errors":[],"jobs":[]}"#))
        } else if path.contains("/job/") {
            Some((
                "500 Internal Server Error",
                r#"{"errors":[{"error":"Unable to contact slurm controller (connect failure)","error_number":1007}]}"#,
            ))
        } else {
            None
        };
        if let Some((status, body)) = answer {
            let answer = format!(
                "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = client.write_all(answer.as_bytes()).await;
            return;
        }
    }
    let kept: Vec<&str> = head.split("\r\n").filter(|l| !l.to_ascii_lowercase().starts_with("connection:")).collect();
    let mut forwarded = format!("{}\r\nConnection: close\r\n\r\n", kept.join("\r\n")).into_bytes();
    forwarded.extend_from_slice(&buf[head_end + 4..]);
    let Ok(mut server) = TcpStream::connect(&upstream).await else { return };
    if server.write_all(&forwarded).await.is_ok() {
        let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
    }
}
