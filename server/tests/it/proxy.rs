//! Notebooks on their own origin, with the real JupyterLab image. The owner goes through
//! the portal's door to `SESSION.nb.localhost`, which gives the browser its launch nonce and
//! sends it back to the door for a ticket bound to that nonce; the owner redeems the
//! single-use ticket for that host's cookie, and runs code over the kernel WebSocket. The
//! same ticket link opened in another browser (no nonce, or its own) opens nothing. JupyterLab's own XSRF check holds
//! through the proxy; requests and WebSockets from other origins (another notebook host, the
//! portal) are refused; another student, an anonymous caller and, by default, an
//! administrator get nothing; an ended session's address says it ended. With
//! `notebooks.admin_access` on, an administrator gets in only after confirming, audited
//! once per visit. Needs the Docker engine and `slicehub/jupyterlab:offline`.

use std::time::{Duration, Instant};

use slicehub_end2end::classroom::Classroom;
use slicehub_end2end::form::{client, post, urlencode};
use slicehub_end2end::kernel::{run_code, ws_connect};
use slicehub_end2end::notebook::{client_for, set_cookies, NotebookVisit};
use slicehub_end2end::Portal;

/// The launch nonce cookie's name (without `server.secure_cookies`).
const NONCE: &str = "slicehub_launch";

const BIN: &str = env!("CARGO_BIN_EXE_slicehub");
const JUPYTERLAB: &str = "slicehub/jupyterlab:offline";
const BUSYBOX: &str = "slicehub/busybox:offline";

async fn start(portal: &Portal, cookie: &str, body: String) -> String {
    let resp = post(&client(), &portal.url, Some(cookie), "start_session", body).await;
    assert_eq!(resp.status(), 200, "{}", resp.text().await.unwrap_or_default());
    let view: serde_json::Value = resp.json().await.unwrap();
    view["id"].as_str().unwrap().to_string()
}

