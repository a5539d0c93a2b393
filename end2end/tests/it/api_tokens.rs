//! Personal access tokens and the REST API in a real browser: a token made on the account
//! page is shown once, works with `Authorization: Bearer`, records its last use and stops
//! when revoked; only the scopes the account may hold are offered; the API's documentation
//! page lists every route of the OpenAPI document with no script and nothing from
//! elsewhere; and a page of another site cannot make a signed-in browser use the API.

use std::collections::BTreeSet;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use fantoccini::Locator;
use slicehub_end2end::classroom::{password_of, Classroom, ADMIN_PASSWORD, COURSE};
use slicehub_end2end::cli::built_portal;
use slicehub_end2end::form::{client, post};
use slicehub_end2end::{Browser, Portal};

const TOKEN_NAME: &str = "grades to the LMS";

fn now_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis() as i64
}

/// `YYYY-MM-DD HH:MM UTC` of a Unix time in milliseconds, as the account page writes it.
fn utc_minute(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms).map(|t| t.format("%Y-%m-%d %H:%M UTC").to_string()).unwrap_or_default()
}

async fn count(browser: &Browser, css: &str) -> usize {
    browser.client.find_all(Locator::Css(css)).await.unwrap().len()
}

/// The cells of the token rows, each row's cells' text.
async fn token_rows(browser: &Browser) -> Vec<Vec<String>> {
    let value = browser
        .client
        .execute(
            "return Array.from(document.querySelectorAll('.tokens tr.token-row'))
               .map(tr => Array.from(tr.querySelectorAll('td')).map(td => td.innerText.trim()));",
            vec![],
        )
        .await
        .expect("reading the token rows");
    serde_json::from_value(value).expect("rows of cells")
}

/// The browser's login cookie as `name=value`.
async fn session_cookie(browser: &Browser) -> String {
    let cookies = browser.client.get_all_cookies().await.expect("the browser's cookies");
    let cookie = cookies
        .iter()
        .find(|c| c.name() == "slicehub_session")
        .expect("the browser holds the login cookie");
    format!("{}={}", cookie.name(), cookie.value())
}

/// A screenshot of the whole page at `width` (the window made as tall as the page), as
/// `NAME-full-WIDTH.png`; the window goes back to 1280 × 1400.
async fn full_page(browser: &Browser, name: &str, width: u32) {
    browser.client.set_window_size(width, 1400).await.expect("window size");
    tokio::time::sleep(Duration::from_millis(300)).await;
    let height = browser
        .client
        .execute("return document.documentElement.scrollHeight;", vec![])
        .await
        .ok()
        .and_then(|v| v.as_u64())
        .unwrap_or(1400)
        .clamp(400, 8000) as u32;
    browser.client.set_window_size(width, height + 150).await.expect("window size");
    tokio::time::sleep(Duration::from_millis(300)).await;
    browser.screenshot(&format!("{name}-full-{width}")).await;
    browser.client.set_window_size(1280, 1400).await.expect("window size");
}

async fn api_get(url: &str, path: &str, auth: Option<&str>, cookie: Option<&str>) -> reqwest::Response {
    let mut request = client().get(format!("{url}/api/v1{path}"));
    if let Some(secret) = auth {
        request = request.bearer_auth(secret);
    }
    if let Some(cookie) = cookie {
        request = request.header("cookie", cookie);
    }
    request.send().await.expect("the API answers")
}

