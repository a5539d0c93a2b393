//! The portal over HTTP: health, pages, 404, and a clean stop on SIGTERM.

use slicehub_end2end::Portal;

const BIN: &str = env!("CARGO_BIN_EXE_slicehub");

#[tokio::test]
async fn healthz_reports_each_part_and_a_down_engine_does_not_stop_the_portal() {
    let portal = Portal::start(
        BIN.as_ref(),
        &[
            ("SLICEHUB_DOCKER_HOST", "unix:///nonexistent/docker.sock"),
            ("SLICEHUB_ADMIN_PASSWORD", "admin-password-1"),
        ],
    )
    .await;
    // Anyone learns the status and which part is down, but nothing of what or where.
    let resp = reqwest::get(format!("{}/healthz", portal.url))
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let text = resp.text().await.unwrap();
    let body: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(body["status"], "degraded", "{body}");
    assert_eq!(body["database"]["ok"], true, "{body}");
    assert_eq!(body["docker"]["ok"], false, "{body}");
    assert_eq!(body["gpu"]["ok"], true, "{body}");
    for detail in ["docker.sock", "summary", "SQLite", "version", "gpu_backend", "event_streams"] {
        assert!(!text.contains(detail), "an anonymous health check shows {detail:?}: {text}");
    }
    // The administrator's login sees each part in full.
    let admin = slicehub_end2end::form::sign_in(&slicehub_end2end::form::client(), &portal.url, "admin", "admin-password-1")
        .await
        .expect("admin signs in");
    let body: serde_json::Value =
        serde_json::from_str(&slicehub_end2end::form::get_text(&format!("{}/healthz", portal.url), &admin).await).unwrap();
    assert!(body["docker"]["summary"]
        .as_str()
        .unwrap()
        .contains("/nonexistent/docker.sock"), "{body}");
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
    assert!(html.contains("not working right now"), "which part: {html}");
    assert!(
        !html.contains("/nonexistent/docker.sock"),
        "the engine's address is for administrators, not anonymous visitors"
    );
}

/// A Docker engine that accepts connections and never answers (hung dockerd): the portal
/// answers its pages and /healthz within seconds and says it is recovering (it used to
/// pick up the last run's sessions before serving, silent for minutes), and a SIGTERM
/// ends it within seconds (it used to wait on the engine to remove its networks).
#[tokio::test]
async fn a_hung_engine_does_not_keep_the_portal_silent_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("hung.sock");
    let listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming().flatten() {
            held.push(stream);
        }
    });
    let host = format!("unix://{}", socket.display());
    let started = std::time::Instant::now();
    let portal = Portal::start_answering(
        BIN.as_ref(),
        &[("SLICEHUB_DOCKER_HOST", host.as_str()), ("SLICEHUB_ADMIN_PASSWORD", "admin-password-1")],
    )
    .await;
    assert!(started.elapsed() < std::time::Duration::from_secs(20), "answered after {:?}", started.elapsed());
    let body: serde_json::Value = reqwest::get(format!("{}/healthz", portal.url)).await.unwrap().json().await.unwrap();
    assert_eq!(body["recovering"], true, "{body}");
    assert_eq!(body["background"]["ok"], false, "{body}");
    let page = reqwest::get(format!("{}/login", portal.url)).await.unwrap();
    assert_eq!(page.status(), 200, "pages are served meanwhile");
    // Stopped, it does not wait for the engine either.
    let mut portal = portal;
    let (status, took) = portal.terminate().await;
    assert!(status.success(), "{status}: {}", portal.log());
    assert!(took < std::time::Duration::from_secs(12), "SIGTERM took {took:?} with the engine hung");
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
        html.contains("1g.10gb"),
        "free slices per profile are rendered on the server: {html}"
    );
    assert!(
        !html.contains("NVIDIA A100-SXM4-80GB") && !html.contains("GPU-simulated"),
        "GPU models and UUIDs are for administrators: {html}"
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
    assert_eq!(body["capacity"]["simulated"], true, "{body}");
    assert!(!body["capacity"]["profiles"].as_array().unwrap().is_empty(), "{body}");
    assert!(body["board"].is_null(), "who holds what is for administrators: {body}");
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
async fn sigterm_ends_open_event_streams_and_exits_within_5_seconds() {
    let portal = Portal::start(BIN.as_ref(), &[("SLICEHUB_ADMIN_PASSWORD", "streams-admin-1")]).await;
    let cookie = slicehub_end2end::form::sign_in(
        &slicehub_end2end::form::client(),
        &portal.url,
        "admin",
        "streams-admin-1",
    )
    .await
    .expect("signed in");
    let mut streams = Vec::new();
    for _ in 0..20 {
        let resp = reqwest::Client::new()
            .get(format!("{}/api/sessions/events", portal.url))
            .header("cookie", &cookie)
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 200);
        streams.push(resp);
    }
    let stopped = portal.stop().await;
    assert!(stopped.status.success(), "{}\n{}", stopped.status, stopped.log);
    assert!(stopped.took < std::time::Duration::from_secs(5), "took {:?}", stopped.took);
    assert!(stopped.log.contains("stopped cleanly"), "{}", stopped.log);
    assert!(!stopped.log.contains("stopping anyway"), "the streams ended by themselves: {}", stopped.log);
    drop(streams);
}

