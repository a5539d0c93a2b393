//! The portal over HTTP: health, pages, 404, and a clean stop on SIGTERM.

use slicehub_end2end::Portal;

const BIN: &str = env!("CARGO_BIN_EXE_slicehub");

#[tokio::test]
async fn healthz_reports_each_part_and_a_down_engine_does_not_stop_the_portal() {
    let portal = Portal::start(
        BIN.as_ref(),
        &[("SLICEHUB_DOCKER_HOST", "unix:///nonexistent/docker.sock")],
    )
    .await;
    let resp = reqwest::get(format!("{}/healthz", portal.url))
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let body: serde_json::Value = resp.json().await.unwrap();
    assert_eq!(body["status"], "degraded", "{body}");
    assert_eq!(body["database"]["ok"], true, "{body}");
    assert_eq!(body["docker"]["ok"], false, "{body}");
    assert!(body["docker"]["summary"]
        .as_str()
        .unwrap()
        .contains("/nonexistent/docker.sock"));
    assert_eq!(body["gpu"]["ok"], true, "{body}");
    assert_eq!(body["gpu_backend"], "Simulated");

    let html = reqwest::get(&portal.url)
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        html.contains("Running with problems"),
        "the page says so: {html}"
    );
    assert!(
        html.contains("no Docker socket at unix:///nonexistent/docker.sock"),
        "and why"
    );
}

#[tokio::test]
async fn pages_render_on_the_server_and_unknown_paths_get_404() {
    let portal = Portal::start(BIN.as_ref(), &[("SLICEHUB_GPU_SIMULATED", "2 x A100-80GB")]).await;
    let resp = reqwest::get(&portal.url).await.unwrap();
    assert_eq!(resp.status(), 200);
    let html = resp.text().await.unwrap();
    assert!(
        html.contains("A slice of a real GPU for every student."),
        "{html}"
    );
    assert!(
        html.contains("NVIDIA A100-SXM4-80GB"),
        "GPUs are rendered on the server: {html}"
    );
    assert!(
        html.contains("/pkg/slicehub"),
        "hydration script linked: {html}"
    );

    let resp = reqwest::get(format!("{}/no/such/page", portal.url))
        .await
        .unwrap();
    assert_eq!(resp.status(), 404);
    assert!(resp
        .text()
        .await
        .unwrap()
        .contains("There is no page here."));
}

#[tokio::test]
async fn the_server_function_answers_a_post() {
    let portal = Portal::start(BIN.as_ref(), &[]).await;
    let resp = reqwest::Client::new()
        .post(format!("{}/api/check_instance", portal.url))
        .header("content-type", "application/x-www-form-urlencoded")
        .body("")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let body: serde_json::Value = resp.json().await.unwrap();
    assert_eq!(body["board"]["simulated"], true, "{body}");
    assert_eq!(
        body["board"]["gpus"][0]["gpu"]["name"], "NVIDIA A100-SXM4-40GB",
        "{body}"
    );
}

#[tokio::test]
async fn a_cross_origin_post_is_refused() {
    let portal = Portal::start(BIN.as_ref(), &[]).await;
    let post = |origin: String| {
        reqwest::Client::new()
            .post(format!("{}/api/check_instance", portal.url))
            .header("origin", origin)
            .header("content-type", "application/x-www-form-urlencoded")
            .body("")
            .send()
    };
    let refused = post("http://evil.example".to_string()).await.unwrap();
    assert_eq!(refused.status(), 403);
    assert!(refused
        .text()
        .await
        .unwrap()
        .contains("came from another site"));
    let allowed = post(portal.url.clone()).await.unwrap();
    assert_eq!(allowed.status(), 200);
}

#[tokio::test]
async fn sigterm_stops_the_portal_cleanly() {
    let portal = Portal::start(BIN.as_ref(), &[]).await;
    let stopped = portal.stop().await;
    assert!(
        stopped.status.success(),
        "{}\n{}",
        stopped.status,
        stopped.log
    );
    assert!(stopped.log.contains("SIGTERM received"), "{}", stopped.log);
    assert!(stopped.log.contains("stopped cleanly"), "{}", stopped.log);
}

#[tokio::test]
async fn json_logs_are_one_object_per_line() {
    let portal = Portal::start(BIN.as_ref(), &[("SLICEHUB_LOG_FORMAT", "json")]).await;
    let stopped = portal.stop().await;
    let lines: Vec<&str> = stopped
        .log
        .lines()
        .filter(|l| !l.trim().is_empty())
        .collect();
    assert!(!lines.is_empty());
    for line in lines {
        let value: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
        assert!(value.get("level").is_some(), "{line}");
    }
}

#[tokio::test]
async fn the_session_cookie_is_guarded_and_rotated_at_login() {
    use slicehub_end2end::form::{client, post, sign_in};
    let portal = Portal::start(
        BIN.as_ref(),
        &[("SLICEHUB_ADMIN_PASSWORD", "admin-password-1")],
    )
    .await;
    let resp = post(
        &client(),
        &portal.url,
        None,
        "login",
        "username=admin&password=admin-password-1".into(),
    )
    .await;
    let cookie = resp
        .headers()
        .get("set-cookie")
        .unwrap()
        .to_str()
        .unwrap()
        .to_string();
    for attribute in ["HttpOnly", "SameSite=Lax", "Path=/"] {
        assert!(cookie.contains(attribute), "{cookie}");
    }
    assert!(
        !cookie.contains("Secure"),
        "not without server.secure_cookies: {cookie}"
    );

    // Signing in again from the same browser replaces the session: the old token is dead.
    let first = sign_in(&client(), &portal.url, "admin", "admin-password-1")
        .await
        .unwrap();
    let second = post(
        &client(),
        &portal.url,
        Some(&first),
        "login",
        "username=admin&password=admin-password-1".into(),
    )
    .await;
    let second = second
        .headers()
        .get("set-cookie")
        .unwrap()
        .to_str()
        .unwrap()
        .split(';')
        .next()
        .unwrap()
        .to_string();
    assert_ne!(first, second);
    let url = portal.url.clone();
    let who = |cookie: String| {
        let url = url.clone();
        async move {
            post(
                &client(),
                &url,
                Some(&cookie),
                "current_user",
                String::new(),
            )
            .await
            .text()
            .await
            .unwrap()
        }
    };
    assert_eq!(who(first).await, "null");
    assert!(who(second).await.contains("\"username\":\"admin\""));
}