#[tokio::test]
async fn a_token_made_on_the_account_page_works_once_shown_and_stops_when_revoked() {
    let class = Classroom::start(&built_portal(), &[]).await;
    let url = class.portal.url.clone();
    class.enroll(&["sam", "ivy"]).await;
    class.portal.cli(&["course", "instructor", COURSE, "ivy"], "");
    let browser = Browser::start().await;

    // A student of the course (own password: nothing to change first).
    browser.sign_in(&url, "sam", &password_of("sam")).await;
    browser.open(&format!("{url}/account")).await;
    browser.wait_for(".tokens form.token-form").await;
    browser.wait_text(".tokens .no-tokens", "You have no tokens.").await;
    assert!(
        browser.wait_for(".token-form input[name=read]").await.is_selected().await.unwrap(),
        "read is ticked to begin with"
    );
    assert!(!browser.wait_for(".token-form input[name=sessions]").await.is_selected().await.unwrap());
    for refused in ["admin", "course_manage"] {
        assert_eq!(
            count(&browser, &format!(".token-form input[name={refused}]")).await,
            0,
            "a student is offered no {refused} scope"
        );
    }
    let scopes = browser.wait_for(".token-scopes").await.text().await.unwrap();
    assert!(!scopes.contains("admin") && !scopes.contains("course:manage"), "{scopes}");

    // Make a token for reads and sessions, for 7 days.
    browser.fill(".token-form input[name=name]", TOKEN_NAME).await;
    browser.click(".token-form input[name=sessions]").await;
    browser
        .wait_for(".token-form select[name=days]")
        .await
        .select_by_value("7")
        .await
        .expect("choosing 7 days");
    let before = now_ms();
    browser.click(".token-form button[type=submit]").await;
    let secret = browser.wait_for(".tokens .token-secret").await.text().await.unwrap();
    let after = now_ms();
    assert!(secret.starts_with("shp_") && secret.len() > 20, "{secret:?}");
    browser.wait_text(".tokens .new-token", "not shown again").await;
    browser.wait_text(".tokens tr.token-row", TOKEN_NAME).await;
    let rows = token_rows(&browser).await;
    assert_eq!(rows.len(), 1, "{rows:?}");
    let row = &rows[0];
    assert_eq!(row[0], TOKEN_NAME, "{row:?}");
    assert_eq!(row[1], "read, sessions", "{row:?}");
    let week = 7 * 86_400_000;
    let expiries: Vec<String> = (((before + week) / 60_000)..=((after + week) / 60_000))
        .map(|minute| utc_minute(minute * 60_000))
        .collect();
    assert!(expiries.contains(&row[2]), "expires {:?}, not one of {expiries:?}", row[2]);
    assert_eq!(row[3], "never", "{row:?}");
    browser.check_page("account-token-made").await;
    full_page(&browser, "account-token-made", 390).await;
    full_page(&browser, "account-token-made", 1280).await;

    // The token works as sam, and only with the token.
    let me = api_get(&url, "/me", Some(&secret), None).await;
    assert_eq!(me.status(), 200);
    let me: serde_json::Value = me.json().await.unwrap();
    assert_eq!(me["username"], "sam", "{me}");
    assert_eq!(api_get(&url, "/me", None, None).await.status(), 401);

    // Once the page is read again the secret is gone from it (and from what the server
    // sends), the token stays listed, and its last use says when and from where.
    browser.open(&format!("{url}/account")).await;
    browser.wait_text(".tokens tr.token-row", TOKEN_NAME).await;
    assert_eq!(count(&browser, ".token-secret").await, 0);
    let dom = browser.client.source().await.unwrap();
    assert!(!dom.contains(&secret), "the secret is still in the page");
    let cookie = session_cookie(&browser).await;
    let served = client()
        .get(format!("{url}/account"))
        .header("cookie", &cookie)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(served.contains(TOKEN_NAME), "the served page lists the token");
    assert!(!served.contains(&secret), "the served page holds the secret");
    let rows = token_rows(&browser).await;
    assert_eq!(rows.len(), 1, "{rows:?}");
    let last_used = &rows[0][3];
    assert!(last_used != "never" && last_used.ends_with(" from 127.0.0.1"), "last used {last_used:?}");
    let used_at = last_used.trim_end_matches(" from 127.0.0.1");
    assert!(
        (before / 60_000..=now_ms() / 60_000).any(|m| utc_minute(m * 60_000) == used_at),
        "last used {used_at:?} is not now"
    );
    browser.check_page("account-token-listed").await;
    full_page(&browser, "account-token-listed", 390).await;
    full_page(&browser, "account-token-listed", 1280).await;

    // Revoke it: the dialog asks first, then the row goes and the token stops working.
    browser.click(".tokens tr.token-row button[aria-haspopup=dialog]").await;
    browser.wait_text(".confirm-question", TOKEN_NAME).await;
    browser.wait_text(".confirm-dialog button.confirm-yes", "Revoke token").await;
    browser.screenshot("account-token-revoke-confirm").await;
    browser.click(".confirm-dialog button.confirm-yes").await;
    browser.wait_text(".tokens .no-tokens", "You have no tokens.").await;
    assert_eq!(count(&browser, ".tokens tr.token-row").await, 0);
    assert_eq!(api_get(&url, "/me", Some(&secret), None).await.status(), 401);
    browser.open(&format!("{url}/account")).await;
    browser.wait_text(".tokens .no-tokens", "You have no tokens.").await;
    assert_eq!(count(&browser, ".tokens tr.token-row").await, 0);
    browser.sign_out().await;

    // An instructor may give a token course:manage, still not admin.
    browser.sign_in(&url, "ivy", &password_of("ivy")).await;
    browser.open(&format!("{url}/account")).await;
    browser.wait_for(".token-form input[name=course_manage]").await;
    assert_eq!(count(&browser, ".token-form input[name=admin]").await, 0);
    browser.wait_text(".token-scopes", "course:manage").await;
    full_page(&browser, "account-tokens-instructor", 390).await;
    browser.close().await;
}

