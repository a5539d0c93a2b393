//! Script on a notebook's origin, in a real browser, tries what a student's planted page
//! would: read or set the portal's cookies, call portal server functions with the
//! visitor's cookie, frame portal pages, and open another student's notebook. Every
//! attempt fails, checked from the browser's side and then from the portal's. The visitor
//! is an administrator (`notebooks.admin_access` on), the most valuable victim. Before
//! any of that, the student's own launch link planted in the visitor's browser opens
//! nothing: it was minted for the student's browser.
//! Needs the Docker engine, `slicehub/jupyterlab:offline` and Chromium.

use std::time::Duration;

use fantoccini::Locator;
use slicehub_end2end::classroom::{Classroom, ADMIN_PASSWORD};
use slicehub_end2end::cli::built_portal;
use slicehub_end2end::form::{client, post, urlencode};
use slicehub_end2end::{Browser, Portal};

const JUPYTERLAB: &str = "slicehub/jupyterlab:offline";

/// Runs in the notebook page; reports what each attempt got.
const ATTACK: &str = r#"
const [portal, victim, done] = arguments;
const out = {};
out.origin = location.origin;
out.cookies_seen = document.cookie;
for (const c of ["slicehub_session=planted; path=/",
                 "slicehub_session=planted; path=/; domain=localhost",
                 "slicehub_session=planted; path=/; domain=nb.localhost"]) {
  document.cookie = c;
}
const attempt = async (name, url, init) => {
  try {
    const r = await fetch(url, init);
    out[name] = "answered " + r.type + " " + r.status + " " + (r.type === "opaque" ? "" : await r.text());
  } catch (e) { out[name] = "blocked: " + e; }
};
const form = { "content-type": "application/x-www-form-urlencoded" };
await attempt("read_portal", portal + "/api/list_users", { method: "POST", credentials: "include", headers: form });
await attempt("write_portal", portal + "/api/add_account", { method: "POST", credentials: "include",
  mode: "no-cors", headers: form, referrer: portal + "/admin/users",
  body: "username=pwned&display_name=pwned&email=&admin=on" });
await attempt("read_victim", victim, { credentials: "include" });
const frame = document.createElement("iframe");
frame.id = "portal-frame";
frame.src = portal + "/admin/users";
document.body.appendChild(frame);
setTimeout(() => done(out), 2000);
"#;