#[tokio::test]
async fn malformed_and_oversized_requests_get_plain_4xx_answers() {
    use slicehub_end2end::form::{base64, client, post, sign_in, urlencode};
    let portal = Portal::start(BIN.as_ref(), &[("SLICEHUB_ADMIN_PASSWORD", "malformed-admin-1")]).await;
    portal.cli(&["course", "add", "CS-101", "Deep Learning"], "");
    let admin = sign_in(&client(), &portal.url, "admin", "malformed-admin-1").await.unwrap();
    let cases = [
        ("start_session", "course_id=abc&profile=1g.10gb&image=x".to_string(), 400),
        ("start_session", "course_id=-1.5&profile=x&image=y".to_string(), 400),
        ("start_session", "course_id=99999999999999999999&profile=x&image=y".to_string(), 400),
        ("start_session", "profile=x".to_string(), 400),
        ("start_session", "course_id=1&course_id=2&profile=x&image=y".to_string(), 400),
        ("start_session", "course_id=%ZZ&profile=x&image=y".to_string(), 400),
        ("stop_session", String::new(), 400),
        ("open_course", "code=CS-101&code=CS-102".to_string(), 400),
        ("start_session", "x".repeat(11 * 1024 * 1024), 413),
        // NUL (PostgreSQL refuses it: 503 before) and 100,000 characters (an error that
        // repeated them outgrew the error answer: 500 before) are refused in words.
        ("login", "username=a%00&password=wrong-password".to_string(), 400),
        ("login", format!("username={}&password=wrong-password", "a".repeat(100_000)), 400),
        ("start_session", format!("course_id=1&profile={}&image=x", "p".repeat(100_000)), 400),
        ("start_session", "course_id=1&profile=1g.10gb&image=x%00".to_string(), 400),
        ("start_session", "course_id=1&profile=1g.10gb&image=x&command=echo+a%00b".to_string(), 400),
        ("add_course", "code=NUL%00&title=Nul".to_string(), 400),
        ("add_course", format!("code=LONG-1&title={}", "t".repeat(100_000)), 400),
        ("add_account", "username=nul%00&display_name=Nul&email=".to_string(), 400),
        ("add_account", format!("username=long&display_name={}&email=", "d".repeat(100_000)), 400),
        ("open_course", "code=CS-101%00".to_string(), 400),
        ("open_course", format!("code={}", "C".repeat(100_000)), 400),
        ("stop_session", "id=s-x%00".to_string(), 400),
        ("stop_session", "id=s-nosuchsession&reason=lab+over%00".to_string(), 400),
        ("grant_extra_hours", "code=CS-101&username=x&hours=1&reason=a%00".to_string(), 400),
        ("audit_log", "who=a%00&what=&from=&to=&before=".to_string(), 400),
    ];
    for (function, body, expected) in cases {
        let resp = post(&client(), &portal.url, Some(&admin), function, body.clone()).await;
        let status = resp.status().as_u16();
        let text = resp.text().await.unwrap();
        let shown: String = body.chars().take(60).collect();
        assert_eq!(status, expected, "{function} {shown}: {text}");
        for internal in ["Args|", "Deserialization|", "ServerError|", "invalid digit", "serde"] {
            assert!(!text.contains(internal), "{function} {shown}: {text}");
        }
        assert!(text.ends_with('.'), "a sentence: {text}");

        // The portal's own pages ask for JSON: they get the same refusal as an error they
        // decode, in the same words, never a body they cannot read.
        let mut request = client()
            .post(format!("{}/api/{function}", portal.url))
            .header("content-type", "application/x-www-form-urlencoded")
            .header("accept", "application/json")
            .header("origin", &portal.url)
            .header("cookie", &admin)
            .body(body.clone());
        request = request.timeout(std::time::Duration::from_secs(120));
        let resp = request.send().await.unwrap();
        let own_status = resp.status().as_u16();
        let own: slicehub_app::error::AppError =
            serde_json::from_str(&resp.text().await.unwrap()).expect("the pages' error answer is an AppError");
        assert_eq!((own_status, own.status), (expected, expected), "{function} {shown}: {own:?}");
        assert_eq!(own.message, text, "{function} {shown}: the same words for the pages");
    }

    // A roster file of 4.6 MB (under the README's 5 MB) is read and answered line by
    // line; one over 5 MB is refused in words, not by the transport.
    let line = format!("student{{}},{},\n", "N".repeat(480));
    let csv: String = std::iter::once("username,display name,email\n".to_string())
        .chain((0..9_500).map(|i| line.replace("{}", &i.to_string())))
        .collect();
    assert!(csv.len() > 4_500_000 && csv.len() < 5_000_000, "{}", csv.len());
    let body = format!("code=CS-101&csv_base64={}", urlencode(&base64(csv.as_bytes())));
    let resp = post(&client(), &portal.url, Some(&admin), "check_roster", body).await;
    let status = resp.status().as_u16();
    let text = resp.text().await.unwrap();
    assert!(status == 200 || status == 400, "{status}: {}", &text[..text.len().min(300)]);
    assert!(!text.contains("length limit") && !text.contains("Deserialization"), "{}", &text[..text.len().min(300)]);
    let big = "x".repeat(5 * 1024 * 1024 + 1);
    let body = format!("code=CS-101&csv_base64={}", urlencode(&base64(big.as_bytes())));
    let resp = post(&client(), &portal.url, Some(&admin), "check_roster", body).await;
    assert_eq!(resp.status(), 400);
    assert!(resp.text().await.unwrap().contains("at most 5 MB"));
}

