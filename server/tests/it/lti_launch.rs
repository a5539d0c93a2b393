//! LTI 1.3 launches from an LMS (`/lti/login`, `/lti/launch`, `/lti/continue`,
//! `/lti/jwks`) and the roster read through Names and Roles, against the test platform of
//! `slicehub_end2end::lti_platform` (an LMS stand-in in Rust on a free loopback port).
//!
//! Every client here follows no redirect and carries its cookies by hand, as a browser
//! would: the launch cookie `slicehub_lti` (SameSite=None; Secure, so no client keeps it on
//! plain HTTP; `__Host-slicehub_lti` over HTTPS) from the login initiation, the login cookie
//! `slicehub_session` from the launch or the ticket's continue button. Each refusal is checked for what must not happen too: no login
//! cookie, no account, no course, no membership.

use std::time::{Duration, Instant};

use serde_json::Value;
use slicehub_end2end::form::{base64, client, post, sign_in, urlencode};
use slicehub_end2end::lti_platform::{LtiContext, LtiPlatform, LtiUser, Member, NextLinks, Tamper, INSTRUCTOR, LEARNER, LMS_ADMIN};
use slicehub_end2end::Portal;

use crate::common::answer::{answer_of, Answer};
use crate::common::on_sqlite_then_postgres;

const BIN: &str = env!("CARGO_BIN_EXE_slicehub");
const ADMIN_PASSWORD: &str = "lti-admin-pass-1";
/// The name the platform is registered under; its identities are `lti:ID` (its database id,
/// see [`platform_key`]).
const LMS: &str = "campus";
const SESSION: &str = "slicehub_session";
const BROWSER: &str = "slicehub_lti";

// ---------------------------------------------------------------------------------------
// The portal, the platform, and what the administrator sees

struct Setup {
    portal: Portal,
    platform: LtiPlatform,
    /// The administrator's login cookie (`name=value`).
    admin: String,
    /// The portal's database, for what only time would do (an expired ticket).
    database: String,
}

/// A portal (its public URL is its own `http://127.0.0.1:PORT`, which launches are sent
/// back to), an LMS for it, and the LMS registered with `slicehub lms add`.
async fn setup(database: Option<&str>) -> Setup {
    setup_with(database, &[]).await
}

async fn setup_with(database: Option<&str>, more_env: &[(&str, &str)]) -> Setup {
    let mut env = vec![("SLICEHUB_ADMIN_PASSWORD", ADMIN_PASSWORD)];
    if let Some(url) = database {
        env.push(("SLICEHUB_DATABASE_URL", url));
    }
    env.extend_from_slice(more_env);
    let portal = Portal::start(BIN.as_ref(), &env).await;
    let platform = LtiPlatform::start(&portal.url).await;
    let out = register(&portal, &platform, LMS);
    // (The CLI has none of the portal's bind address, so its addresses name the default.)
    assert!(out.contains("/lti/login") && out.contains("/lti/launch") && out.contains("/lti/jwks"), "the addresses to give the LMS: {out}");
    let admin = sign_in(&client(), &portal.url, "admin", ADMIN_PASSWORD).await.expect("the administrator signs in");
    let database = match database {
        Some(url) => url.to_string(),
        None => format!("sqlite://{}?mode=rw", portal.dir.path().join("data/slicehub.db").display()),
    };
    Setup { portal, platform, admin, database }
}

fn register(portal: &Portal, platform: &LtiPlatform, name: &str) -> String {
    portal.cli(
        &[
            "lms",
            "add",
            name,
            "--issuer",
            &platform.issuer(),
            "--client-id",
            &platform.client_id(),
            "--deployment",
            &platform.deployment_id(),
            "--login-url",
            &platform.auth_login_url(),
            "--token-url",
            &platform.token_url(),
            "--jwks-url",
            &platform.jwks_url(),
        ],
        "",
    )
}

/// How the platform registered as `name` keys its identities, grants and audit lines.
fn platform_key(portal: &Portal, name: &str) -> String {
    let rows: Value = serde_json::from_str(&portal.cli(&["lms", "list", "--json"], "")).expect("JSON");
    let row = rows.as_array().unwrap().iter().find(|r| r["name"] == name).unwrap_or_else(|| panic!("{name} in {rows}"));
    format!("lti:{}", row["id"].as_i64().unwrap_or_else(|| panic!("an id: {row}")))
}

/// The last lines of the portal's log, for a failing assertion.
fn log_tail(portal: &Portal) -> String {
    let log = portal.log();
    let lines: Vec<&str> = log.lines().collect();
    lines[lines.len().saturating_sub(30)..].join("\n")
}

/// A server function's JSON answer for the caller with `cookie`.
async fn call(portal: &Portal, cookie: &str, function: &str, body: &str) -> (u16, String) {
    let resp = post(&client(), &portal.url, Some(cookie), function, body.to_string()).await;
    (resp.status().as_u16(), resp.text().await.unwrap_or_default())
}

async fn json_call(s: &Setup, function: &str, body: &str) -> Value {
    let (status, text) = call(&s.portal, &s.admin, function, body).await;
    assert_eq!(status, 200, "{function}: {text}");
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{function}: {e}: {text}"))
}

/// Every account as the administrator sees them.
async fn users(s: &Setup) -> Vec<Value> {
    json_call(s, "list_users", "").await.as_array().cloned().unwrap_or_default()
}

fn find<'a>(users: &'a [Value], name: &str) -> Option<&'a Value> {
    users.iter().find(|u| u["username"] == name)
}

/// Every course code.
async fn course_codes(s: &Setup) -> Vec<String> {
    let all = json_call(s, "list_courses", "").await;
    let mut codes: Vec<String> = all.as_array().unwrap().iter().map(|c| c["code"].as_str().unwrap().to_string()).collect();
    codes.sort();
    codes
}

