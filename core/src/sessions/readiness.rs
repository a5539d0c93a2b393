//! Is JupyterLab up? One plain HTTP/1.1 request to its status API at its session address,
//! with the session's token, the way Jupyter's own clients authenticate. On a shared Slurm
//! node the listener first answers a challenge, so the token goes only to the real notebook.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::timeout;

const STEP: Duration = Duration::from_secs(2);

/// True when `GET <path>` on `address` (`IP:PORT`) answers 200.
pub(super) async fn answers_ok(address: &str, path: &str, token: &str) -> bool {
    let Ok(Ok(mut stream)) = timeout(STEP, TcpStream::connect(address)).await else {
        return false;
    };
    let request = format!(
        "GET {path} HTTP/1.1\r\nHost: {address}\r\nAuthorization: token {token}\r\n\
         Accept: application/json\r\nConnection: close\r\n\r\n"
    );
    if stream.write_all(request.as_bytes()).await.is_err() {
        return false;
    }
    let mut head = [0u8; 16];
    match timeout(STEP, stream.read_exact(&mut head)).await {
        Ok(Ok(_)) => head.starts_with(b"HTTP/1.1 200") || head.starts_with(b"HTTP/1.0 200"),
        _ => false,
    }
}

/// Whether the answer to `GET <path>` on `address` is 200 with exactly `expected` as its
/// body (read up to 4 KiB: a listener that is not the notebook may send anything).
pub(super) async fn answers_with(address: &str, path: &str, expected: &str) -> bool {
    let exchange = async {
        let mut stream = TcpStream::connect(address).await.ok()?;
        let request = format!("GET {path} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n");
        stream.write_all(request.as_bytes()).await.ok()?;
        let mut answer = Vec::with_capacity(512);
        stream.take(4096).read_to_end(&mut answer).await.ok()?;
        Some(answer)
    };
    let Ok(Some(answer)) = timeout(STEP, exchange).await else {
        return false;
    };
    let Some(split) = answer.windows(4).position(|w| w == b"\r\n\r\n") else {
        return false;
    };
    let (head, body) = (&answer[..split], &answer[split + 4..]);
    (head.starts_with(b"HTTP/1.1 200 ") || head.starts_with(b"HTTP/1.0 200 ")) && body == expected.as_bytes()
}