#[tokio::test]
async fn the_api_docs_page_lists_every_route_and_needs_no_script() {
    let portal = Portal::start(&built_portal(), &[("SLICEHUB_ADMIN_PASSWORD", ADMIN_PASSWORD)]).await;
    let url = portal.url.clone();
    let doc: serde_json::Value = client()
        .get(format!("{url}/api/v1/openapi.json"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .expect("the OpenAPI document is JSON");
    assert_eq!(doc["servers"][0]["url"], "/api/v1", "{}", doc["servers"]);
    // Every operation: (METHOD, /api/v1PATH, the scope its token needs).
    let mut documented = BTreeSet::new();
    for (path, item) in doc["paths"].as_object().expect("paths") {
        for (method, op) in item.as_object().expect("a path item") {
            if !["get", "post", "put", "delete", "patch"].contains(&method.as_str()) {
                continue;
            }
            let scopes: Vec<String> = op["security"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|req| req["token"].as_array())
                .flatten()
                .filter_map(|s| s.as_str().map(String::from))
                .collect();
            let scope = if scopes.is_empty() { "any".to_string() } else { scopes.join(", ") };
            documented.insert((method.to_uppercase(), format!("/api/v1{path}"), scope));
        }
    }
    assert!(documented.len() > 30, "{documented:?}");

    let browser = Browser::start().await;
    browser.client.goto(&format!("{url}/api/v1/docs")).await.unwrap();
    browser.wait_text("main.api-docs h1", "SliceHub API").await;
    let text = browser.wait_for("main.api-docs").await.text().await.unwrap();
    for path in ["/api/v1/sessions", "/api/v1/courses/{code}/roster", "/api/v1/me", "/api/v1/tokens/{id}"] {
        assert!(text.contains(path), "the page does not list {path}");
    }
    for (_, path, _) in &documented {
        assert!(text.contains(path.as_str()), "the page does not list {path}");
    }
    // Each row is one operation of the document, with the scope its token needs.
    let rows: Vec<Vec<String>> = serde_json::from_value(
        browser
            .client
            .execute(
                "return Array.from(document.querySelectorAll('main.api-docs tbody tr'))
                   .map(tr => Array.from(tr.querySelectorAll('td')).slice(0, 3).map(td => td.innerText.trim()));",
                vec![],
            )
            .await
            .unwrap(),
    )
    .unwrap();
    let listed: BTreeSet<(String, String, String)> =
        rows.iter().map(|r| (r[0].clone(), r[1].clone(), r[2].clone())).collect();
    assert_eq!(rows.len(), listed.len(), "an operation is listed twice");
    let missing: Vec<_> = documented.difference(&listed).collect();
    let extra: Vec<_> = listed.difference(&documented).collect();
    assert!(missing.is_empty() && extra.is_empty(), "not listed: {missing:?}\nnot in the document: {extra:?}");

    // No script, nothing from another origin, and the portal's stylesheet applied.
    let loaded = browser
        .client
        .execute(
            "return {
               scripts: document.scripts.length,
               origin: location.origin,
               resources: performance.getEntriesByType('resource').map(e => e.name),
               refs: Array.from(document.querySelectorAll('[src], link[href]')).map(e => e.src || e.href),
               sheets: Array.from(document.styleSheets).map(s => s.href + ' ' + s.cssRules.length),
               font: getComputedStyle(document.body).fontFamily,
             };",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(loaded["scripts"], 0, "{loaded}");
    let origin = loaded["origin"].as_str().unwrap().to_string();
    assert_eq!(origin, url);
    for list in ["resources", "refs"] {
        for name in loaded[list].as_array().unwrap() {
            let name = name.as_str().unwrap();
            assert!(name.starts_with(&format!("{origin}/")), "{list}: {name} is from elsewhere");
        }
    }
    let sheets = loaded["sheets"].as_array().unwrap();
    assert_eq!(sheets.len(), 1, "{loaded}");
    let sheet = sheets[0].as_str().unwrap();
    assert!(sheet.starts_with(&format!("{origin}/pkg/slicehub.css ")) && !sheet.ends_with(" 0"), "{sheet}");
    assert!(!loaded["font"].as_str().unwrap().to_lowercase().contains("times"), "{loaded}");
    // Its links lead somewhere.
    for link in ["/api/v1/openapi.json", "/account"] {
        assert_eq!(count(&browser, &format!("main.api-docs a[href='{link}']")).await, 1, "{link}");
    }
    // Served without a script and with the portal's policy.
    let response = client().get(format!("{url}/api/v1/docs")).send().await.unwrap();
    assert_eq!(response.status(), 200);
    let csp = response.headers()["content-security-policy"].to_str().unwrap().to_string();
    assert!(csp.contains("default-src 'self'"), "{csp}");
    assert!(!response.text().await.unwrap().contains("<script"));

    browser.check_page("api-docs").await;
    full_page(&browser, "api-docs", 390).await;
    full_page(&browser, "api-docs", 1280).await;
    browser.close().await;

    // A parameter the document places in the path is one of the path's `{…}`: a client
    // generated from it must not send a query's cursor or filter as part of the path.
    let mut misplaced = Vec::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            for param in op["parameters"].as_array().into_iter().flatten() {
                let name = param["name"].as_str().unwrap_or_default();
                if param["in"] == "path" && !path.contains(&format!("{{{name}}}")) {
                    misplaced.push(format!("{} {path}: {name}", method.to_uppercase()));
                }
            }
        }
    }
    assert!(misplaced.is_empty(), "path parameters not in their path:\n{}", misplaced.join("\n"));
}