async fn until_ready(portal: &Portal, cookie: &str, id: &str) -> serde_json::Value {
    let until = Instant::now() + Duration::from_secs(120);
    loop {
        let resp = post(&client(), &portal.url, Some(cookie), "my_sessions", String::new()).await;
        let list: serde_json::Value = resp.json().await.unwrap();
        let me = list.as_array().unwrap().iter().find(|s| s["id"] == id).unwrap().clone();
        if me["state"] == "ready" {
            return me;
        }
        assert_ne!(me["state"], "failed", "{me}");
        assert!(Instant::now() < until, "session not ready: {me}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

async fn door(portal: &Portal, cookie: Option<&str>, path: &str) -> reqwest::Response {
    let mut request = client().get(format!("{}{path}", portal.url));
    if let Some(cookie) = cookie {
        request = request.header("cookie", cookie);
    }
    request.send().await.unwrap()
}

/// Steps 1 and 2 of the way in (`server/src/proxy/mod.rs`): the door sends the browser
/// (`nb`, its client for the notebook host) to the notebook host, which sets the browser's
/// nonce and sends it back to the door. The door's address with the nonce, and the nonce.
async fn to_the_door_with_a_nonce(portal: &Portal, cookie: &str, path: &str, nb: &reqwest::Client) -> (String, String) {
    let resp = door(portal, Some(cookie), path).await;
    assert_eq!(resp.status(), 303, "the door at {path} lets this user through");
    let there = resp.headers()["location"].to_str().unwrap().to_string();
    assert!(there.ends_with(&format!(".nb.localhost:{}{path}", portal.url.rsplit(':').next().unwrap())), "{there}");
    let begun = nb.get(&there).send().await.unwrap();
    assert_eq!(begun.status(), 303, "{there} sends a browser without a grant back to the door");
    let nonce = set_cookies(begun.headers())
        .into_iter()
        .find(|(name, ..)| name == NONCE)
        .map(|(_, value, _)| value)
        .expect("the notebook host gives the browser its nonce");
    let back = begun.headers()["location"].to_str().unwrap().to_string();
    assert_eq!(back, format!("{}{path}?slicehub_state={nonce}", portal.url));
    (back, nonce)
}

/// The whole way in, as the owner's browser takes it: door, nonce, door, ticket, grant.
async fn open_notebook(portal: &Portal, cookie: &str, path: &str) -> NotebookVisit {
    let host = format!("{}.nb.localhost", path.split('/').nth(3).unwrap());
    let (back, nonce) = to_the_door_with_a_nonce(portal, cookie, path, &client_for(portal, &host)).await;
    let resp = client().get(&back).header("cookie", cookie).send().await.unwrap();
    assert_eq!(resp.status(), 303, "the door mints a ticket");
    let launch = resp.headers()["location"].to_str().unwrap().to_string();
    redeem(portal, &launch, &nonce).await
}

/// Redeems `launch` in the browser holding `nonce`, and loads where it leads.
async fn redeem(portal: &Portal, launch: &str, nonce: &str) -> NotebookVisit {
    let (origin, path) = launch.split_at(launch.find("/_slicehub/").unwrap());
    let host = origin.split("://").nth(1).unwrap().split(':').next().unwrap().to_string();
    let mut visit = NotebookVisit {
        client: client_for(portal, &host),
        origin: origin.to_string(),
        cookies: [(NONCE.to_string(), nonce.to_string())].into(),
    };
    let redeemed = visit.get(path).await;
    assert_eq!(redeemed.status(), 303, "the ticket is redeemed");
    let next = redeemed.headers()["location"].to_str().unwrap().to_string();
    let page = visit.get(&next).await;
    assert_eq!(page.status(), 200, "{next} loads");
    visit
}

async fn audit_count(portal: &Portal, action: &str) -> usize {
    let url = format!("sqlite://{}", portal.dir.path().join("data/slicehub.db").display());
    let store = slicehub_core::store::Store::connect(&url, 1).await.unwrap();
    let n = store.recent_audit(Some(action), 1000).await.unwrap().len();
    store.close().await;
    n
}

#[tokio::test]
async fn the_owner_runs_code_on_the_notebook_origin_and_nobody_else_gets_in() {
    let class = Classroom::start(BIN.as_ref(), &[("SLICEHUB_NOTEBOOKS_ADMIN_ACCESS", "true")]).await;
    let portal = &class.portal;
    let cookies = class.enroll(&["px-alice", "px-bob"]).await;
    let (alice, bob) = (&cookies[0], &cookies[1]);
    let body = format!("course_id=1&profile=1g.10gb&image={}", urlencode(JUPYTERLAB));
    let id = start(portal, alice, body).await;
    let me = until_ready(portal, alice, &id).await;
    let open_url = me["open_url"].as_str().unwrap().to_string();
    let base = format!("/user/px-alice/{id}/");
    assert_eq!(open_url, format!("{base}lab"));

    // The portal's door sends the owner to the notebook's own host, which gives the
    // browser its launch nonce (a host-only, HttpOnly cookie) and sends it back to the
    // door, which answers with a ticket bound to that nonce.
    let port = portal.url.rsplit(':').next().unwrap();
    let origin = format!("http://{id}.nb.localhost:{port}");
    let nb = client_for(portal, &format!("{id}.nb.localhost"));
    let resp = door(portal, Some(alice), &open_url).await;
    assert_eq!(resp.status(), 303);
    assert_eq!(resp.headers()["location"], format!("{origin}{open_url}").as_str());
    let begun = nb.get(format!("{origin}{open_url}")).send().await.unwrap();
    assert_eq!(begun.status(), 303);
    let set = set_cookies(begun.headers());
    let [(name, nonce, attributes)] = set.as_slice() else { panic!("one cookie: {set:?}") };
    assert_eq!(name, NONCE);
    assert!(attributes.contains("HttpOnly") && !attributes.to_ascii_lowercase().contains("domain"), "{attributes}");
    let back = begun.headers()["location"].to_str().unwrap().to_string();
    assert_eq!(back, format!("{}{open_url}?slicehub_state={nonce}", portal.url));
    let resp = client().get(&back).header("cookie", alice.as_str()).send().await.unwrap();
    assert_eq!(resp.status(), 303);
    let launch = resp.headers()["location"].to_str().unwrap().to_string();
    assert!(launch.starts_with(&format!("{origin}/_slicehub/launch?ticket=")), "{launch}");
    let owners_nonce = format!("{NONCE}={nonce}");

    // The ticket link, sent to someone else (bob's browser): without the owner's nonce it
    // opens nothing, gives no grant, and the browser never sees the notebook.
    let bobs_browser = client_for(portal, &format!("{id}.nb.localhost"));
    let planted = bobs_browser.get(&launch).send().await.unwrap();
    assert_eq!(planted.status(), 404, "no nonce");
    assert!(set_cookies(planted.headers()).is_empty(), "no grant: {:?}", planted.headers());
    assert!(planted.text().await.unwrap().contains("This link has expired"));
    // Nor with a nonce of its own, got the way every browser gets one.
    let own = bobs_browser.get(format!("{origin}{open_url}")).send().await.unwrap();
    assert_eq!(own.status(), 303);
    let bobs_nonce = set_cookies(own.headers()).into_iter().find(|(n, ..)| n == NONCE).expect("bob's nonce").1;
    assert_ne!(&bobs_nonce, nonce);
    let bobs_cookie = format!("{NONCE}={bobs_nonce}");
    let planted = bobs_browser.get(&launch).header("cookie", &bobs_cookie).send().await.unwrap();
    assert_eq!(planted.status(), 404, "another browser's nonce");
    assert!(set_cookies(planted.headers()).is_empty(), "no grant: {:?}", planted.headers());
    let lab = bobs_browser.get(format!("{origin}{open_url}")).header("cookie", &bobs_cookie).send().await.unwrap();
    assert_eq!(lab.status(), 303, "bob's browser is sent to the portal's door, not to JupyterLab");
    let bobs_back = lab.headers()["location"].to_str().unwrap().to_string();
    assert!(bobs_back.starts_with(&format!("{}{open_url}?", portal.url)), "{bobs_back}");
    // And the door, with bob's login, mints him nothing with his own nonce.
    let resp = client().get(&bobs_back).header("cookie", bob.as_str()).send().await.unwrap();
    assert_eq!(resp.status(), 404);
    assert!(!resp.headers().contains_key("location"));

    // Redeemed in the owner's browser (the attempts elsewhere did not use it up): a
    // host-only cookie (no Domain), then JupyterLab itself, no token in sight.
    let redeemed = nb.get(&launch).header("cookie", &owners_nonce).send().await.unwrap();
    assert_eq!(redeemed.status(), 303);
    assert_eq!(redeemed.headers()["location"], open_url.as_str());
    let set = set_cookies(redeemed.headers());
    let [(name, grant, attributes)] = set.as_slice() else { panic!("one cookie: {set:?}") };
    assert_eq!(name, "slicehub_notebook");
    assert!(attributes.contains("HttpOnly") && !attributes.to_ascii_lowercase().contains("domain"), "{attributes}");
    // A ticket works once.
    assert_eq!(nb.get(&launch).header("cookie", &owners_nonce).send().await.unwrap().status(), 404);
    // Nor on another notebook host.
    let other = "s-zzzzzzzzzzzz.nb.localhost".to_string();
    let elsewhere = client_for(portal, &other)
        .get(launch.replace(&format!("{id}.nb.localhost"), &other))
        .header("cookie", &owners_nonce)
        .send()
        .await
        .unwrap();
    assert_eq!(elsewhere.status(), 404);

    let mut visit = NotebookVisit {
        client: nb.clone(),
        origin: origin.clone(),
        cookies: [("slicehub_notebook".to_string(), grant.clone()), (NONCE.to_string(), nonce.clone())].into(),
    };
    let lab = visit.get(&open_url).await;
    assert_eq!(lab.status(), 200);
    assert!(lab.text().await.unwrap().contains("JupyterLab"));
    assert!(visit.cookies.contains_key("_xsrf"), "JupyterLab set its XSRF cookie: {:?}", visit.cookies.keys());
    assert!(
        visit.cookies.keys().any(|k| k.starts_with("username-")),
        "JupyterLab logged this browser in with its own cookie: {:?}",
        visit.cookies.keys()
    );

    // JupyterLab's XSRF check works through the proxy: without the header, refused.
    let kernels = format!("{base}api/kernels");
    let python = serde_json::json!({"name": "python3"});
    let no_xsrf = visit.post_json(&kernels, &python, &origin, false).await;
    assert_eq!(no_xsrf.status(), 403, "{}", no_xsrf.text().await.unwrap_or_default());
    // From another notebook's origin, or the portal's: refused by the proxy.
    for foreign in [format!("http://s-zzzzzzzzzzzz.nb.localhost:{port}"), portal.url.clone()] {
        let resp = visit.post_json(&kernels, &python, &foreign, true).await;
        assert_eq!(resp.status(), 403, "a POST from {foreign}");
    }
    let kernel: serde_json::Value = visit.post_json(&kernels, &python, &origin, true).await.json().await.unwrap();
    let kernel_id = kernel["id"].as_str().expect("a kernel id").to_string();

    // Code over the kernel's WebSocket, from the notebook's own origin only.
    let channels = format!("{base}api/kernels/{kernel_id}/channels");
    let foreign = format!("http://s-zzzzzzzzzzzz.nb.localhost:{port}");
    assert_eq!(ws_connect(portal, &visit, &channels, &foreign).await.err(), Some(403));
    let mut socket = ws_connect(portal, &visit, &channels, &origin).await.expect("the owner's socket");
    let printed = run_code(&mut socket, "print(6 * 7)").await;
    assert_eq!(printed, "42\n");
    socket.close(None).await.ok();

    // Bob and an anonymous caller: the door does not open, and the notebook host gives
    // nothing without a grant (a GET is sent back to the portal's door).
    for cookie in [Some(bob.as_str()), None] {
        assert_eq!(door(portal, cookie, &open_url).await.status(), 404);
    }
    let stranger = client_for(portal, &format!("{id}.nb.localhost"));
    let resp = stranger.get(format!("{origin}{base}api/status?token=guess")).send().await.unwrap();
    assert_eq!(resp.status(), 303);
    let strangers_nonce = set_cookies(resp.headers()).into_iter().find(|(n, ..)| n == NONCE).expect("a nonce").1;
    assert_eq!(
        resp.headers()["location"],
        format!("{}{base}api/status?token=guess&slicehub_state={strangers_nonce}", portal.url).as_str()
    );
    let resp = stranger
        .post(format!("{origin}{kernels}"))
        .header("origin", &origin)
        .json(&python)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 404);

    // The administrator: one confirmation, one audit row, however many requests follow.
    let admins_browser = client_for(portal, &format!("{id}.nb.localhost"));
    let (back, admins_nonce) = to_the_door_with_a_nonce(portal, &class.admin, &open_url, &admins_browser).await;
    let confirm = client().get(&back).header("cookie", &class.admin).send().await.unwrap();
    assert_eq!(confirm.status(), 200);
    let page = confirm.text().await.unwrap();
    assert!(page.contains("Open px-alice's notebook") && page.contains("audit log"), "{page}");
    assert!(page.contains(&format!("action=\"{open_url}?slicehub_state={admins_nonce}\"")), "{page}");
    assert!(!page.contains("ticket="), "no ticket before the confirmation");
    assert_eq!(audit_count(portal, "session.admin_open").await, 0, "nothing yet: not confirmed");
    let confirmed = client()
        .post(&back)
        .header("cookie", &class.admin)
        .header("origin", &portal.url)
        .send()
        .await
        .unwrap();
    assert_eq!(confirmed.status(), 303);
    let launch = confirmed.headers()["location"].to_str().unwrap().to_string();
    let mut admin_visit = redeem(portal, &launch, &admins_nonce).await;
    for _ in 0..3 {
        assert_eq!(admin_visit.get(&format!("{base}api/status")).await.status(), 200);
    }
    assert_eq!(audit_count(portal, "session.admin_open").await, 1);

    // "Keep it running" inside JupyterLab answers for the student: not from an
    // administrator's visit, not from another origin; from the student's own page, yes.
    let keep = format!("{base}_slicehub/keep");
    let nothing = serde_json::json!({});
    assert_eq!(admin_visit.post_json(&keep, &nothing, &origin, false).await.status(), 403);
    let foreign = format!("http://s-zzzzzzzzzzzz.nb.localhost:{port}");
    assert_eq!(visit.post_json(&keep, &nothing, &foreign, false).await.status(), 403);
    assert_eq!(audit_count(portal, "session.keep").await, 0, "nobody kept it yet");
    assert_eq!(visit.post_json(&keep, &nothing, &origin, false).await.status(), 204);
    assert_eq!(audit_count(portal, "session.keep").await, 1);

    // After a stop: the grant opens nothing but word that the session ended (the tab left
    // open in JupyterLab asks for it), and the door says so too.
    let resp = post(&client(), &portal.url, Some(alice), "stop_session", format!("id={id}")).await;
    assert_eq!(resp.status(), 200);
    let after = visit.get(&open_url).await;
    assert_eq!(after.status(), 410, "JupyterLab is no longer reached");
    assert!(after.text().await.unwrap().contains("This session has ended"));
    let told: serde_json::Value = visit.get(&format!("{base}_slicehub/idle")).await.json().await.unwrap();
    assert_eq!(told["ended"]["reason"], format!("stopped by px-alice"), "{told}");
    assert!(told["ends_at_ms"].is_null(), "no time left is counted for an ended session: {told}");
    // Without the grant nobody learns that it ended, or why: the host sends them to the door.
    let outsider = client_for(portal, &format!("{id}.nb.localhost"))
        .get(format!("{origin}{base}_slicehub/idle"))
        .send()
        .await
        .unwrap();
    assert_eq!(outsider.status(), 303);
    assert!(!outsider.text().await.unwrap().contains("stopped by"), "the reason reached someone without the grant");
    let gone = door(portal, Some(alice), &open_url).await;
    assert_eq!(gone.status(), 410);
    assert!(gone.text().await.unwrap().contains("This session has ended"));
}

#[tokio::test]
async fn administrators_cannot_open_notebooks_unless_the_operator_allows_it() {
    let class = Classroom::start(BIN.as_ref(), &[("SLICEHUB_SESSIONS_DEFAULT_IMAGE", BUSYBOX)]).await;
    let portal = &class.portal;
    let cookies = class.enroll(&["ad-carol"]).await;
    let body = format!("course_id=1&profile=1g.10gb&image={}&command=sleep+60", urlencode(BUSYBOX));
    let id = start(portal, &cookies[0], body).await;
    until_ready(portal, &cookies[0], &id).await;
    let path = format!("/user/ad-carol/{id}/lab");
    assert_eq!(door(portal, Some(&class.admin), &path).await.status(), 404);
    let forced = client()
        .post(format!("{}{path}", portal.url))
        .header("cookie", &class.admin)
        .header("origin", &portal.url)
        .send()
        .await
        .unwrap();
    assert_eq!(forced.status(), 404, "no confirmation opens what the operator closed");
    assert_eq!(audit_count(portal, "session.admin_open").await, 0);
    let resp = post(&client(), &portal.url, Some(&cookies[0]), "stop_session", format!("id={id}")).await;
    assert_eq!(resp.status(), 200);
}

/// SIGTERM while a student has 5 notebook WebSockets and 20 event streams open: the portal
/// exits cleanly within 5 s; started again, it adopts the running notebook, which still
/// answers on its own origin.
#[tokio::test]
async fn sigterm_with_open_notebook_sockets_exits_quickly_and_the_notebook_survives() {
    let class = Classroom::start(BIN.as_ref(), &[]).await;
    let cookies = class.enroll(&["st-hana"]).await;
    let mut portal = class.portal;
    let hana = &cookies[0];
    let body = format!("course_id=1&profile=1g.10gb&image={}", urlencode(JUPYTERLAB));
    let id = start(&portal, hana, body).await;
    until_ready(&portal, hana, &id).await;
    let base = format!("/user/st-hana/{id}/");
    let visit = open_notebook(&portal, hana, &format!("{base}lab")).await;
    let mut sockets = Vec::new();
    for _ in 0..5 {
        let socket = ws_connect(&portal, &visit, &format!("{base}api/events/subscribe"), &visit.origin).await;
        sockets.push(socket.expect("a notebook WebSocket"));
    }
    let mut streams = Vec::new();
    for _ in 0..20 {
        let resp = reqwest::Client::new()
            .get(format!("{}/api/sessions/events", portal.url))
            .header("cookie", hana.as_str())
            .send()
            .await
            .unwrap();
        streams.push(resp);
    }
    let (status, took) = portal.terminate().await;
    assert!(status.success(), "{status}\n{}", portal.log());
    assert!(took < Duration::from_secs(5), "took {took:?}");
    drop((sockets, streams));

    portal.restart().await;
    let me = until_ready(&portal, hana, &id).await;
    assert_eq!(me["state"], "ready", "adopted, not ended: {me}");
    let mut again = open_notebook(&portal, hana, &format!("{base}lab")).await;
    assert_eq!(again.get(&format!("{base}api/status")).await.status(), 200);
    let resp = post(&client(), &portal.url, Some(hana), "stop_session", format!("id={id}")).await;
    assert_eq!(resp.status(), 200);
}

/// The door checks more than ownership: a student on a one-time password is sent to change
/// it first, and a student dropped from the course gets nothing (their notebook ended with
/// the drop, and says why).
#[tokio::test]
async fn a_dropped_student_or_one_on_a_one_time_password_cannot_open_their_notebook() {
    let class = Classroom::start(BIN.as_ref(), &[]).await;
    let portal = &class.portal;
    let cookies = class.enroll(&["px-dan", "px-eve"]).await;
    let (dan, eve) = (&cookies[0], &cookies[1]);
    let body = format!("course_id=1&profile=1g.10gb&image={}", urlencode(JUPYTERLAB));
    let dans = start(portal, dan, body.clone()).await;
    let eves = start(portal, eve, body).await;
    let dan_url = until_ready(portal, dan, &dans).await["open_url"].as_str().unwrap().to_string();
    let eve_url = until_ready(portal, eve, &eves).await["open_url"].as_str().unwrap().to_string();
    assert_eq!(door(portal, Some(dan), &dan_url).await.status(), 303, "dan opens his own notebook");

    // An administrator resets eve's password: with the one-time one she reaches only her
    // account page, never a launch ticket.
    let out = portal.cli(&["user", "passwd", "px-eve"], "");
    let otp = out.rsplit("one-time password: ").next().unwrap().trim().to_string();
    let eve = slicehub_end2end::form::sign_in(&client(), &portal.url, "px-eve", &otp).await.expect("eve signs in");
    let resp = door(portal, Some(&eve), &eve_url).await;
    assert_eq!(resp.status(), 303);
    assert_eq!(resp.headers()["location"], "/account", "a one-time password opens nothing else");

    // Dropped from the course: the door is shut and the notebook ended with the drop.
    let resp = post(&client(), &portal.url, Some(&class.admin), "drop_student", "code=CS-101&username=px-dan".into()).await;
    assert_eq!(resp.status(), 200, "{}", resp.text().await.unwrap_or_default());
    let resp = door(portal, Some(dan), &dan_url).await;
    assert_eq!(resp.status(), 404);
    assert!(!resp.headers().contains_key("location"), "no ticket for a dropped student");
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let history: serde_json::Value = post(&client(), &portal.url, Some(dan), "session_history", "page=0".into())
            .await
            .json()
            .await
            .unwrap_or_default();
        let state = history["sessions"].as_array().and_then(|l| l.iter().find(|s| s["id"] == dans.as_str()).cloned());
        if let Some(s) = state.filter(|s| s["state"] == "ended") {
            assert_eq!(s["reason"], "px-dan was removed from CS-101 by admin", "{s}");
            break;
        }
        assert!(Instant::now() < deadline, "dan's notebook did not end with the drop");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}