/// A course's members as (username, role), sorted.
async fn members(s: &Setup, code: &str) -> Vec<(String, String)> {
    let detail = json_call(s, "open_course", &format!("code={code}")).await;
    let mut out: Vec<(String, String)> = detail["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["username"].as_str().unwrap_or_default().to_string(), m["role"].as_str().unwrap_or_default().to_string()))
        .collect();
    out.sort();
    out
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = list.iter().map(|(u, r)| (u.to_string(), r.to_string())).collect();
    out.sort();
    out
}

/// The audit log as CSV.
async fn audit(s: &Setup) -> String {
    let resp = client().get(format!("{}/admin/audit.csv", s.portal.url)).header("cookie", &s.admin).send().await.unwrap();
    assert_eq!(resp.status(), 200);
    resp.text().await.unwrap()
}

/// Counts of what a refused launch must not have made.
#[derive(Debug, PartialEq, Eq)]
struct Footprint {
    users: usize,
    courses: Vec<String>,
    members: Vec<Vec<(String, String)>>,
}

async fn footprint(s: &Setup) -> Footprint {
    let courses = course_codes(s).await;
    let mut all = Vec::new();
    for code in &courses {
        all.push(members(s, code).await);
    }
    Footprint { users: users(s).await.len(), courses, members: all }
}

// ---------------------------------------------------------------------------------------
// HTTP as a browser without a cookie jar

/// The ticket of a launch page's "Open SliceHub in a new window" link.
fn ticket_of(page: &Answer) -> String {
    let anchor = page.body.find("id=\"open-slicehub\"").unwrap_or_else(|| panic!("a#open-slicehub: {page:?}"));
    let rest = &page.body[anchor..];
    let start = rest.find("href=\"/lti/continue?ticket=").expect("the link goes to /lti/continue") + "href=\"/lti/continue?ticket=".len();
    let end = rest[start..].find('"').unwrap();
    rest[start..start + end].to_string()
}

async fn get(url: &str, cookie: Option<&str>) -> Answer {
    crate::common::answer::get(url, cookie.as_slice()).await
}

/// The LMS's login initiation (a cross-site form POST, or a GET) with these fields.
async fn initiate(portal: &Portal, fields: &[(&str, String)], by_get: bool) -> Answer {
    let url = format!("{}/lti/login", portal.url);
    let request = if by_get {
        client().get(&url).query(fields)
    } else {
        client().post(&url).form(fields).header("origin", "https://lms.elsewhere.example").header("sec-fetch-site", "cross-site")
    };
    answer_of(request.send().await.expect("the portal answers")).await
}

/// A login initiation the portal accepted: the platform's authentication request and the
/// launch cookie's value.
struct Begun {
    auth_url: String,
    browser: String,
}

async fn begin(s: &Setup) -> Begun {
    begin_with(s, false).await
}

async fn begin_with(s: &Setup, by_get: bool) -> Begun {
    begin_on(s, &s.platform, by_get, BROWSER).await
}

/// A login initiation from `platform`, whose launch cookie is named `cookie`.
async fn begin_on(s: &Setup, platform: &LtiPlatform, by_get: bool, cookie: &str) -> Begun {
    let answer = initiate(&s.portal, &platform.login_params(), by_get).await;
    assert_eq!(answer.status, 302, "the login initiation goes on to the platform: {answer:?}\n{}", log_tail(&s.portal));
    assert!(answer.location.starts_with(&platform.auth_login_url()), "{answer:?}");
    let line = answer.set_cookie_line(cookie).unwrap_or_else(|| panic!("the launch cookie: {answer:?}")).to_string();
    for attribute in ["HttpOnly", "SameSite=None", "Secure", "Path=/"] {
        assert!(line.split(';').any(|a| a.trim() == attribute), "{attribute}: {line}");
    }
    assert!(!line.contains("Domain"), "{line}");
    assert!(answer.cookie(SESSION).is_none(), "{answer:?}");
    let browser = answer.cookie(cookie).unwrap().split_once('=').unwrap().1.to_string();
    Begun { auth_url: answer.location, browser }
}

/// What the platform posts back: (id_token, state).
async fn answered(s: &Setup, begun: &Begun) -> (String, String) {
    answered_on(s, &s.platform, begun).await
}

async fn answered_on(s: &Setup, platform: &LtiPlatform, begun: &Begun) -> (String, String) {
    let (id_token, state, redirect_uri) = platform.id_token_for(&begun.auth_url).await.expect("the platform accepts the request");
    assert_eq!(redirect_uri, format!("{}/lti/launch", s.portal.url));
    (id_token, state)
}

/// How the browser posts the launch.
#[derive(Clone, Copy)]
struct Browser<'a> {
    /// The launch cookie it sends back (None: a browser that blocks third-party cookies).
    cookie: Option<&'a str>,
    /// `Sec-Fetch-Dest` (None: an older browser that sends none).
    dest: Option<&'a str>,
}

const TOP: Browser<'static> = Browser { cookie: None, dest: Some("document") };

/// POST /lti/launch as the platform's auto-submitted form does.
async fn post_launch(s: &Setup, id_token: &str, state: &str, browser: Browser<'_>) -> Answer {
    let mut request = client()
        .post(format!("{}/lti/launch", s.portal.url))
        .form(&[("id_token", id_token), ("state", state)])
        .header("origin", s.platform.issuer())
        .header("sec-fetch-site", "cross-site");
    if let Some(value) = browser.cookie {
        request = request.header("cookie", format!("{BROWSER}={value}"));
    }
    if let Some(dest) = browser.dest {
        request = request.header("sec-fetch-dest", dest);
    }
    answer_of(request.send().await.expect("the portal answers")).await
}

fn user(sub: &str, name: &str, roles: &[&str]) -> LtiUser {
    let email = format!("{}@lms.example", name.to_lowercase().replace(' ', "."));
    LtiUser { sub: sub.into(), name: name.into(), email, roles: roles.iter().map(|r| r.to_string()).collect() }
}

fn context(id: &str, label: &str, title: &str) -> LtiContext {
    LtiContext { id: id.into(), label: label.into(), title: title.into() }
}

/// A whole launch of `who` in `course`, the launch cookie sent back when `same_browser`.
async fn launch(s: &Setup, who: &LtiUser, course: &LtiContext, same_browser: bool, dest: Option<&str>) -> Answer {
    launch_on(s, &s.platform, who, course, same_browser, dest).await
}

/// [`launch`] from another platform.
async fn launch_on(s: &Setup, platform: &LtiPlatform, who: &LtiUser, course: &LtiContext, same_browser: bool, dest: Option<&str>) -> Answer {
    platform.set_launch(who.clone(), course.clone());
    let begun = begin_on(s, platform, false, BROWSER).await;
    let (id_token, state) = answered_on(s, platform, &begun).await;
    let cookie = same_browser.then_some(begun.browser.as_str());
    post_launch(s, &id_token, &state, Browser { cookie, dest }).await
}

/// The continue button's POST of a ticket, from `origin` (the portal's own page: its URL),
/// with the browser's `cookie` (`name=value`) if any.
async fn post_continue(s: &Setup, ticket: &str, cookie: Option<&str>, origin: &str) -> Answer {
    let same = origin == s.portal.url;
    let mut request = client()
        .post(format!("{}/lti/continue", s.portal.url))
        .form(&[("ticket", ticket)])
        .header("origin", origin)
        .header("sec-fetch-site", if same { "same-origin" } else { "cross-site" });
    if let Some(cookie) = cookie {
        request = request.header("cookie", cookie);
    }
    answer_of(request.send().await.expect("the portal answers")).await
}

/// The account a login cookie is for, None when it signs nobody in (any more).
async fn session_user(portal: &Portal, session: &str) -> Option<String> {
    let (status, body) = call(portal, session, "current_user", "").await;
    assert_eq!(status, 200, "{body}");
    serde_json::from_str::<Value>(&body).unwrap()["username"].as_str().map(str::to_string)
}

/// A launch that signed in at once: 303 to `/courses/CODE` with a login cookie.
#[track_caller]
fn signed_in(answer: &Answer, code: &str, portal: &Portal) -> String {
    assert_eq!((answer.status, answer.location.as_str()), (303, format!("/courses/{code}").as_str()), "{answer:?}\n{}", log_tail(portal));
    answer.cookie(SESSION).unwrap_or_else(|| panic!("a login cookie: {answer:?}"))
}

/// A launch refused in plain words: status, no login cookie, no ticket.
#[track_caller]
fn refused(answer: &Answer, status: u16, words: &str, what: &str) {
    assert_eq!(answer.status, status, "{what}: {answer:?}");
    assert!(answer.body.contains(words), "{what}: {words:?} in {}", answer.body);
    assert!(answer.cookie(SESSION).is_none(), "{what}: no login cookie: {answer:?}");
    assert!(!answer.body.contains("open-slicehub") && !answer.body.contains("ticket="), "{what}: no ticket: {}", answer.body);
    assert!(!answer.body.contains("<script"), "{what}: {}", answer.body);
}