/// `METHOD PATH STATUS` of each answer under `/api/v1/` in this part of the portal's log
/// (tower-http's trace lines, their colours taken out).
fn api_answers(log: &str) -> Vec<String> {
    let mut plain = String::with_capacity(log.len());
    let mut chars = log.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            plain.push(c);
        }
    }
    plain
        .lines()
        .filter(|l| l.contains("finished processing request") && l.contains(" uri=/api/v1/"))
        .filter_map(|l| {
            let method = l.split("method=").nth(1)?.split_whitespace().next()?;
            let uri = l.split(" uri=").nth(1)?.split_whitespace().next()?;
            let status = l.split("status=").nth(1)?.split_whitespace().next()?;
            Some(format!("{method} {uri} {status}"))
        })
        .collect()
}

/// A page of another origin whose script tries the API with the visitor's cookie and
/// writes what it got into `#out`.
fn attack_page(portal: &str) -> String {
    format!(
        r#"<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Totally harmless</title></head>
<body><h1>Win a GPU</h1><pre id="out">working…</pre>
<script>
const portal = {portal:?};
async function attempt(label, url, init) {{
  try {{
    const r = await fetch(url, init);
    let body = '';
    try {{ body = await r.text(); }} catch (e) {{ body = 'unreadable: ' + e; }}
    return label + ': status ' + r.status + ' ' + body;
  }} catch (e) {{
    return label + ': failed (' + e + ')';
  }}
}}
(async () => {{
  const results = [];
  results.push(await attempt('GET users', portal + '/api/v1/users', {{credentials: 'include'}}));
  results.push(await attempt('GET me', portal + '/api/v1/me', {{credentials: 'include'}}));
  results.push(await attempt('POST courses (json)', portal + '/api/v1/courses', {{
    method: 'POST', credentials: 'include',
    headers: {{'content-type': 'application/json'}},
    body: JSON.stringify({{code: 'EVIL-1', title: 'Made by another site'}}),
  }}));
  results.push(await attempt('POST courses (simple)', portal + '/api/v1/courses', {{
    method: 'POST', credentials: 'include',
    headers: {{'content-type': 'text/plain'}},
    body: JSON.stringify({{code: 'EVIL-2', title: 'Made by another site'}}),
  }}));
  const out = document.getElementById('out');
  out.textContent = results.join('\n');
  out.dataset.done = 'true';
}})();
</script>
<form id="forge" method="post" enctype="text/plain" action="{portal}/api/v1/courses">
<input type="hidden" name='{{"code":"EVIL-3","title":"Made by another site","x":"' value='"}}'>
</form>
</body></html>"#
    )
}