/// A database that fails under a running portal: the person who clicked gets plain words,
/// the log gets the database's own.
#[tokio::test]
async fn a_failing_database_is_answered_in_plain_words() {
    use slicehub_end2end::form::{client, post, sign_in};
    let portal = Portal::start(BIN.as_ref(), &[("SLICEHUB_ADMIN_PASSWORD", "db-broken-admin-1")]).await;
    let admin = sign_in(&client(), &portal.url, "admin", "db-broken-admin-1").await.unwrap();
    let url = format!("sqlite://{}", portal.dir.path().join("data/slicehub.db").display());
    let store = slicehub_core::store::Store::connect(&url, 1).await.unwrap();
    store.execute_admin("DROP TABLE audit_log").await.unwrap();
    store.close().await;
    let resp = post(&client(), &portal.url, Some(&admin), "add_course", "code=CS-999&title=Broken".into()).await;
    let status = resp.status().as_u16();
    let text = resp.text().await.unwrap();
    assert_eq!(status, 503, "{text}");
    assert!(text.contains("database is not answering"), "{text}");
    for internal in ["audit_log", "no such table", "database error", "sqlite", "SQLite"] {
        assert!(!text.contains(internal), "{text}");
    }
    assert!(portal.log().contains("audit_log"), "the operator's log says what failed");
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

/// The address a login is audited (and throttled) under: X-Forwarded-For only from a
/// trusted proxy, and then its right-most untrusted entry; a bad list exits 2.
#[tokio::test]
async fn x_forwarded_for_is_believed_only_from_trusted_proxies() {
    let portal = Portal::start(
        BIN.as_ref(),
        &[("SLICEHUB_SERVER_TRUSTED_PROXIES", "127.0.0.1")],
    )
    .await;
    let failed_login_from = |local: [u8; 4], forwarded: &'static str| {
        let url = portal.url.clone();
        async move {
            let client = reqwest::Client::builder()
                .local_address(std::net::IpAddr::from(local))
                .build()
                .unwrap();
            let resp = client
                .post(format!("{url}/api/login"))
                .header("content-type", "application/x-www-form-urlencoded")
                .header("origin", &url)
                .header("x-forwarded-for", forwarded)
                .body("username=nobody&password=wrong-password")
                .send()
                .await
                .unwrap();
            assert_eq!(resp.status(), 401);
        }
    };
    failed_login_from([127, 0, 0, 1], "203.0.113.9, 198.51.100.7").await;
    failed_login_from([127, 0, 0, 2], "198.51.100.99").await;
    // A proxy nobody named in server.trusted_proxies is pointed out once, in the log.
    let warned = |log: &str| log.matches("requests from 127.0.0.2 carry X-Forwarded-For").count();
    assert_eq!(warned(&portal.log()), 1, "{}", portal.log());
    assert!(!portal.log().contains("requests from 127.0.0.1 carry"), "a trusted proxy is fine");

    let db = portal.dir.path().join("data/slicehub.db");
    let store = slicehub_core::store::Store::connect(&format!("sqlite://{}", db.display()), 1)
        .await
        .unwrap();
    let audited: Vec<String> = store
        .recent_audit(Some("login.failure"), 5)
        .await
        .unwrap()
        .into_iter()
        .map(|e| e.detail)
        .collect();
    assert_eq!(
        audited,
        ["127.0.0.2", "198.51.100.7"],
        "an untrusted peer's header is ignored; a trusted one's right-most client is used"
    );
    failed_login_from([127, 0, 0, 2], "198.51.100.98").await;
    assert_eq!(warned(&portal.log()), 1, "said once, not at every request");

    let out = slicehub_end2end::cli::run(
        BIN,
        portal.dir.path(),
        &["check"],
        &[(
            "SLICEHUB_SERVER_TRUSTED_PROXIES",
            "10.0.0.0/8, proxy.example",
        )],
    );
    let text = slicehub_end2end::cli::text(&out);
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(
        text.contains("`server.trusted_proxies`") && text.contains("CIDR blocks"),
        "{text}"
    );
}