/// The account a login cookie is for, as the session itself says.
async fn whoami(portal: &Portal, session: &str) -> String {
    let (status, body) = call(portal, session, "current_user", "").await;
    assert_eq!(status, 200, "{body}");
    let user: Value = serde_json::from_str(&body).unwrap();
    user["username"].as_str().unwrap_or_else(|| panic!("signed in: {body}")).to_string()
}

const GPU101: &str = "GPU101";

fn ivy() -> LtiUser {
    user("lms-ivy", "Ivy Ng", &[INSTRUCTOR])
}

fn lee() -> LtiUser {
    user("lms-lee", "Lee Park", &[LEARNER])
}

fn gpu101() -> LtiContext {
    context("ctx-gpu101", GPU101, "GPU Computing 101")
}

// ---------------------------------------------------------------------------------------
// 1. Launches: the course, the accounts, the roles, the frame and its ticket

#[tokio::test]
async fn an_instructors_first_launch_makes_the_course_and_students_follow() {
    on_sqlite_then_postgres(|database| async move { first_launches(database.as_deref()).await }).await;
}

async fn first_launches(database: Option<&str>) {
    let s = setup(database).await;
    let before = footprint(&s).await;
    assert_eq!(before.users, 1, "only the administrator: {before:?}");

    // A student before the instructor: told to wait, and nothing is made.
    let early = launch(&s, &lee(), &gpu101(), true, Some("document")).await;
    refused(&early, 403, "has not opened SliceHub for this course yet", "a student before the instructor");
    assert_eq!(footprint(&s).await, before, "no course, no account for a student of a course not set up");

    // The instructor's first launch, in a window of its own: the course (code from the
    // label, title from the LMS) with her as its instructor, her account, and a session.
    let first = launch(&s, &ivy(), &gpu101(), true, Some("document")).await;
    let ivy_session = signed_in(&first, GPU101, &s.portal);
    let line = first.set_cookie_line(SESSION).unwrap();
    assert!(line.contains("HttpOnly") && line.contains("SameSite=Lax") && line.contains("Path=/"), "{line}");
    assert_eq!(whoami(&s.portal, &ivy_session).await, "ivy.ng");
    let page = get(&format!("{}/courses/{GPU101}", s.portal.url), Some(&ivy_session)).await;
    assert_eq!(page.status, 200, "the session opens the course page: {}", page.location);
    let anonymous = get(&format!("{}/courses/{GPU101}", s.portal.url), None).await;
    assert_eq!(anonymous.status, 303, "the course page is not open to anyone");

    assert_eq!(course_codes(&s).await, vec![GPU101.to_string()]);
    assert_eq!(members(&s, GPU101).await, pairs(&[("ivy.ng", "instructor")]));
    let detail = json_call(&s, "open_course", &format!("code={GPU101}")).await;
    assert_eq!(detail["title"], "GPU Computing 101");
    let links = json_call(&s, "course_lms", &format!("code={GPU101}")).await;
    assert_eq!(links["links"], serde_json::json!([LMS]), "linked to the LMS course: {links}");
    assert_eq!(links["has_roster"], true, "{links}");

    let all = users(&s).await;
    let row = find(&all, "ivy.ng").unwrap_or_else(|| panic!("her account: {all:?}"));
    assert_eq!(row["display_name"], "Ivy Ng");
    assert_eq!(row["email"], "ivy.ng@lms.example");
    assert_eq!(row["is_admin"], false);
    let sources = row["sources"].to_string();
    assert!(!sources.contains("Password") && sources.contains(&format!("LMS ({LMS})")), "{sources}");
    for password in ["", "ivy.ng", "lms-ivy", "anything-at-all-1"] {
        assert_eq!(sign_in(&client(), &s.portal.url, "ivy.ng", password).await, None, "no password signs in ({password:?})");
    }

    // Her second launch: the same account and course, nothing new.
    let again = launch(&s, &ivy(), &gpu101(), true, None).await;
    let second_session = signed_in(&again, GPU101, &s.portal);
    assert_ne!(second_session, ivy_session);
    assert_eq!(users(&s).await.len(), 2);
    assert_eq!(course_codes(&s).await, vec![GPU101.to_string()]);

    // A student in a frame (the LMS page): no login cookie in the frame, a page whose
    // button opens SliceHub in a window of its own with a one-use ticket; only the
    // platform may frame it.
    let framed = launch(&s, &lee(), &gpu101(), true, Some("iframe")).await;
    assert_eq!(framed.status, 200, "{framed:?}\n{}", log_tail(&s.portal));
    assert!(framed.cookie(SESSION).is_none(), "no login cookie inside the frame: {framed:?}");
    assert!(framed.body.contains("Lee Park") && framed.body.contains(GPU101), "{}", framed.body);
    assert_eq!(framed.frame_ancestors(), vec!["'self'".to_string(), s.platform.issuer()], "{}", framed.csp);
    assert!(framed.csp.contains("script-src 'none'"), "{}", framed.csp);
    let ticket = ticket_of(&framed);
    assert_eq!(members(&s, GPU101).await, pairs(&[("ivy.ng", "instructor"), ("lee.park", "student")]), "his role comes with the launch");

    // An LMS that frames the tool from another site than it signs in on (Canvas: a
    // school's instructure.com, sso.canvaslms.com): the launch's return_url's origin may
    // frame it too; an address that is no web origin adds nothing.
    s.platform.set_return_url(Some("https://school.lms.example/courses/7/external_tools/9".into()));
    let canvas_like = launch(&s, &lee(), &gpu101(), true, Some("iframe")).await;
    assert_eq!(canvas_like.status, 200, "{canvas_like:?}");
    assert_eq!(
        canvas_like.frame_ancestors(),
        vec!["'self'".to_string(), s.platform.issuer(), "https://school.lms.example".to_string()],
        "{}",
        canvas_like.csp
    );
    for not_an_origin in ["javascript:alert(1)", "data:text/html,x", "https://a.example;script-src"] {
        s.platform.set_return_url(Some(not_an_origin.into()));
        let framed = launch(&s, &lee(), &gpu101(), true, Some("iframe")).await;
        assert_eq!(framed.frame_ancestors(), vec!["'self'".to_string(), s.platform.issuer()], "{not_an_origin}: {}", framed.csp);
    }
    s.platform.set_return_url(None);

    // The new window's GET only asks who continues where: it signs nobody in, leaves the
    // ticket unused, and no other site may frame it.
    let continue_url = format!("{}/lti/continue?ticket={ticket}", s.portal.url);
    for _ in 0..2 {
        let page = get(&continue_url, None).await;
        assert_eq!(page.status, 200, "{page:?}\n{}", log_tail(&s.portal));
        assert!(page.cookie(SESSION).is_none() && page.location.is_empty(), "the GET signs nobody in: {page:?}");
        assert!(page.body.contains("Continue as <b>Lee Park</b> (lee.park) in <b>GPU101</b>"), "{}", page.body);
        assert!(
            page.body.contains("method=\"post\" action=\"/lti/continue\"") && page.body.contains(&format!("name=\"ticket\" value=\"{ticket}\"")),
            "a button that POSTs the ticket: {}",
            page.body
        );
        assert!(!page.body.contains("other-account"), "{}", page.body);
        assert_eq!(page.frame_ancestors(), vec!["'none'".to_string()], "{}", page.csp);
    }
    // Signed in as Ivy in this browser: the page says whom continuing signs in instead.
    let warned = get(&continue_url, Some(&ivy_session)).await;
    assert!(
        warned.body.contains("You are signed in as <b>ivy.ng</b>; continuing signs you in as <b>lee.park</b> instead."),
        "{}",
        warned.body
    );
    assert!(warned.cookie(SESSION).is_none());
    assert_eq!(whoami(&s.portal, &ivy_session).await, "ivy.ng", "the GET ends no session either");
    // Login CSRF: another site posting the ticket (its own visitor signed in as Lee) is
    // refused by the portal's same-origin check, and the ticket stays unused.
    for origin in ["https://evil.example", "null"] {
        let forged = post_continue(&s, &ticket, None, origin).await;
        assert_eq!(forged.status, 403, "a cross-origin POST from {origin}: {forged:?}");
        assert!(forged.cookie(SESSION).is_none(), "{forged:?}");
    }
    assert_eq!(get(&continue_url, None).await.status, 200, "the ticket is still unused");

    // The button: Lee is signed in, and whoever the browser was signed in as is not.
    let opened = post_continue(&s, &ticket, Some(&ivy_session), &s.portal.url).await;
    let lee_session = signed_in(&opened, GPU101, &s.portal);
    assert_eq!(session_user(&s.portal, &ivy_session).await, None, "the browser's earlier login ended");
    assert_eq!(whoami(&s.portal, &lee_session).await, "lee.park");
    let page = get(&format!("{}/courses/{GPU101}", s.portal.url), Some(&lee_session)).await;
    assert_eq!(page.status, 200, "{page:?}\n{}", log_tail(&s.portal));
    let (status, _) = call(&s.portal, &lee_session, "list_users", "").await;
    assert_eq!(status, 403, "a student is no administrator");
    let (status, _) = call(&s.portal, &lee_session, "sync_lms_roster", &format!("code={GPU101}")).await;
    assert_eq!(status, 403, "a student does not run the roster");

    let twice = post_continue(&s, &ticket, None, &s.portal.url).await;
    refused(&twice, 403, "works once", "a ticket used twice");
    refused(&get(&continue_url, None).await, 403, "works once", "the page of a ticket used");

    // A launch in a window of its own ends whoever this browser was signed in as (Lee),
    // as the continue button does.
    s.platform.set_launch(ivy(), gpu101());
    let begun = begin(&s).await;
    let (id_token, state) = answered(&s, &begun).await;
    let direct = client()
        .post(format!("{}/lti/launch", s.portal.url))
        .form(&[("id_token", id_token.as_str()), ("state", state.as_str())])
        .header("origin", s.platform.issuer())
        .header("sec-fetch-site", "cross-site")
        .header("sec-fetch-dest", "document")
        .header("cookie", format!("{BROWSER}={}; {lee_session}", begun.browser))
        .send()
        .await
        .unwrap();
    let direct = answer_of(direct).await;
    let ivy_again = signed_in(&direct, GPU101, &s.portal);
    assert_eq!(whoami(&s.portal, &ivy_again).await, "ivy.ng");
    assert_eq!(session_user(&s.portal, &lee_session).await, None, "Lee's login in this browser ended");

    // Without the launch cookie (third-party cookies blocked), even at the top: a ticket.
    let no_cookie = launch(&s, &lee(), &gpu101(), false, Some("document")).await;
    assert_eq!(no_cookie.status, 200, "{no_cookie:?}");
    assert!(no_cookie.cookie(SESSION).is_none(), "{no_cookie:?}");
    let fresh = ticket_of(&no_cookie);
    let made_up: String = fresh.chars().rev().collect();
    for bad in [made_up.as_str(), "abc", ""] {
        let answer = get(&format!("{}/lti/continue?ticket={bad}", s.portal.url), None).await;
        refused(&answer, 403, "works once", &format!("a made-up ticket's page {bad:?}"));
        let answer = post_continue(&s, bad, None, &s.portal.url).await;
        refused(&answer, 403, "works once", &format!("a made-up ticket {bad:?}"));
    }
    let answer = get(&format!("{}/lti/continue", s.portal.url), None).await;
    refused(&answer, 403, "works once", "no ticket");
    let answer = answer_of(client().post(format!("{}/lti/continue", s.portal.url)).send().await.unwrap()).await;
    refused(&answer, 403, "works once", "no ticket posted");

    // An expired ticket (two minutes on the clock, here set back in the database).
    let store = slicehub_core::store::Store::connect(&s.database, 1).await.expect("the portal's database");
    store.execute_admin("UPDATE lti_tickets SET expires_at = 1").await.expect("tickets expired");
    store.close().await;
    let expired = get(&format!("{}/lti/continue?ticket={fresh}", s.portal.url), None).await;
    refused(&expired, 403, "works once", "an expired ticket's page");
    let expired = post_continue(&s, &fresh, None, &s.portal.url).await;
    refused(&expired, 403, "works once", "an expired ticket");

    // Nothing more was made; the audit log tells who made what.
    assert_eq!(users(&s).await.len(), 3);
    let log = audit(&s).await;
    let key = platform_key(&s.portal, LMS);
    for (actor, action, subject) in [
        (key.clone(), "user.create", "ivy.ng"),
        (key.clone(), "user.create", "lee.park"),
        ("ivy.ng".to_string(), "course.lms.link", GPU101),
        (key.clone(), "course.member.lms", "lee.park"),
        ("cli".to_string(), "lms.register", LMS),
    ] {
        assert!(
            log.lines().any(|l| l.contains(&actor) && l.contains(action) && l.contains(subject)),
            "{actor} {action} {subject} in the audit log:\n{log}"
        );
    }
}