#[tokio::test]
async fn a_signed_in_browser_cannot_be_made_to_call_the_api_from_another_site() {
    let class = Classroom::start(&built_portal(), &[]).await;
    let url = class.portal.url.clone();
    class.enroll(&["zelda"]).await;
    let admin_token = class
        .portal
        .cli(&["token", "create", "admin", "--name", "t", "--scope", "read", "--scope", "admin"], "")
        .lines()
        .next()
        .unwrap()
        .trim()
        .to_string();
    assert!(admin_token.starts_with("shp_"), "{admin_token}");
    // With a token the list is there to steal: it names zelda.
    let users = api_get(&url, "/users", Some(&admin_token), None).await;
    assert_eq!(users.status(), 200);
    assert!(users.text().await.unwrap().contains("zelda"));

    // Another site, on the same machine (so same-site: the Lax cookie travels with it).
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let other = format!("http://{}", listener.local_addr().unwrap());
    let page = attack_page(&url);
    let site = axum::Router::new().route("/", axum::routing::get(move || async move { axum::response::Html(page) }));
    tokio::spawn(async move { axum::serve(listener, site).await });

    let browser = Browser::start().await;
    browser.sign_in(&url, "admin", ADMIN_PASSWORD).await;
    let cookie = session_cookie(&browser).await;

    let log_before = class.portal.log().len();
    browser.client.goto(&format!("{other}/")).await.unwrap();
    let outcome = browser
        .wait_for_within("#out[data-done=true]", Duration::from_secs(20))
        .await
        .text()
        .await
        .unwrap();
    println!("what the other site's script got:\n{outcome}");
    browser.screenshot("api-attack-other-site").await;
    for secret in ["zelda", "\"username\"", "Administrator"] {
        assert!(!outcome.contains(secret), "the other site read {secret}: {outcome}");
    }
    for line in outcome.lines() {
        assert!(
            line.contains("failed (TypeError") || line.contains("status 401") || line.contains("status 403"),
            "{line}"
        );
    }
    // A plain form post to the API (no script needed, no CORS to stop it).
    browser.client.execute("document.getElementById('forge').submit();", vec![]).await.unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while !browser.client.current_url().await.unwrap().as_str().starts_with(&url) {
        assert!(std::time::Instant::now() < deadline, "the form post never left the other site");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    browser.wait_for("body").await;
    tokio::time::sleep(Duration::from_millis(300)).await; // the portal's last log lines
    let attack_log = class.portal.log()[log_before..].to_string();
    let answered = browser.client.find(Locator::Css("body")).await.unwrap().text().await.unwrap();
    println!("the forged form post answered: {answered}");
    let _ = browser.console_errors().await; // the refusal's status, logged as an error
    assert!(!answered.contains("EVIL"), "{answered}");

    // Nothing was made, by any of them.
    let courses = class.portal.cli(&["course", "list"], "");
    assert!(!courses.contains("EVIL"), "{courses}");
    let listed = api_get(&url, "/courses", Some(&admin_token), None).await.text().await.unwrap();
    assert!(listed.contains(COURSE) && !listed.contains("EVIL"), "{listed}");
    // What reached the portal from the other site's page, and how it answered: the
    // reads came (with the cookie) and were refused by the API itself, the JSON post
    // never passed its preflight, the simple and the form posts were refused as
    // cross-origin.
    let answers = api_answers(&attack_log);
    println!("the portal answered the other site:\n{}", answers.join("\n"));
    for expected in ["GET /api/v1/users 401", "GET /api/v1/me 401", "OPTIONS /api/v1/courses 405"] {
        assert!(answers.iter().any(|a| a == expected), "{expected}: {answers:?}");
    }
    assert_eq!(answers.iter().filter(|a| *a == "POST /api/v1/courses 403").count(), 2, "{answers:?}");
    assert!(answers.iter().all(|a| [" 401", " 403", " 405"].iter().any(|s| a.ends_with(s))), "{answers:?}");

    // The login cookie is good for the pages (the same browser's own page reads who it is)…
    let me = post(&client(), &url, Some(&cookie), "current_user", String::new()).await;
    assert!(me.status().is_success());
    assert!(me.text().await.unwrap().contains("\"admin\""));
    // …but opens nothing in the API, from a script, or from the portal's own page.
    let me = api_get(&url, "/me", None, Some(&cookie)).await;
    assert_eq!(me.status(), 401);
    let body: serde_json::Value = me.json().await.unwrap();
    assert!(body["message"].as_str().unwrap().contains("Bearer"), "{body}");
    assert_eq!(api_get(&url, "/users", None, Some(&cookie)).await.status(), 401);
    let made = client()
        .post(format!("{url}/api/v1/courses"))
        .header("cookie", &cookie)
        .header("origin", &url)
        .json(&serde_json::json!({"code": "EVIL-4", "title": "Made with a cookie"}))
        .send()
        .await
        .unwrap();
    assert_eq!(made.status(), 401);
    browser.open(&format!("{url}/account")).await;
    let own = browser
        .client
        .execute_async(
            "const done = arguments[arguments.length - 1];
             Promise.all(['/api/v1/me', '/api/v1/users'].map(p => fetch(p, {credentials: 'include'}).then(r => r.status)))
               .then(done, e => done(String(e)));",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(own, serde_json::json!([401, 401]), "the portal's own page with its cookie");
    let _ = browser.console_errors().await; // the two 401s
    let courses = class.portal.cli(&["course", "list"], "");
    assert!(!courses.contains("EVIL"), "{courses}");
    browser.close().await;
}
