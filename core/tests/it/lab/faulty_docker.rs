//! The real Docker engine behind a socket the test owns, which can refuse container
//! removals or swallow container creations on demand: faults that a healthy engine never
//! shows, injected without touching the engine itself. Every request gets its own
//! upstream connection (`Connection: close` is added), so each one is looked at.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{UnixListener, UnixStream};

const ENGINE: &str = "/var/run/docker.sock";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Fault {
    None = 0,
    /// `DELETE /containers/…` answers 500.
    RefuseRemoval = 1,
    /// `POST /containers/create` never answers.
    SwallowCreate = 2,
    /// `DELETE /containers/…` is passed on only after [`SLOW`].
    SlowRemoval = 3,
    /// `POST /containers/create` is passed on only after [`SLOW`].
    SlowCreate = 4,
    /// `POST /containers/…/wait` never answers: nobody hears a container exit, as while
    /// the portal is down.
    SwallowWait = 5,
}

/// How long a slow call is held before the engine sees it.
pub const SLOW: std::time::Duration = std::time::Duration::from_secs(8);

pub struct FaultyDocker {
    /// `unix://…` for `Engine::new`.
    pub host: String,
    fault: Arc<AtomicU8>,
    _dir: tempfile::TempDir,
}

impl FaultyDocker {
    pub fn start() -> FaultyDocker {
        let dir = tempfile::tempdir().unwrap();
        let path: PathBuf = dir.path().join("docker.sock");
        let listener = UnixListener::bind(&path).unwrap();
        let fault = Arc::new(AtomicU8::new(Fault::None as u8));
        let shared = fault.clone();
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                tokio::spawn(relay(client, shared.clone()));
            }
        });
        FaultyDocker {
            host: format!("unix://{}", path.display()),
            fault,
            _dir: dir,
        }
    }

    pub fn set(&self, fault: Fault) {
        self.fault.store(fault as u8, Ordering::SeqCst);
    }
}

async fn relay(mut client: UnixStream, fault: Arc<AtomicU8>) {
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
    let fault = fault.load(Ordering::SeqCst);
    if fault == Fault::RefuseRemoval as u8 && request_line.starts_with("DELETE ") && request_line.contains("/containers/") {
        let body = r#"{"message":"removal refused by the fault test"}"#;
        let answer = format!(
            "HTTP/1.1 500 Internal Server Error\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        let _ = client.write_all(answer.as_bytes()).await;
        return;
    }
    let wait = request_line.starts_with("POST ") && request_line.contains("/wait");
    if (fault == Fault::SwallowCreate as u8 && request_line.starts_with("POST ") && request_line.contains("/containers/create"))
        || (fault == Fault::SwallowWait as u8 && wait)
    {
        let mut rest = [0u8; 1024];
        while matches!(client.read(&mut rest).await, Ok(n) if n > 0) {}
        return;
    }
    let removal = request_line.starts_with("DELETE ") && request_line.contains("/containers/");
    let create = request_line.starts_with("POST ") && request_line.contains("/containers/create");
    if (fault == Fault::SlowRemoval as u8 && removal) || (fault == Fault::SlowCreate as u8 && create) {
        tokio::time::sleep(SLOW).await;
    }
    let kept: Vec<&str> = head
        .split("\r\n")
        .filter(|line| !line.to_ascii_lowercase().starts_with("connection:"))
        .collect();
    let mut forwarded = format!("{}\r\nConnection: close\r\n\r\n", kept.join("\r\n")).into_bytes();
    forwarded.extend_from_slice(&buf[head_end + 4..]);
    let Ok(mut engine) = UnixStream::connect(ENGINE).await else { return };
    if engine.write_all(&forwarded).await.is_ok() {
        let _ = tokio::io::copy_bidirectional(&mut client, &mut engine).await;
    }
}