// ---------------------------------------------------------------------------------------
// 2. LMS roles count for their course only

#[tokio::test]
async fn lms_roles_count_for_their_course_only() {
    let s = setup(None).await;
    let before = footprint(&s).await;

    // An LMS administrator with no role in the course: refused, no account.
    let boss = user("lms-boss", "Bo Sysadmin", &[LMS_ADMIN]);
    let answer = launch(&s, &boss, &gpu101(), true, Some("document")).await;
    refused(&answer, 403, "does not give access", "an LMS administrator before the course");
    assert_eq!(footprint(&s).await, before);
    signed_in(&launch(&s, &ivy(), &gpu101(), true, Some("document")).await, GPU101, &s.portal);
    let after_ivy = footprint(&s).await;
    let answer = launch(&s, &boss, &gpu101(), true, Some("document")).await;
    refused(&answer, 403, "does not give access", "an LMS administrator in a course set up");
    assert_eq!(footprint(&s).await, after_ivy, "no account, no membership");

    // An LMS administrator who is also a learner there is a student, and no admin here.
    let learning_boss = user("lms-boss2", "Bea Admin", &[LMS_ADMIN, LEARNER]);
    let answer = launch(&s, &learning_boss, &gpu101(), true, Some("document")).await;
    let session = signed_in(&answer, GPU101, &s.portal);
    assert_eq!(find(&users(&s).await, "bea.admin").unwrap()["is_admin"], false);
    let (status, _) = call(&s.portal, &session, "list_users", "").await;
    assert_eq!(status, 403, "an LMS administrator is no SliceHub administrator");
    let admin_page = get(&format!("{}/admin/users", s.portal.url), Some(&session)).await;
    assert_ne!(admin_page.status, 200, "{admin_page:?}");

    // Another LMS course with another instructor: its own course. Ivy, its learner, is a
    // student there, not its instructor.
    let ml200 = context("ctx-ml200", "ML200", "Machine Learning");
    let otto = user("lms-otto", "Otto Berg", &[INSTRUCTOR]);
    let otto_session = signed_in(&launch(&s, &otto, &ml200, true, Some("document")).await, "ML200", &s.portal);
    assert_eq!(members(&s, "ML200").await, pairs(&[("otto.berg", "instructor")]), "ivy has nothing in ML200 yet");
    let ivy_learning = user("lms-ivy", "Ivy Ng", &[LEARNER]);
    let ivy_session = signed_in(&launch(&s, &ivy_learning, &ml200, true, Some("document")).await, "ML200", &s.portal);
    assert_eq!(members(&s, "ML200").await, pairs(&[("ivy.ng", "student"), ("otto.berg", "instructor")]));
    assert_eq!(members(&s, GPU101).await, pairs(&[("bea.admin", "student"), ("ivy.ng", "instructor")]), "GPU101 unchanged");
    let (status, _) = call(&s.portal, &ivy_session, "sync_lms_roster", "code=ML200").await;
    assert_eq!(status, 403, "ivy does not run ML200's roster");
    let (status, _) = call(&s.portal, &otto_session, "open_course", &format!("code={GPU101}")).await;
    assert_eq!(status, 404, "otto has nothing to do with GPU101");

    // A third LMS course whose label is GPU101 too, with another instructor: a course of
    // its own, never Ivy's.
    let other = context("ctx-gpu101-b", GPU101, "GPU Computing (evening)");
    let una = user("lms-una", "Una Fox", &[INSTRUCTOR]);
    signed_in(&launch(&s, &una, &other, true, Some("document")).await, "GPU101-2", &s.portal);
    assert_eq!(members(&s, "GPU101-2").await, pairs(&[("una.fox", "instructor")]));
    assert_eq!(members(&s, GPU101).await, pairs(&[("bea.admin", "student"), ("ivy.ng", "instructor")]));

    // Ivy's own sandbox LMS course, labelled GPU101 too: a new course, never her GPU101
    // (a launch links no LMS course to a course that exists, one she teaches included).
    let sandbox = context("ctx-sandbox", GPU101, "Sandbox");
    signed_in(&launch(&s, &ivy(), &sandbox, true, Some("document")).await, "GPU101-3", &s.portal);
    assert_eq!(members(&s, "GPU101-3").await, pairs(&[("ivy.ng", "instructor")]));
    assert_eq!(members(&s, GPU101).await, pairs(&[("bea.admin", "student"), ("ivy.ng", "instructor")]));
    let links = json_call(&s, "course_lms", &format!("code={GPU101}")).await;
    assert_eq!(links["links"], serde_json::json!([LMS]), "GPU101 keeps its one LMS course: {links}");

    // A label and names in another script: a course code and account names from a hash
    // (never `--`, nor `lms-user`, `lms-user-2`…), each person their own account.
    let data = context("ctx-data", "数据科学", "数据科学导论");
    let answer = launch(&s, &user("lms-zhang", "张伟", &[INSTRUCTOR]), &data, true, Some("document")).await;
    let code = answer.location.strip_prefix("/courses/").unwrap_or_else(|| panic!("{answer:?}")).to_string();
    let hash = code.strip_prefix("LMS-").unwrap_or_else(|| panic!("LMS-HASH: {code}"));
    assert!(hash.len() == 8 && hash.chars().all(|c| c.is_ascii_hexdigit()), "{code}");
    signed_in(&answer, &code, &s.portal);
    signed_in(&launch(&s, &user("lms-li", "李娜", &[LEARNER]), &data, true, Some("document")).await, &code, &s.portal);
    let placed = members(&s, &code).await;
    assert_eq!(placed.len(), 2, "{placed:?}");
    assert_ne!(placed[0].0, placed[1].0);
    for (name, _) in &placed {
        let hash = name.strip_prefix("lms-").unwrap_or_else(|| panic!("lms-HASH: {name}"));
        assert!(hash.len() == 8 && hash.chars().all(|c| c.is_ascii_hexdigit()), "{name}");
    }
    let again = signed_in(&launch(&s, &user("lms-li", "李娜", &[LEARNER]), &data, true, Some("document")).await, &code, &s.portal);
    let li_name = whoami(&s.portal, &again).await;
    assert!(placed.iter().any(|(name, role)| *name == li_name && role == "student"), "the same account again: {li_name}");
    let admins: Vec<String> =
        users(&s).await.iter().filter(|u| u["is_admin"] == true).map(|u| u["username"].as_str().unwrap().to_string()).collect();
    assert_eq!(admins, vec!["admin".to_string()]);
}

