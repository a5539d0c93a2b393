//! What JupyterLab itself says about activity: its kernels (busy now, or their last
//! message) and terminals, read through its REST API at the session's address with the
//! session's token. Reading them is not activity in JupyterLab's own bookkeeping of
//! kernels and terminals.

use std::time::Duration;

use serde::Deserialize;

#[derive(Deserialize)]
struct Kernel {
    #[serde(default)]
    execution_state: String,
    last_activity: Option<String>,
}

#[derive(Deserialize)]
struct Terminal {
    last_activity: Option<String>,
}

fn epoch_ms(text: &Option<String>) -> Option<i64> {
    chrono::DateTime::parse_from_rfc3339(text.as_deref()?).ok().map(|t| t.timestamp_millis())
}

/// The most the portal reads of one answer: a kernels or terminals list is a few hundred
/// bytes a kernel, and the container's server is the student's to change.
const MOST_BYTES: usize = 256 * 1024;
const WHOLE_READ: Duration = Duration::from_secs(3);

/// The client for reading what a container serves: it follows no redirect (the container
/// would choose the address the portal fetches), takes no proxy from the environment, and
/// gives up connecting after a second.
pub fn container_client() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .connect_timeout(Duration::from_secs(1))
        .timeout(WHOLE_READ)
        .build()
        .unwrap_or_default()
}

async fn read<T: serde::de::DeserializeOwned>(client: &reqwest::Client, url: String, token: &str) -> Option<T> {
    let mut answer = client
        .get(url)
        .header("Authorization", format!("token {token}"))
        .timeout(WHOLE_READ)
        .send()
        .await
        .ok()?;
    if !answer.status().is_success() || answer.content_length().is_some_and(|n| n > MOST_BYTES as u64) {
        return None;
    }
    let mut body = Vec::new();
    while let Some(chunk) = answer.chunk().await.ok()? {
        if body.len() + chunk.len() > MOST_BYTES {
            return None;
        }
        body.extend_from_slice(&chunk);
    }
    serde_json::from_slice(&body).ok()
}

/// The latest moment JupyterLab was active: `now_ms` while a kernel runs code, else the
/// newest kernel or terminal activity. `None` when it cannot be read or has neither.
pub(super) async fn jupyter_activity(
    client: &reqwest::Client,
    address: &str,
    base_url: &str,
    token: &str,
    now_ms: i64,
) -> Option<i64> {
    let root = format!("http://{address}{base_url}api");
    let (kernels, terminals) = tokio::join!(
        read::<Vec<Kernel>>(client, format!("{root}/kernels"), token),
        read::<Vec<Terminal>>(client, format!("{root}/terminals"), token),
    );
    let kernels = kernels.unwrap_or_default();
    if kernels.iter().any(|k| k.execution_state == "busy") {
        return Some(now_ms);
    }
    let kernel_times = kernels.iter().filter_map(|k| epoch_ms(&k.last_activity));
    let terminal_times = terminals.unwrap_or_default().into_iter().filter_map(|t| epoch_ms(&t.last_activity));
    kernel_times.chain(terminal_times).max()
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpListener;

    use super::*;

    /// A hostile notebook server on loopback: answers every request with `head`, then writes
    /// `body` over and over until the reader hangs up; counts what it wrote and each request.
    async fn hostile(head: String, body: &'static [u8], forever: bool) -> (String, Arc<AtomicUsize>, Arc<AtomicUsize>) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap().to_string();
        let (written, requests) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let (w, r) = (written.clone(), requests.clone());
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                let (w, r, head) = (w.clone(), r.clone(), head.clone());
                tokio::spawn(async move {
                    let mut buf = [0u8; 4096];
                    let _ = stream.read(&mut buf).await;
                    r.fetch_add(1, Ordering::SeqCst);
                    if stream.write_all(head.as_bytes()).await.is_err() {
                        return;
                    }
                    loop {
                        if stream.write_all(body).await.is_err() {
                            return;
                        }
                        w.fetch_add(body.len(), Ordering::SeqCst);
                        if !forever {
                            return;
                        }
                    }
                });
            }
        });
        (address, written, requests)
    }

    #[tokio::test]
    async fn an_endless_answer_is_cut_off_at_the_cap_and_reads_as_unknown() {
        static CHUNK: [u8; 65536] = [b' '; 65536];
        let head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n[".to_string();
        let (address, written, _) = hostile(head, &CHUNK, true).await;
        let started = std::time::Instant::now();
        let seen = jupyter_activity(&container_client(), &address, "/user/a/s-x/", "t", 1).await;
        assert_eq!(seen, None);
        assert!(started.elapsed() < Duration::from_secs(5), "took {:?}", started.elapsed());
        tokio::time::sleep(Duration::from_millis(200)).await;
        // The server may get ahead of the reader by what the sockets buffer, never by more.
        let sent = written.load(Ordering::SeqCst);
        // Loopback buffers can hold some megabytes; an unbounded reader takes gigabytes in
        // the 3 s it is given.
        assert!(sent < 64 * 1024 * 1024, "the portal kept reading: {sent} bytes sent");
    }

    #[tokio::test]
    async fn a_redirect_is_never_followed() {
        let (elsewhere, _, fetched_elsewhere) = hostile("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n".into(), b"[]", false).await;
        let head = format!("HTTP/1.1 302 Found\r\nLocation: http://{elsewhere}/x\r\nContent-Length: 0\r\n\r\n");
        let (address, _, asked) = hostile(head, b"", false).await;
        let seen = jupyter_activity(&container_client(), &address, "/user/a/s-x/", "t", 1).await;
        assert_eq!(seen, None);
        assert_eq!(asked.load(Ordering::SeqCst), 2, "kernels and terminals were asked for");
        assert_eq!(fetched_elsewhere.load(Ordering::SeqCst), 0, "the portal followed the container's redirect");
    }

    #[tokio::test]
    async fn a_busy_kernel_within_the_cap_is_read() {
        let body: &'static [u8] = br#"[{"execution_state":"busy","last_activity":"2026-01-01T00:00:00Z"}]"#;
        let head = format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n", body.len());
        let (address, _, _) = hostile(head, body, false).await;
        assert_eq!(jupyter_activity(&container_client(), &address, "/user/a/s-x/", "t", 42).await, Some(42));
    }
}