/// A deep link an instructor shares survives the sign-in: the page sends a visitor to
/// `/login?next=…`, and signing in there lands on that page; `next` never leads off the
/// site. Pages a visitor or student opens without JavaScript are whole, not "Loading…".
#[tokio::test]
async fn sign_in_returns_to_the_page_asked_for_and_pages_render_without_javascript() {
    use slicehub_end2end::classroom::{password_of, Classroom};
    use slicehub_end2end::form::{client, get_text, post, urlencode};
    let class = Classroom::start(BIN.as_ref(), &[]).await;
    let url = &class.portal.url;
    let deep = "/courses/CS-101/class?x=1&y=2";
    let resp = client().get(format!("{url}{deep}")).send().await.unwrap();
    assert_eq!(resp.status(), 303);
    let to_login = resp.headers()["location"].to_str().unwrap().to_string();
    assert_eq!(to_login, "/login?next=/courses/CS-101/class%3Fx%3D1%26y%3D2");
    let login_page = client().get(format!("{url}{to_login}")).send().await.unwrap().text().await.unwrap();
    assert!(login_page.contains(r#"name="next""#) && login_page.contains("/courses/CS-101/class?x=1"), "{login_page}");

    let cookies = class.enroll(&["nx-ann"]).await;
    let sign_in = |next: &'static str| {
        let url = url.clone();
        async move {
            let body = format!(
                "username=nx-ann&password={}&next={}",
                urlencode(&password_of("nx-ann")),
                urlencode(next)
            );
            let resp = post(&client(), &url, None, "login", body).await;
            resp.headers().get("location").map(|l| l.to_str().unwrap().to_string())
        }
    };
    assert_eq!(sign_in("/sessions?tab=history").await.as_deref(), Some("/sessions?tab=history"));
    for elsewhere in ["//evil.example/x", "/\\evil.example", "https://evil.example/", "/\t/evil.example", "/login?next=/x"] {
        // Home, or (a tab is a control character) refused before any sign-in.
        let went = sign_in(elsewhere).await;
        assert!(matches!(went.as_deref(), Some("/") | None), "next={elsewhere:?} led to {went:?}");
    }

    // Without JavaScript: the visitor's landing page offers the sign-in link and says
    // nothing is loading; the student's pages carry their content.
    let landing = client().get(format!("{url}/")).send().await.unwrap().text().await.unwrap();
    assert!(landing.contains(r#"href="/login""#), "no sign-in link: {landing}");
    for (path, content) in [("/sessions", "Start something"), ("/account", "password")] {
        let page = get_text(&format!("{url}{path}"), &cookies[0]).await;
        assert!(page.contains(content), "{path} lacks {content:?}");
        let before_script = page.split("<template").next().unwrap_or(&page);
        assert!(!before_script.contains("Loading…") && !before_script.contains("Reading your"), "{path} streams placeholders:\n{page}");
    }
}

/// The 2.7 MB wasm bundle goes out as the brotli (or gzip) copy the release build made,
/// is asked for again at each visit (304 until the portal is rebuilt), and there is an icon.
/// Needs the front end `scripts/test.sh` builds (`cargo leptos build --release --precompress`).
#[tokio::test]
async fn site_assets_are_compressed_revalidated_and_the_icon_is_there() {
    let portal = Portal::start(BIN.as_ref(), &[]).await;
    let client = reqwest::Client::new();
    let wasm = format!("{}/pkg/slicehub.wasm", portal.url);
    let plain = client.get(&wasm).send().await.unwrap();
    assert_eq!(plain.status(), 200);
    let full = plain.bytes().await.unwrap().len();
    let brotli = client.get(&wasm).header("accept-encoding", "br").send().await.unwrap();
    assert_eq!(brotli.headers()["content-encoding"], "br");
    assert_eq!(brotli.headers()["cache-control"], "no-cache");
    let modified = brotli.headers()["last-modified"].to_str().unwrap().to_string();
    let sent = brotli.bytes().await.unwrap().len();
    assert!(sent * 2 < full, "brotli sent {sent} of {full} bytes");
    let again = client.get(&wasm).header("if-modified-since", &modified).send().await.unwrap();
    assert_eq!(again.status(), 304, "a second visit downloads nothing");
    let gzip = client.get(format!("{}/pkg/slicehub.js", portal.url)).header("accept-encoding", "gzip").send().await.unwrap();
    assert_eq!(gzip.headers()["content-encoding"], "gzip");
    let icon = client.get(format!("{}/favicon.svg", portal.url)).send().await.unwrap();
    assert_eq!(icon.status(), 200);
    assert!(icon.text().await.unwrap().starts_with("<svg"));
}