// ---------------------------------------------------------------------------------------
// 3. Forged, replayed and crossed launches

#[tokio::test]
async fn forged_replayed_and_crossed_launches_are_refused() {
    let s = setup(None).await;
    // Ivy's course exists and the platform's keys are read once.
    signed_in(&launch(&s, &ivy(), &gpu101(), true, Some("document")).await, GPU101, &s.portal);

    // Mallory, an instructor of another LMS course: anything that let her through would
    // make her account and her course.
    let mallory = user("lms-mallory", "Mallory Doe", &[INSTRUCTOR]);
    let evil = context("ctx-evil", "EVIL1", "Evil course");
    let before = footprint(&s).await;
    let checks = "did not pass the portal";
    for tamper in [
        Tamper::WrongDeployment,
        Tamper::NoDeployment,
        Tamper::Expired,
        Tamper::WrongAudience,
        Tamper::OtherKey,
        Tamper::WrongIssuer,
        Tamper::AlgNone,
    ] {
        s.platform.tamper(tamper);
        let answer = launch(&s, &mallory, &evil, true, Some("document")).await;
        s.platform.tamper(Tamper::None);
        refused(&answer, 403, checks, &format!("{tamper:?}"));
        assert_eq!(footprint(&s).await, before, "{tamper:?}");
    }

    // A launch posted twice: the second is refused (the first signed in).
    s.platform.set_launch(mallory.clone(), evil.clone());
    let begun = begin(&s).await;
    let (id_token, state) = answered(&s, &begun).await;
    let browser = Browser { cookie: Some(&begun.browser), dest: Some("document") };
    let first = post_launch(&s, &id_token, &state, browser).await;
    signed_in(&first, "EVIL1", &s.portal);
    let made = footprint(&s).await;
    let replayed = post_launch(&s, &id_token, &state, browser).await;
    refused(&replayed, 403, "stale or was used already", "a replayed launch");
    let replayed = post_launch(&s, &id_token, &state, Browser { cookie: None, dest: Some("iframe") }).await;
    refused(&replayed, 403, "stale or was used already", "a replayed launch, framed");

    // A state nobody was given, and no state or token at all.
    let made_up = post_launch(&s, &id_token, "0123456789abcdef0123456789abcdef", TOP).await;
    refused(&made_up, 403, "stale or was used already", "a made-up state");
    let empty = client().post(format!("{}/lti/launch", s.portal.url)).form(&[("state", "x")]).send().await.unwrap();
    let empty = answer_of(empty).await;
    refused(&empty, 400, "without its token", "no id_token");

    // Two attempts crossed: A's token with B's state (the nonce is B's, not A's) is refused,
    // and B's state is spent by it.
    s.platform.set_launch(ivy(), gpu101());
    let (a, b) = (begin(&s).await, begin(&s).await);
    let (token_a, _state_a) = answered(&s, &a).await;
    let (token_b, state_b) = answered(&s, &b).await;
    let crossed = post_launch(&s, &token_a, &state_b, Browser { cookie: Some(&b.browser), dest: Some("document") }).await;
    refused(&crossed, 403, checks, "A's token with B's state");
    let after = post_launch(&s, &token_b, &state_b, Browser { cookie: Some(&b.browser), dest: Some("document") }).await;
    refused(&after, 403, "stale or was used already", "B's state after a crossed post");

    // Another browser: its launch cookie is not the one this attempt gave.
    let (c, d) = (begin(&s).await, begin(&s).await);
    let (token_c, state_c) = answered(&s, &c).await;
    let elsewhere = post_launch(&s, &token_c, &state_c, Browser { cookie: Some(&d.browser), dest: Some("document") }).await;
    refused(&elsewhere, 403, "begun in another browser", "another browser's cookie");
    let framed_elsewhere = post_launch(&s, &token_c, &state_c, Browser { cookie: Some(&d.browser), dest: Some("iframe") }).await;
    refused(&framed_elsewhere, 403, "stale or was used already", "the same state again");
    assert_eq!(footprint(&s).await, made, "nothing made by a refused launch");

    // Login initiations from an issuer, client or deployment not registered: 400 in words.
    let honest = s.platform.login_params();
    let with = |name: &str, value: &str| -> Vec<(&'static str, String)> {
        honest.iter().map(|(k, v)| (*k, if *k == name { value.to_string() } else { v.clone() })).collect()
    };
    for (fields, words, what) in [
        (with("iss", "https://lms.unknown.example"), "not registered", "an unknown issuer"),
        (with("client_id", "someone-else"), "not registered", "an unknown client id"),
        (with("lti_deployment_id", "dep-other"), "deployment is not registered", "an unknown deployment"),
    ] {
        for by_get in [false, true] {
            let answer = initiate(&s.portal, &fields, by_get).await;
            refused(&answer, 400, words, what);
            assert!(answer.cookie(BROWSER).is_none() && answer.location.is_empty(), "{what}: {answer:?}");
        }
    }
    let incomplete = initiate(&s.portal, &[("iss", s.platform.issuer())], false).await;
    refused(&incomplete, 400, "Open SliceHub from your course in the LMS", "no login_hint");
    // The GET form works like the POST.
    s.platform.set_launch(ivy(), gpu101());
    let by_get = begin_with(&s, true).await;
    let (token, state) = answered(&s, &by_get).await;
    signed_in(&post_launch(&s, &token, &state, Browser { cookie: Some(&by_get.browser), dest: None }).await, GPU101, &s.portal);

    let log = audit(&s).await;
    let failures = log.lines().filter(|l| l.contains("login.failure") && l.contains("lti")).count();
    assert!(failures >= 7 + 3, "refused launches are in the audit log ({failures}):\n{log}");

    // The platform rotates its key: the next launch is checked against the new one.
    let old_kid = s.platform.kid();
    s.platform.rotate_key();
    assert_ne!(s.platform.kid(), old_kid);
    let rotated = launch(&s, &ivy(), &gpu101(), true, Some("document")).await;
    signed_in(&rotated, GPU101, &s.portal);
    s.platform.tamper(Tamper::OtherKey);
    let forged = launch(&s, &mallory, &evil, true, Some("document")).await;
    s.platform.tamper(Tamper::None);
    refused(&forged, 403, checks, "another key under the new key id");
}

