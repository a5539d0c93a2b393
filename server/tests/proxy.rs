//! The notebook proxy with the real JupyterLab image: the owner starts a kernel through
//! `/user/NAME/SESSION/` and runs code over the kernel's WebSocket channel, the way
//! Jupyter's own clients do; another student and an anonymous caller get 404 for HTTP and
//! for the WebSocket upgrade; an ended session's address says it ended.
//! Needs the Docker engine and `slicehub/jupyterlab:offline`.

use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use slicehub_end2end::classroom::Classroom;
use slicehub_end2end::form::{client, post, urlencode};
use slicehub_end2end::Portal;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::Message;

const BIN: &str = env!("CARGO_BIN_EXE_slicehub");
const JUPYTERLAB: &str = "slicehub/jupyterlab:offline";

async fn portal_with_students() -> (Portal, String, String) {
    let class = Classroom::start(BIN.as_ref(), &[]).await;
    let cookies = class.enroll(&["px-alice", "px-bob"]).await;
    (class.portal, cookies[0].clone(), cookies[1].clone())
}

async fn ready_notebook(portal: &Portal, cookie: &str) -> (String, String) {
    let body = format!("course_id=1&profile=1g.10gb&image={}", urlencode(JUPYTERLAB));
    let resp = post(&client(), &portal.url, Some(cookie), "start_session", body).await;
    assert_eq!(resp.status(), 200);
    let view: serde_json::Value = resp.json().await.unwrap();
    let id = view["id"].as_str().unwrap().to_string();
    let until = Instant::now() + Duration::from_secs(120);
    loop {
        let resp = post(&client(), &portal.url, Some(cookie), "my_sessions", String::new()).await;
        let list: serde_json::Value = resp.json().await.unwrap();
        let me = list.as_array().unwrap().iter().find(|s| s["id"] == id.as_str()).unwrap().clone();
        if me["state"] == "ready" {
            return (id, me["open_url"].as_str().unwrap().to_string());
        }
        assert_ne!(me["state"], "failed", "{me}");
        assert!(Instant::now() < until, "notebook not ready: {me}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

fn ws_url(portal: &Portal, path: &str) -> String {
    format!("{}{path}", portal.url.replacen("http://", "ws://", 1))
}

async fn ws_status(portal: &Portal, path: &str, cookie: Option<&str>) -> u16 {
    let mut request = ws_url(portal, path).into_client_request().unwrap();
    if let Some(cookie) = cookie {
        request.headers_mut().insert("cookie", cookie.parse().unwrap());
    }
    match tokio_tungstenite::connect_async(request).await {
        Ok((_, response)) => response.status().as_u16(),
        Err(tokio_tungstenite::tungstenite::Error::Http(response)) => response.status().as_u16(),
        Err(e) => panic!("websocket to {path}: {e}"),
    }
}

#[tokio::test]
async fn the_owner_runs_code_in_a_kernel_through_the_proxy_and_nobody_else_gets_in() {
    let (portal, alice, bob) = portal_with_students().await;
    let (id, open_url) = ready_notebook(&portal, &alice).await;
    let base = format!("/user/px-alice/{id}/");
    assert_eq!(open_url, format!("{base}lab"));

    // JupyterLab's own page, through the portal, without the student ever seeing a token.
    let lab = client()
        .get(format!("{}{open_url}", portal.url))
        .header("cookie", &alice)
        .send()
        .await
        .unwrap();
    assert_eq!(lab.status(), 200);
    assert!(lab.text().await.unwrap().contains("JupyterLab"));

    // A kernel, started with the REST API (a POST from the portal's origin).
    let kernel: serde_json::Value = client()
        .post(format!("{}{base}api/kernels", portal.url))
        .header("cookie", &alice)
        .header("origin", &portal.url)
        .json(&serde_json::json!({"name": "python3"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let kernel_id = kernel["id"].as_str().expect("a kernel id").to_string();

    // Code over the kernel's WebSocket channel, as Jupyter's clients send it.
    let channels = format!("{base}api/kernels/{kernel_id}/channels");
    let mut request = ws_url(&portal, &channels).into_client_request().unwrap();
    request.headers_mut().insert("cookie", alice.parse().unwrap());
    let (mut socket, _) = tokio_tungstenite::connect_async(request).await.unwrap();
    let msg_id = format!("exec-{id}");
    let execute = serde_json::json!({
        "header": {"msg_id": msg_id, "username": "px-alice", "session": id,
                   "msg_type": "execute_request", "version": "5.3", "date": "2026-11-21T00:00:00Z"},
        "parent_header": {}, "metadata": {}, "buffers": [], "channel": "shell",
        "content": {"code": "print(6 * 7)", "silent": false, "store_history": false,
                    "user_expressions": {}, "allow_stdin": false, "stop_on_error": true},
    });
    socket.send(Message::text(execute.to_string())).await.unwrap();
    let until = Instant::now() + Duration::from_secs(60);
    let printed = loop {
        let next = tokio::time::timeout(Duration::from_secs(60), socket.next()).await;
        let Ok(Some(Ok(Message::Text(text)))) = next else {
            assert!(Instant::now() < until, "no output from the kernel");
            continue;
        };
        let msg: serde_json::Value = serde_json::from_str(&text).unwrap();
        if msg["parent_header"]["msg_id"] == msg_id.as_str() && msg["msg_type"] == "stream" {
            break msg["content"]["text"].as_str().unwrap().to_string();
        }
    };
    assert_eq!(printed, "42\n");
    socket.close(None).await.ok();

    // Bob and an anonymous caller cannot tell the session exists: HTTP and WebSocket.
    for cookie in [Some(bob.as_str()), None] {
        let mut request = client().get(format!("{}{base}api/status", portal.url));
        if let Some(cookie) = cookie {
            request = request.header("cookie", cookie);
        }
        assert_eq!(request.send().await.unwrap().status(), 404);
        assert_eq!(ws_status(&portal, &channels, cookie).await, 404);
    }
    // Not even with the token in hand: the portal decides, not JupyterLab.
    let resp = client()
        .get(format!("{}{base}api/status?token=guess", portal.url))
        .header("cookie", &bob)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 404);

    // After a stop, the address says the session ended.
    let resp = post(&client(), &portal.url, Some(&alice), "stop_session", format!("id={id}")).await;
    assert_eq!(resp.status(), 200);
    let gone = client()
        .get(format!("{}{open_url}", portal.url))
        .header("cookie", &alice)
        .send()
        .await
        .unwrap();
    assert_eq!(gone.status(), 410);
    assert!(gone.text().await.unwrap().contains("This session has ended"));
}