async fn ready_notebook(portal: &Portal, cookie: &str) -> String {
    let body = format!("course_id=1&profile=1g.10gb&image={}", urlencode(JUPYTERLAB));
    let resp = post(&client(), &portal.url, Some(cookie), "start_session", body).await;
    assert_eq!(resp.status(), 200);
    let id = resp.json::<serde_json::Value>().await.unwrap()["id"].as_str().unwrap().to_string();
    let until = std::time::Instant::now() + Duration::from_secs(150);
    loop {
        let list: serde_json::Value = post(&client(), &portal.url, Some(cookie), "my_sessions", String::new())
            .await
            .json()
            .await
            .unwrap();
        let me = list.as_array().unwrap().iter().find(|s| s["id"] == id.as_str()).unwrap().clone();
        if me["state"] == "ready" {
            return id;
        }
        assert_ne!(me["state"], "failed", "{me}");
        assert!(std::time::Instant::now() < until, "not ready: {me}");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// A launch link from the student's own way in (her login at the door, her browser's nonce
/// from the notebook host), as she could copy it and send it to someone.
async fn students_launch_link(portal: &Portal, cookie: &str, path: &str, host: &str) -> String {
    let door = client().get(format!("{}{path}", portal.url)).header("cookie", cookie).send().await.unwrap();
    assert_eq!(door.status(), 303, "the door lets the owner through");
    let nb = slicehub_end2end::notebook::client_for(portal, host);
    let begun = nb.get(door.headers()["location"].to_str().unwrap()).send().await.unwrap();
    assert_eq!(begun.status(), 303, "the notebook host sends her browser back with its nonce");
    let back = begun.headers()["location"].to_str().unwrap().to_string();
    let minted = client().get(&back).header("cookie", cookie).send().await.unwrap();
    assert_eq!(minted.status(), 303, "the door mints her a ticket");
    let launch = minted.headers()["location"].to_str().unwrap().to_string();
    assert!(launch.contains("/_slicehub/launch?ticket="), "{launch}");
    launch
}

#[tokio::test]
async fn script_on_a_notebook_origin_reaches_neither_the_portal_nor_other_notebooks() {
    let class = Classroom::start(&built_portal(), &[("SLICEHUB_NOTEBOOKS_ADMIN_ACCESS", "true")]).await;
    let portal = &class.portal;
    let (mal, vic) = (format!("mal{}", std::process::id()), format!("vic{}", std::process::id()));
    let cookies = class.enroll(&[&mal, &vic]).await;
    let (mal_id, vic_id) = tokio::join!(ready_notebook(portal, &cookies[0]), ready_notebook(portal, &cookies[1]));
    let port = portal.url.rsplit(':').next().unwrap();
    let mal_origin = format!("http://{mal_id}.nb.localhost:{port}");
    let victim_url = format!("http://{vic_id}.nb.localhost:{port}/user/{vic}/{vic_id}/api/contents");

    let browser = Browser::start().await;
    browser.sign_in(&portal.url, "admin", ADMIN_PASSWORD).await;
    let portal_cookie = browser.client.get_named_cookie("slicehub_session").await.unwrap().value().to_string();

    // The student sends the administrator her own launch link (a link in a message, or a
    // redirect from any page): minted for her browser's nonce, it opens nothing here and
    // leaves no grant behind (the door below still asks to confirm).
    let mal_host = format!("{mal_id}.nb.localhost");
    let planted = students_launch_link(portal, &cookies[0], &format!("/user/{mal}/{mal_id}/lab"), &mal_host).await;
    browser.client.goto(&planted).await.unwrap();
    browser.wait_text("h1", "This link has expired").await;
    assert!(
        browser.client.get_named_cookie("slicehub_notebook").await.is_err(),
        "a planted ticket gave the administrator's browser the student's grant"
    );

    // Opening a student's notebook takes one explicit step.
    browser.client.goto(&format!("{}/user/{mal}/{mal_id}/lab", portal.url)).await.unwrap();
    browser.wait_text("h1", "Open a student's notebook?").await;
    browser.check_page("isolation-1-admin-confirm").await;
    browser.click("form button[type=submit]").await;
    browser
        .wait_for_within(".jp-LauncherCard", Duration::from_secs(90))
        .await;
    let here = browser.client.current_url().await.unwrap();
    assert_eq!(here.origin().ascii_serialization(), mal_origin, "JupyterLab runs on its own origin");
    browser.screenshot_widths("isolation-2-notebook-origin").await;

    let result = browser
        .client
        .execute_async(ATTACK, vec![serde_json::json!(portal.url), serde_json::json!(victim_url)])
        .await
        .unwrap();
    eprintln!("what script on the notebook origin got: {result:#}");
    let out = |k: &str| result[k].as_str().unwrap_or_default().to_string();
    assert_eq!(out("origin"), mal_origin);
    assert!(!out("cookies_seen").contains("slicehub_session"), "{}", out("cookies_seen"));
    assert!(!out("cookies_seen").contains("slicehub_notebook"), "the grant is HttpOnly: {}", out("cookies_seen"));
    assert!(out("read_portal").starts_with("blocked"), "portal read from a notebook: {}", out("read_portal"));
    assert!(!out("read_portal").contains(&vic), "{}", out("read_portal"));
    assert!(out("read_victim").starts_with("blocked"), "another notebook read: {}", out("read_victim"));

    // The framed portal page did not render: Chromium shows its error page instead.
    let frame = browser.client.find(Locator::Id("portal-frame")).await.unwrap();
    frame.enter_frame().await.unwrap();
    let framed = browser
        .client
        .find(Locator::Css("body"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap_or_default();
    assert!(!framed.contains(&vic) && !framed.contains("Users"), "the portal rendered in a notebook's frame: {framed}");
    browser.client.enter_parent_frame().await.unwrap();
    // The browser said why: the portal's frame-ancestors rule. Those are the attack's own
    // errors; anything else logged here is not.
    let logged = browser.console_errors().await;
    assert!(
        logged.iter().any(|e| e.contains("frame-ancestors 'none'")),
        "the framing was not refused by the portal's policy: {logged:?}"
    );
    let other: Vec<&String> = logged.iter().filter(|e| !e.contains("frame-ancestors 'none'")).collect();
    assert!(other.is_empty(), "the browser console logged errors: {other:?}");

    // From the portal's side: the administrator's login is untouched, no account was made.
    browser.open(&format!("{}/account", portal.url)).await;
    let after = browser.client.get_named_cookie("slicehub_session").await.unwrap().value().to_string();
    assert_eq!(after, portal_cookie, "the notebook could not replace the portal's cookie");
    browser.wait_text(".who", "admin").await;
    let users = portal.cli(&["user", "list", "--json"], "");
    assert!(!users.contains("pwned"), "{users}");

    // Another student's notebook host, opened directly, leads back to the portal's door,
    // which asks the administrator to confirm; nothing of the notebook is served.
    browser.client.goto(&victim_url).await.unwrap();
    browser.wait_text("h1", "Open a student's notebook?").await;
    assert!(browser.client.current_url().await.unwrap().as_str().starts_with(&portal.url));

    // A launch link used twice (or forged) explains itself on the notebook host.
    browser.client.goto(&format!("{mal_origin}/_slicehub/launch?ticket=used-or-made-up")).await.unwrap();
    browser.wait_text("h1", "This link has expired").await;
    browser.check_page("isolation-3-link-expired").await;
    browser.close().await;

    // The student herself: her notebook still works end to end on its own origin
    // (end2end/tests/it/notebook.rs runs a cell, uploads and downloads a file).
    for (cookie, id) in [(&cookies[0], &mal_id), (&cookies[1], &vic_id)] {
        post(&client(), &portal.url, Some(cookie), "stop_session", format!("id={id}")).await;
    }
    for user in [&mal, &vic] {
        let _ = std::process::Command::new("sh")
            .args(["-c", &format!("docker volume ls -q | grep -E -- '-home-[0-9]+-{user}-' | xargs -r docker volume rm")])
            .output();
    }
}