// ---------------------------------------------------------------------------------------
// 4. The roster through Names and Roles

fn member(user_id: &str, name: &str, role: &str, status: &str) -> Member {
    Member {
        user_id: user_id.into(),
        name: name.into(),
        email: format!("{}@lms.example", name.to_lowercase().replace(' ', ".")),
        roles: vec![role.into()],
        status: status.into(),
    }
}

#[tokio::test]
async fn the_lms_roster_adds_and_drops_its_students_only() {
    let s = setup(None).await;
    let roster = vec![
        member("lms-ivy", "Ivy Ng", INSTRUCTOR, "Active"),
        member("lms-ana", "Ana Lopez", LEARNER, "Active"),
        member("lms-ben", "Ben Okafor", LEARNER, "Active"),
        member("lms-cat", "Cat Mills", LEARNER, "Active"),
        member("lms-dan", "Dan Gone", LEARNER, "Inactive"),
    ];
    s.platform.set_members(roster.clone());
    // Pages linked relatively, after another link whose target has a comma in it.
    s.platform.set_next_links(NextLinks::Relative);

    // The portal's public key as a tool.
    let jwks: Value = client().get(format!("{}/lti/jwks", s.portal.url)).send().await.unwrap().json().await.unwrap();
    let keys = jwks["keys"].as_array().expect("a key set");
    assert_eq!(keys.len(), 1, "{jwks}");
    assert_eq!((keys[0]["kty"].as_str(), keys[0]["alg"].as_str()), (Some("RSA"), Some("RS256")), "{jwks}");
    assert!(keys[0]["kid"].is_string() && keys[0]["n"].is_string() && keys[0]["e"].is_string(), "{jwks}");
    for private in ["d", "p", "q", "dp", "dq", "qi"] {
        assert!(keys[0].get(private).is_none(), "no private part {private}: {jwks}");
    }

    // The instructor's launch reads the roster in the background.
    let ivy_session = signed_in(&launch(&s, &ivy(), &gpu101(), true, Some("document")).await, GPU101, &s.portal);
    let expected = pairs(&[("ana.lopez", "student"), ("ben.okafor", "student"), ("cat.mills", "student"), ("ivy.ng", "instructor")]);
    let deadline = Instant::now() + Duration::from_secs(30);
    while members(&s, GPU101).await != expected {
        assert!(Instant::now() < deadline, "the roster was read: {:?}\n{}", members(&s, GPU101).await, log_tail(&s.portal));
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert!(s.platform.token_requests() >= 1, "an access token for an assertion checked against /lti/jwks");
    assert!(s.platform.nrps_requests() >= 3, "every page of five members, two a page: {}", s.platform.nrps_requests());
    s.platform.set_next_links(NextLinks::Absolute);

    // Her next launch, within five minutes of that read, reads nothing again.
    let read = s.platform.nrps_requests();
    signed_in(&launch(&s, &ivy(), &gpu101(), true, Some("document")).await, GPU101, &s.portal);
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(s.platform.nrps_requests(), read, "no second background read within five minutes");
    let all = users(&s).await;
    assert!(find(&all, "dan.gone").is_none(), "no account for an inactive member: {all:?}");
    for name in ["ana.lopez", "ben.okafor", "cat.mills"] {
        let row = find(&all, name).unwrap_or_else(|| panic!("{name}: {all:?}"));
        assert_eq!(row["is_admin"], false);
        assert!(!row["sources"].to_string().contains("Password"), "{row}");
    }

    // A student added by hand (an administrator's CSV import).
    let csv = "username,display name,email\nhana,Hana Hand,\n";
    let body = format!("code={GPU101}&csv_base64={}", urlencode(&base64(csv.as_bytes())));
    let resp = post(&client(), &s.portal.url, Some(&s.admin), "import_roster", body).await;
    assert_eq!(resp.status(), 200, "{}", resp.text().await.unwrap());

    // Cat leaves the LMS course; the instructor reads the roster now.
    let tokens = s.platform.token_requests();
    let pages = s.platform.nrps_requests();
    s.platform.set_members(roster.iter().filter(|m| m.user_id != "lms-cat").cloned().collect());
    let (status, body) = call(&s.portal, &ivy_session, "sync_lms_roster", &format!("code={GPU101}")).await;
    assert_eq!(status, 200, "{body}\n{}", log_tail(&s.portal));
    let sync: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(sync["added"], serde_json::json!([]), "{sync}");
    assert_eq!(sync["dropped"], serde_json::json!(["cat.mills"]), "{sync}");
    assert_eq!(sync["dropped_running"], serde_json::json!([]), "{sync}");
    assert!(s.platform.token_requests() > tokens && s.platform.nrps_requests() > pages);
    assert_eq!(
        members(&s, GPU101).await,
        pairs(&[("ana.lopez", "student"), ("ben.okafor", "student"), ("hana", "student"), ("ivy.ng", "instructor")]),
        "cat's membership is gone, hana's (by hand) stays"
    );
    assert!(find(&users(&s).await, "cat.mills").is_some(), "her account stays");

    // Again: nothing to do. Cat back: added.
    let (status, body) = call(&s.portal, &ivy_session, "sync_lms_roster", &format!("code={GPU101}")).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(serde_json::from_str::<Value>(&body).unwrap(), serde_json::json!({"added": [], "dropped": [], "dropped_running": []}));
    s.platform.set_members(roster.clone());
    let (status, body) = call(&s.portal, &ivy_session, "sync_lms_roster", &format!("code={GPU101}")).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(serde_json::from_str::<Value>(&body).unwrap()["added"], serde_json::json!(["cat.mills"]));

    // An LMS that lists nobody (NRPS off, a privacy setting) drops nobody, the instructor
    // included.
    let full = members(&s, GPU101).await;
    s.platform.set_members(Vec::new());
    let (status, body) = call(&s.portal, &ivy_session, "sync_lms_roster", &format!("code={GPU101}")).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(serde_json::from_str::<Value>(&body).unwrap(), serde_json::json!({"added": [], "dropped": [], "dropped_running": []}));
    assert_eq!(members(&s, GPU101).await, full);
    s.platform.set_members(roster.clone());

    // A next page elsewhere is an error, not the end of the roster: a roster cut after its
    // first page drops nobody.
    s.platform.set_next_links(NextLinks::Elsewhere("http://127.0.0.2:9".into()));
    let (status, body) = call(&s.portal, &ivy_session, "sync_lms_roster", &format!("code={GPU101}")).await;
    assert_eq!(status, 502, "{body}");
    assert!(body.contains("did not give the roster"), "{body}");
    assert_eq!(members(&s, GPU101).await, full, "nobody after the first page dropped");
    assert!(log_tail(&s.portal).contains("leaves the roster's site"), "{}", log_tail(&s.portal));
    s.platform.set_next_links(NextLinks::Absolute);

    // Only the course's instructors (and administrators) read it; a course without an LMS
    // says so in words.
    let anonymous = post(&client(), &s.portal.url, None, "sync_lms_roster", format!("code={GPU101}")).await;
    assert_eq!(anonymous.status(), 401, "anonymous");
    s.portal.cli(&["course", "add", "CS-101", "Deep Learning"], "");
    let (status, body) = call(&s.portal, &s.admin, "sync_lms_roster", "code=CS-101").await;
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("no LMS roster"), "{body}");

    let log = audit(&s).await;
    assert!(log.lines().any(|l| l.contains("course.roster.lms") && l.contains(GPU101) && l.contains("1 dropped")), "{log}");
}

