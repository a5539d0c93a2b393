//! Running code in a notebook's kernel through the portal's proxy, as JupyterLab's page does:
//! a kernel made over REST, code sent over the kernel's WebSocket from the notebook's origin.

use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::Message;

use crate::notebook::NotebookVisit;
use crate::Portal;

pub type Socket = tokio_tungstenite::WebSocketStream<tokio::net::TcpStream>;

/// A WebSocket to `path` on the notebook host with the visit's cookies, sent from `origin`;
/// the status of a refused upgrade.
pub async fn ws_connect(portal: &Portal, visit: &NotebookVisit, path: &str, origin: &str) -> Result<Socket, u16> {
    let url = format!("{}{path}", visit.origin.replacen("http://", "ws://", 1));
    let mut request = url.into_client_request().unwrap();
    request.headers_mut().insert("cookie", visit.cookie_header().parse().unwrap());
    request.headers_mut().insert("origin", origin.parse().unwrap());
    let port: u16 = portal.url.rsplit(':').next().unwrap().parse().unwrap();
    let stream = tokio::net::TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    match tokio_tungstenite::client_async(request, stream).await {
        Ok((socket, _)) => Ok(socket),
        Err(tokio_tungstenite::tungstenite::Error::Http(response)) => Err(response.status().as_u16()),
        Err(e) => panic!("websocket to {path}: {e}"),
    }
}

/// A new python3 kernel of the notebook at `base` (`/user/NAME/SESSION/`); its id.
pub async fn start_kernel(visit: &NotebookVisit, base: &str) -> String {
    let python = serde_json::json!({"name": "python3"});
    let resp = visit.post_json(&format!("{base}api/kernels"), &python, &visit.origin, true).await;
    assert_eq!(resp.status(), 201, "a kernel starts");
    let kernel: serde_json::Value = resp.json().await.unwrap();
    kernel["id"].as_str().expect("a kernel id").to_string()
}

/// Sends `code` on an open kernel socket and returns what it printed first.
pub async fn run_code(socket: &mut Socket, code: &str) -> String {
    let msg_id = format!("exec-{}", Instant::now().elapsed().as_nanos());
    let execute = serde_json::json!({
        "header": {"msg_id": msg_id, "username": "test", "session": msg_id,
                   "msg_type": "execute_request", "version": "5.3", "date": "2026-11-21T00:00:00Z"},
        "parent_header": {}, "metadata": {}, "buffers": [], "channel": "shell",
        "content": {"code": code, "silent": false, "store_history": false,
                    "user_expressions": {}, "allow_stdin": false, "stop_on_error": true},
    });
    socket.send(Message::text(execute.to_string())).await.unwrap();
    let until = Instant::now() + Duration::from_secs(60);
    loop {
        let next = tokio::time::timeout(Duration::from_secs(60), socket.next()).await;
        let Ok(Some(Ok(Message::Text(text)))) = next else {
            assert!(Instant::now() < until, "no output from the kernel");
            continue;
        };
        let msg: serde_json::Value = serde_json::from_str(&text).unwrap();
        if msg["parent_header"]["msg_id"] == msg_id.as_str() && msg["msg_type"] == "stream" {
            return msg["content"]["text"].as_str().unwrap().to_string();
        }
    }
}
