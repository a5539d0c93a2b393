//! HTTP/1.1 by hand, for requests a client library would tidy up first (dot segments,
//! `//`, odd percent-encoding) and for answers read as the bytes that came.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Sends `head` (request line and headers, without the blank line) and `body` to `host`
/// (`IP:PORT`) on a connection of its own; the status and the body, read to the end or,
/// for an endless stream, what came in the first `patience` after the head.
pub async fn exchange(host: &str, head: &str, body: &[u8], patience: Duration) -> (u16, String) {
    let mut stream = tokio::net::TcpStream::connect(host).await.expect("the server takes connections");
    let mut request = format!("{head}\r\nHost: {host}\r\nConnection: close\r\n\r\n").into_bytes();
    request.extend_from_slice(body);
    stream.write_all(&request).await.expect("the request is sent");
    let mut raw = Vec::new();
    let mut chunk = [0u8; 16 * 1024];
    // The head however long the server takes; the body to its end, or for `patience`.
    let mut until = None;
    loop {
        let read = match until {
            None => Ok(stream.read(&mut chunk).await),
            Some(until) => tokio::time::timeout_at(until, stream.read(&mut chunk)).await,
        };
        let Ok(Ok(n)) = read else { break };
        if n == 0 {
            break;
        }
        raw.extend_from_slice(&chunk[..n]);
        if until.is_none() && raw.windows(4).any(|w| w == b"\r\n\r\n") {
            until = Some(tokio::time::Instant::now() + patience);
        }
    }
    let split = raw.windows(4).position(|w| w == b"\r\n\r\n").unwrap_or(raw.len());
    let head = String::from_utf8_lossy(&raw[..split]).to_ascii_lowercase();
    let body = &raw[(split + 4).min(raw.len())..];
    let status = head.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    let body = if head.contains("transfer-encoding: chunked") { dechunked(body) } else { body.to_vec() };
    (status, String::from_utf8_lossy(&body).into_owned())
}

/// The body of a chunked answer (as much of it as came).
pub fn dechunked(mut body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(end) = body.windows(2).position(|w| w == b"\r\n") {
        let size_line = String::from_utf8_lossy(&body[..end]).into_owned();
        let size = usize::from_str_radix(size_line.split(';').next().unwrap_or("").trim(), 16).unwrap_or(0);
        if size == 0 {
            break;
        }
        let start = end + 2;
        let stop = (start + size).min(body.len());
        out.extend_from_slice(&body[start..stop]);
        body = &body[(stop + 2).min(body.len())..];
    }
    out
}