#[tokio::test]
async fn two_lms_courses_of_one_course_keep_each_others_students() {
    let s = setup(None).await;
    let section = |learners: &[(&str, &str)]| -> Vec<Member> {
        let mut list = vec![member("lms-ivy", "Ivy Ng", INSTRUCTOR, "Active")];
        list.extend(learners.iter().map(|(sub, name)| member(sub, name, LEARNER, "Active")));
        list
    };
    let evening = "ctx-gpu101-evening";
    s.platform.set_members_of("ctx-gpu101", section(&[("lms-ana", "Ana Lopez")]));
    s.platform.set_members_of(evening, section(&[("lms-ben", "Ben Okafor")]));
    signed_in(&launch(&s, &ivy(), &gpu101(), true, Some("document")).await, GPU101, &s.portal);
    let deadline = Instant::now() + Duration::from_secs(30);
    while members(&s, GPU101).await != pairs(&[("ana.lopez", "student"), ("ivy.ng", "instructor")]) {
        assert!(Instant::now() < deadline, "the roster was read: {:?}\n{}", members(&s, GPU101).await, log_tail(&s.portal));
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    // The evening section, another LMS course of the same LMS, linked to GPU101 as well (by
    // the database: the pages do not offer it yet).
    let store = slicehub_core::store::Store::connect(&s.database, 1).await.expect("the portal's database");
    store
        .execute_admin(&format!(
            "INSERT INTO lti_contexts (platform_id, context_id, course_id, memberships_url)
             VALUES ((SELECT id FROM lti_platforms WHERE name = '{LMS}'), '{evening}', (SELECT id FROM courses WHERE code = '{GPU101}'), '{}')",
            s.platform.memberships_url(evening)
        ))
        .await
        .expect("a second link");
    let sync = |expected: Value| {
        let s = &s;
        async move {
            let (status, body) = call(&s.portal, &s.admin, "sync_lms_roster", &format!("code={GPU101}")).await;
            assert_eq!(status, 200, "{body}\n{}", log_tail(&s.portal));
            assert_eq!(serde_json::from_str::<Value>(&body).unwrap(), expected);
        }
    };
    // Both rosters, read together: each section's students stay, again and again.
    sync(serde_json::json!({"added": ["ben.okafor"], "dropped": [], "dropped_running": []})).await;
    let both = pairs(&[("ana.lopez", "student"), ("ben.okafor", "student"), ("ivy.ng", "instructor")]);
    assert_eq!(members(&s, GPU101).await, both);
    sync(serde_json::json!({"added": [], "dropped": [], "dropped_running": []})).await;
    assert_eq!(members(&s, GPU101).await, both, "neither section drops the other's students");

    // One section's roster cannot be read: nothing is applied, Ana (gone from the day
    // section meanwhile) included.
    s.platform.set_members_of("ctx-gpu101", section(&[]));
    store
        .execute_admin(&format!(
            "UPDATE lti_contexts SET memberships_url = '{}' WHERE context_id = '{evening}'",
            s.platform.memberships_url("no-such-course")
        ))
        .await
        .unwrap();
    let (status, body) = call(&s.portal, &s.admin, "sync_lms_roster", &format!("code={GPU101}")).await;
    assert_eq!(status, 502, "{body}");
    assert_eq!(members(&s, GPU101).await, both, "nothing applied while a roster is unread");

    // Both read again: Ana, in neither section now, is dropped; Ben stays.
    store
        .execute_admin(&format!(
            "UPDATE lti_contexts SET memberships_url = '{}' WHERE context_id = '{evening}'",
            s.platform.memberships_url(evening)
        ))
        .await
        .unwrap();
    store.close().await;
    sync(serde_json::json!({"added": [], "dropped": ["ana.lopez"], "dropped_running": []})).await;
    assert_eq!(members(&s, GPU101).await, pairs(&[("ben.okafor", "student"), ("ivy.ng", "instructor")]));
}

// ---------------------------------------------------------------------------------------
// 5. Registration through the CLI

#[tokio::test]
async fn lms_registration_is_checked_and_removal_stops_launches() {
    let s = setup(None).await;
    let listed = |portal: &Portal| -> Vec<Value> {
        serde_json::from_str::<Value>(&portal.cli(&["lms", "list", "--json"], "")).expect("JSON").as_array().cloned().unwrap()
    };
    let rows = listed(&s.portal);
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0]["name"], LMS);
    assert_eq!(rows[0]["issuer"], s.platform.issuer());
    assert_eq!(rows[0]["client_id"], s.platform.client_id());
    assert_eq!(rows[0]["deployment_ids"], s.platform.deployment_id());
    assert_eq!(rows[0]["jwks_url"], s.platform.jwks_url());
    let plain = s.portal.cli(&["lms", "list"], "");
    assert!(plain.contains(LMS) && plain.contains(&s.platform.issuer()), "{plain}");

    let add = |name: &str, issuer: &str, client_id: &str, login: &str| -> Vec<String> {
        [
            "lms", "add", name, "--issuer", issuer, "--client-id", client_id, "--deployment", "dep-9", "--login-url", login,
            "--token-url", "https://lms.two.example/token", "--jwks-url", "https://lms.two.example/jwks",
        ]
        .iter()
        .map(|a| a.to_string())
        .collect()
    };
    let issuer = s.platform.issuer();
    for (args, words, what) in [
        (add("two", "lms.two.example", "c2", "https://lms.two.example/auth"), "The issuer must be a web address", "an issuer that is no URL"),
        (add("two", "ftp://lms.two.example", "c2", "https://lms.two.example/auth"), "http:// or https://", "an ftp issuer"),
        (add("two", "https://lms.two.example", "c2", "not a url"), "The authentication URL must be", "a login URL that is no URL"),
        (add(LMS, "https://lms.two.example", "c2", "https://lms.two.example/auth"), "registered already", "a name taken"),
        (add("two", &issuer, &s.platform.client_id(), "https://lms.two.example/auth"), "registered already", "an issuer and client id taken"),
        (add("two two", "https://lms.two.example", "c2", "https://lms.two.example/auth"), "The name may only contain", "a name with a space"),
    ] {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = s.portal.cli_fails(&args);
        assert!(out.contains(words), "{what}: {words:?} in {out}");
        assert_eq!(listed(&s.portal).len(), 1, "{what}: no row");
    }
    let out = s.portal.cli_fails(&["lms", "remove", "nothing-here"]);
    assert!(out.contains("no LMS is registered as nothing-here"), "{out}");

    // A launch works; one begun before the removal and posted after it does not, nor does
    // a new login initiation.
    signed_in(&launch(&s, &ivy(), &gpu101(), true, Some("document")).await, GPU101, &s.portal);
    s.platform.set_launch(ivy(), gpu101());
    let begun = begin(&s).await;
    let (id_token, state) = answered(&s, &begun).await;
    let out = s.portal.cli(&["lms", "remove", LMS], "");
    assert!(out.contains(&format!("removed {LMS}")), "{out}");
    assert!(listed(&s.portal).is_empty());
    let late = post_launch(&s, &id_token, &state, Browser { cookie: Some(&begun.browser), dest: Some("document") }).await;
    refused(&late, 403, "stale or was used already", "a launch of a removed LMS");
    let answer = initiate(&s.portal, &s.platform.login_params(), false).await;
    refused(&answer, 400, "not registered", "a login initiation of a removed LMS");

    // What it made stays: the course and its instructor.
    assert_eq!(members(&s, GPU101).await, pairs(&[("ivy.ng", "instructor")]));
    let log = audit(&s).await;
    assert!(log.lines().any(|l| l.contains("lms.remove") && l.contains(LMS)), "{log}");

    // Another LMS registered later under the same name: its user "lms-ivy" (LMS user ids
    // are often small numbers) is someone else, with an account and a course of their own;
    // Ivy's account and course are not theirs.
    let other = LtiPlatform::start(&s.portal.url).await;
    let out = register(&s.portal, &other, LMS);
    assert!(out.contains(&format!("registered {LMS}")), "{out}");
    let impostor = launch_on(&s, &other, &ivy(), &gpu101(), true, Some("document")).await;
    let session = signed_in(&impostor, "GPU101-2", &s.portal);
    assert_eq!(whoami(&s.portal, &session).await, "ivy.ng-2");
    assert_eq!(members(&s, GPU101).await, pairs(&[("ivy.ng", "instructor")]));
    assert_eq!(members(&s, "GPU101-2").await, pairs(&[("ivy.ng-2", "instructor")]));
    let all = users(&s).await;
    assert_eq!(find(&all, "ivy.ng").unwrap()["sources"], serde_json::json!(["LMS (removed)"]), "{all:?}");
    assert_eq!(find(&all, "ivy.ng-2").unwrap()["sources"], serde_json::json!([format!("LMS ({LMS})")]), "{all:?}");
}

// ---------------------------------------------------------------------------------------
// 6. Over HTTPS

#[tokio::test]
async fn over_https_the_launch_cookie_has_the_host_prefix_and_no_other_counts() {
    let portal = Portal::start(BIN.as_ref(), &[("SLICEHUB_ADMIN_PASSWORD", ADMIN_PASSWORD), ("SLICEHUB_SERVER_SECURE_COOKIES", "true")]).await;
    let platform = LtiPlatform::start(&portal.url).await;
    register(&portal, &platform, LMS);
    let s = Setup { portal, platform, admin: String::new(), database: String::new() };
    let host_cookie = "__Host-slicehub_lti";
    s.platform.set_launch(ivy(), gpu101());
    let post = |id_token: String, state: String, cookie: String| {
        let s = &s;
        async move {
            let request = client()
                .post(format!("{}/lti/launch", s.portal.url))
                .form(&[("id_token", id_token.as_str()), ("state", state.as_str())])
                .header("origin", s.platform.issuer())
                .header("sec-fetch-site", "cross-site")
                .header("sec-fetch-dest", "document")
                .header("cookie", cookie);
            answer_of(request.send().await.unwrap()).await
        }
    };

    // Path=/ and the __Host- prefix (begin_on checks the attributes); no cookie of the
    // plain name.
    let begun = begin_on(&s, &s.platform, false, host_cookie).await;
    let (id_token, state) = answered(&s, &begun).await;
    // A cookie of the plain name (planted by a notebook host of the same site, on a more
    // specific path, so the browser sends it first) counts for nothing: not "another
    // browser", not this browser.
    let planted = post(id_token, state, format!("{BROWSER}=0123456789abcdef0123456789abcdef; {BROWSER}={}", begun.browser)).await;
    assert_eq!(planted.status, 200, "a ticket page, as without any cookie: {planted:?}\n{}", log_tail(&s.portal));
    assert!(planted.cookie("__Host-slicehub_session").is_none() && planted.cookie(SESSION).is_none(), "{planted:?}");
    ticket_of(&planted);

    // The real one signs in at once, with the __Host- login cookie.
    let begun = begin_on(&s, &s.platform, false, host_cookie).await;
    let (id_token, state) = answered(&s, &begun).await;
    let direct = post(id_token, state, format!("{BROWSER}=0123456789abcdef0123456789abcdef; {host_cookie}={}", begun.browser)).await;
    assert_eq!((direct.status, direct.location.as_str()), (303, "/courses/GPU101"), "{direct:?}\n{}", log_tail(&s.portal));
    assert!(direct.cookie("__Host-slicehub_session").is_some(), "{direct:?}");
}
