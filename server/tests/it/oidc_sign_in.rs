//! OpenID Connect sign-in (`[oidc.NAME]`) through the real binary: a real provider
//! (`oidc-provider-mock`, Python, in `target/idp-venv`) for the ordinary ways, and a small
//! provider written here (axum + jsonwebtoken) for answers no honest provider gives.
//! Every client here follows no redirect and carries its cookies by hand, as a browser
//! would: the sign-in cookie `slicehub_sign_in` from the redirect to the provider, the
//! login cookie `slicehub_session` from the callback. Each refusal is checked for what
//! must not happen too: no login cookie, no account, no attached identity, no membership.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};
use slicehub_end2end::form::{client, post, sign_in};
use slicehub_end2end::oidc_provider::OidcProvider;
use slicehub_end2end::{free_port, Portal};

use crate::common::answer::{answer_of, get, Answer};
use crate::common::on_sqlite_then_postgres;

const BIN: &str = env!("CARGO_BIN_EXE_slicehub");
const ADMIN_PASSWORD: &str = "oidc-admin-pass-1";
const NAME: &str = "campus";
const LABEL: &str = "Campus login";
const SESSION: &str = "slicehub_session";
const BROWSER: &str = "slicehub_sign_in";
/// The sign-in and login cookies with `server.secure_cookies` (HTTPS).
const HOST_BROWSER: &str = "__Host-slicehub_sign_in";
const HOST_SESSION: &str = "__Host-slicehub_session";
/// The mapping every provider of these tests has.
const ROLES: &str = r#"admin_groups = "gpu-admins"
course_groups = "CS-101: cs101-staff=instructor, cs101-students=student""#;

// ---------------------------------------------------------------------------------------
// Configuration and the portal

/// One `[oidc.NAME]` table; its client secret in a file beside the configuration.
struct ProviderToml<'a> {
    name: &'a str,
    label: &'a str,
    issuer: &'a str,
    client_id: &'a str,
    secret: &'a str,
}

/// Writes `slicehub.toml` (and the secret files) into `dir`; its path.
fn write_config(dir: &Path, providers: &[ProviderToml<'_>]) -> PathBuf {
    let mut text = String::new();
    for p in providers {
        let secret_file = dir.join(format!("{}.secret", p.name));
        std::fs::write(&secret_file, format!("{}\n", p.secret)).expect("secret file");
        text.push_str(&format!(
            "[oidc.{name}]\nissuer = \"{issuer}\"\nclient_id = \"{client_id}\"\nclient_secret_file = \"{secret}\"\nlabel = \"{label}\"\n{ROLES}\n\n",
            name = p.name,
            issuer = p.issuer,
            client_id = p.client_id,
            secret = secret_file.display(),
            label = p.label,
        ));
    }
    let path = dir.join("slicehub.toml");
    std::fs::write(&path, text).expect("config file");
    path
}

async fn start_portal(config: &Path, database: Option<&str>) -> Portal {
    start_portal_with(config, database, &[]).await
}

async fn start_portal_with(config: &Path, database: Option<&str>, extra: &[(&str, &str)]) -> Portal {
    let config = config.to_str().expect("UTF-8 path");
    let mut env = vec![("SLICEHUB_ADMIN_PASSWORD", ADMIN_PASSWORD), ("SLICEHUB_CONFIG", config)];
    if let Some(url) = database {
        env.push(("SLICEHUB_DATABASE_URL", url));
    }
    env.extend_from_slice(extra);
    Portal::start(BIN.as_ref(), &env).await
}

/// The last lines of the portal's log, for a failing assertion.
fn log_tail(portal: &Portal) -> String {
    let log = portal.log();
    let lines: Vec<&str> = log.lines().collect();
    lines[lines.len().saturating_sub(30)..].join("\n")
}

// ---------------------------------------------------------------------------------------
// HTTP as a browser without a cookie jar

/// A redirect to the provider: the authorization URL and the browser's sign-in cookie.
struct Begun {
    authorize_url: String,
    browser: String,
}

impl Begun {
    fn param(&self, name: &str) -> String {
        query_param(&self.authorize_url, name).unwrap_or_else(|| panic!("no {name} in {}", self.authorize_url))
    }
}

fn query_param(url: &str, name: &str) -> Option<String> {
    url::Url::parse(url)
        .expect("an absolute URL")
        .query_pairs()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.into_owned())
}

/// `GET /login/oidc/PROVIDER?QUERY`: must send the browser to the provider with a cookie.
async fn begin(portal: &Portal, provider: &str, query: &str, cookies: &[&str]) -> Begun {
    let answer = get(&format!("{}/login/oidc/{provider}{query}", portal.url), cookies).await;
    assert_eq!(answer.status, 303, "the button sends the browser to the provider: {answer:?}\n{}", log_tail(portal));
    let browser = answer.cookie(BROWSER).unwrap_or_else(|| panic!("the sign-in cookie is set: {answer:?}"));
    let line = answer.set_cookie_line(BROWSER).unwrap();
    assert!(line.contains("HttpOnly") && line.contains("SameSite=Lax") && line.contains("Path=/"), "{line}");
    assert!(answer.cookie(SESSION).is_none(), "no login yet: {answer:?}");
    Begun { authorize_url: answer.location, browser }
}

/// Signs in through the real provider as `sub`, starting from `/login/oidc/NAME{query}`;
/// the portal's answer to the callback.
async fn through_provider(portal: &Portal, idp: &OidcProvider, sub: &str, query: &str, cookies: &[&str]) -> Answer {
    let begun = begin(portal, NAME, query, cookies).await;
    let back = idp.approve(&begun.authorize_url, sub).await;
    assert!(back.starts_with(&format!("{}/login/oidc/{NAME}/callback?", portal.url)), "{back}");
    let mut with = vec![begun.browser.as_str()];
    with.extend_from_slice(cookies);
    get(&back, &with).await
}

/// A sign-in that worked: it lands on `landing` with a login cookie; the cookie.
#[track_caller]
fn signed_in(answer: &Answer, landing: &str, portal: &Portal) -> String {
    assert_eq!((answer.status, answer.location.as_str()), (303, landing), "{answer:?}\n{}", log_tail(portal));
    assert!(answer.clears(BROWSER), "the one-use sign-in cookie is removed: {answer:?}");
    answer.cookie(SESSION).unwrap_or_else(|| panic!("a login cookie: {answer:?}"))
}

/// A sign-in that failed with `/login?problem=WORD`, with no login cookie.
#[track_caller]
fn refused(answer: &Answer, word: &str, what: &str) {
    assert_eq!(
        (answer.status, answer.location.as_str()),
        (303, format!("/login?problem={word}").as_str()),
        "{what}: {answer:?}"
    );
    assert!(answer.cookie(SESSION).is_none(), "{what}: no login cookie: {answer:?}");
}

/// Who the cookie signs in as (`current_user`), or Null.
async fn me(portal: &Portal, cookie: &str) -> Value {
    let resp = post(&client(), &portal.url, Some(cookie), "current_user", String::new()).await;
    assert_eq!(resp.status(), 200);
    serde_json::from_str(&resp.text().await.unwrap()).expect("current_user as JSON")
}

/// The course codes and roles of the signed-in person.
async fn my_courses(portal: &Portal, cookie: &str) -> Vec<(String, String)> {
    let me = me(portal, cookie).await;
    me["courses"]
        .as_array()
        .map(|cs| {
            cs.iter()
                .map(|c| (c["code"].as_str().unwrap_or_default().to_string(), c["role"].as_str().unwrap_or_default().to_string()))
                .collect()
        })
        .unwrap_or_default()
}

/// Status of `list_users` with this cookie: 200 for an administrator.
async fn list_users_status(portal: &Portal, cookie: &str) -> u16 {
    post(&client(), &portal.url, Some(cookie), "list_users", String::new()).await.status().as_u16()
}

async fn admin_cookie(portal: &Portal) -> String {
    sign_in(&client(), &portal.url, "admin", ADMIN_PASSWORD).await.expect("the administrator signs in with the password")
}

/// Every account as the administrator sees them.
async fn users(portal: &Portal) -> Vec<Value> {
    let admin = admin_cookie(portal).await;
    let resp = post(&client(), &portal.url, Some(&admin), "list_users", String::new()).await;
    assert_eq!(resp.status(), 200);
    serde_json::from_str(&resp.text().await.unwrap()).expect("the users as JSON")
}

fn find<'a>(users: &'a [Value], name: &str) -> Option<&'a Value> {
    users.iter().find(|u| u["username"] == name)
}

/// CS-101 as `slicehub course list --json` has it: its instructors and number of students.
fn cs101(portal: &Portal) -> (Vec<String>, u64) {
    let list: Vec<Value> = serde_json::from_str(&portal.cli(&["course", "list", "--json"], "")).expect("courses as JSON");
    let course = list.iter().find(|c| c["code"] == "CS-101").expect("CS-101 exists");
    let instructors = course["instructors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i.as_str().unwrap().to_string())
        .collect();
    (instructors, course["students"].as_u64().unwrap())
}

/// Whether the login cookie still signs anyone in.
async fn cookie_works(portal: &Portal, cookie: &str) -> bool {
    !me(portal, cookie).await.is_null()
}

// ---------------------------------------------------------------------------------------
// 1. First sign-in, groups and roles (SQLite, then PostgreSQL)

fn ann(groups: &[&str]) -> Value {
    json!({
        "preferred_username": "ann.lee",
        "name": "Ann Lee",
        "email": "ann.lee@campus.edu",
        "groups": groups,
    })
}

fn with_sub(sub: &str, claims: Value) -> Value {
    let mut claims = claims;
    claims["sub"] = json!(sub);
    claims
}

#[tokio::test(flavor = "multi_thread")]
async fn first_sign_in_makes_the_account_from_claims_and_groups_give_and_take_roles() {
    on_sqlite_then_postgres(first_sign_in).await;
}

async fn first_sign_in(database: Option<String>) {
    let idp = OidcProvider::start(&[with_sub("ann-sub-1", ann(&["cs101-students", "library"]))]).await;
    let issuer = idp.issuer();
    let dir = tempfile::tempdir().unwrap();
    // First an id the provider never registered (it takes any), to learn the portal's
    // callback; then the client registered for exactly that callback, with its secret
    // sent by HTTP Basic, after a restart of the portal.
    let config = write_config(
        dir.path(),
        &[ProviderToml { name: NAME, label: LABEL, issuer: &issuer, client_id: "not-registered", secret: "x" }],
    );
    let mut portal = start_portal(&config, database.as_deref()).await;
    let (client_id, secret) = idp.register_client(&format!("{}/login/oidc/{NAME}/callback", portal.url)).await;
    write_config(dir.path(), &[ProviderToml { name: NAME, label: LABEL, issuer: &issuer, client_id: &client_id, secret: &secret }]);
    portal.restart().await;
    portal.cli(&["course", "add", "CS-101", "Deep Learning"], "");
    assert_eq!(users(&portal).await.len(), 1, "only the first administrator");

    // The button: an authorization-code request with state, nonce and PKCE (S256), the
    // configured scopes, the registered client and its callback.
    let begun = begin(&portal, NAME, "?next=/account", &[]).await;
    assert!(begun.authorize_url.starts_with(&format!("{issuer}/")), "{}", begun.authorize_url);
    assert_eq!(begun.param("response_type"), "code");
    assert_eq!(begun.param("client_id"), client_id);
    assert_eq!(begun.param("redirect_uri"), format!("{}/login/oidc/{NAME}/callback", portal.url));
    assert_eq!(begun.param("code_challenge_method"), "S256");
    assert!(begun.param("code_challenge").len() >= 43);
    assert!(begun.param("state").len() >= 16 && begun.param("nonce").len() >= 16);
    let scopes = begun.param("scope");
    assert!(["openid", "profile", "email"].iter().all(|s| scopes.split(' ').any(|x| x == *s)), "{scopes}");
    assert_eq!(users(&portal).await.len(), 1, "the button makes no account");

    // The first sign-in makes her account from the claims and signs her in.
    let back = idp.approve(&begun.authorize_url, "ann-sub-1").await;
    let ann_cookie = signed_in(&get(&back, &[&begun.browser]).await, "/account", &portal);
    // A page only signed-in people see, with her name on it.
    let page = get(&format!("{}/account", portal.url), &[&ann_cookie]).await;
    assert_eq!(page.status, 200, "a signed-in page: {page:?}");
    assert!(page.body.contains("Ann Lee") && page.body.contains("ann.lee"), "{}", page.body);
    let anonymous = get(&format!("{}/account", portal.url), &[]).await;
    assert_eq!(anonymous.status, 303, "the same page sends strangers to sign in: {anonymous:?}");
    let who = me(&portal, &ann_cookie).await;
    assert_eq!((who["username"].as_str(), who["display_name"].as_str()), (Some("ann.lee"), Some("Ann Lee")), "{who}");
    assert_eq!(who["is_admin"], false);
    assert_eq!(who["must_change_password"], false);

    let all = users(&portal).await;
    assert_eq!(all.len(), 2, "{all:?}");
    let row = find(&all, "ann.lee").unwrap_or_else(|| panic!("the account was made: {all:?}"));
    assert_eq!(row["display_name"], "Ann Lee");
    assert_eq!(row["email"], "ann.lee@campus.edu");
    assert_eq!(row["is_admin"], false);
    assert_eq!(row["sources"], json!([LABEL]), "signs in through the provider only, no password");
    for password in ["", "ann.lee", "ann-sub-1", "anything-at-all-1"] {
        assert_eq!(
            sign_in(&client(), &portal.url, "ann.lee", password).await,
            None,
            "the password form signs nobody in as an account made by a provider ({password:?})"
        );
    }

    // Her groups made her a student of CS-101, not an administrator.
    assert_eq!(my_courses(&portal, &ann_cookie).await, vec![("CS-101".to_string(), "student".to_string())]);
    assert_eq!(cs101(&portal), (vec![], 1));
    assert_eq!(list_users_status(&portal, &ann_cookie).await, 403);

    // New groups at the provider: staff of CS-101 and an administrator, at the next
    // sign-in; the same account, and the browser's earlier login is ended.
    idp.set_user("ann-sub-1", ann(&["cs101-staff", "gpu-admins"])).await;
    let again = through_provider(&portal, &idp, "ann-sub-1", "", &[&ann_cookie]).await;
    let ann_admin = signed_in(&again, "/", &portal);
    assert_ne!(ann_admin, ann_cookie);
    assert!(!cookie_works(&portal, &ann_cookie).await, "signing in again ends the browser's earlier login");
    assert_eq!(users(&portal).await.len(), 2, "no second account");
    assert_eq!(my_courses(&portal, &ann_admin).await, vec![("CS-101".to_string(), "instructor".to_string())]);
    assert_eq!(cs101(&portal), (vec!["ann.lee".to_string()], 0));
    assert_eq!(list_users_status(&portal, &ann_admin).await, 200, "the admin group makes her an administrator");

    // Out of the groups: the course and the administrator right go at the next sign-in.
    idp.set_user("ann-sub-1", ann(&["library"])).await;
    let left = signed_in(&through_provider(&portal, &idp, "ann-sub-1", "", &[]).await, "/", &portal);
    assert_eq!(my_courses(&portal, &left).await, vec![], "out of the group, out of the course");
    assert_eq!(cs101(&portal), (vec![], 0));
    assert_eq!(list_users_status(&portal, &left).await, 403, "out of the admin group, no longer an administrator");
    assert_eq!(find(&users(&portal).await, "ann.lee").unwrap()["is_admin"], false);

    // An instructor role given by hand stays, whatever the provider's groups say later.
    portal.cli(&["course", "instructor", "CS-101", "ann.lee"], "");
    for groups in [&["library"][..], &["cs101-students"][..], &[][..]] {
        idp.set_user("ann-sub-1", ann(groups)).await;
        let cookie = signed_in(&through_provider(&portal, &idp, "ann-sub-1", "", &[]).await, "/", &portal);
        assert_eq!(
            my_courses(&portal, &cookie).await,
            vec![("CS-101".to_string(), "instructor".to_string())],
            "given by hand, kept with groups {groups:?}"
        );
        assert_eq!(cs101(&portal), (vec!["ann.lee".to_string()], 0), "groups {groups:?}");
    }
    assert_eq!(users(&portal).await.len(), 2);

    // A disabled account is not signed in through the provider either; enabled, it is.
    portal.cli(&["user", "disable", "ann.lee"], "");
    refused(&through_provider(&portal, &idp, "ann-sub-1", "", &[]).await, "disabled", "a disabled account");
    portal.cli(&["user", "enable", "ann.lee"], "");
    let back = signed_in(&through_provider(&portal, &idp, "ann-sub-1", "", &[]).await, "/", &portal);
    assert_eq!(me(&portal, &back).await["username"], "ann.lee");
}

// ---------------------------------------------------------------------------------------
// 2. Answers that must not sign anyone in

#[tokio::test(flavor = "multi_thread")]
async fn stale_replayed_foreign_and_mixed_up_answers_sign_nobody_in() {
    let mallory = json!({"sub": "mallory-sub", "preferred_username": "mallory", "name": "Mallory", "groups": ["gpu-admins", "cs101-staff"]});
    let ann_claims = with_sub("ann-sub-1", ann(&["cs101-students"]));
    let idp = OidcProvider::start(&[mallory, ann_claims]).await;
    let issuer = idp.issuer();
    let dir = tempfile::tempdir().unwrap();
    // A second provider on the same issuer, to deliver one provider's answer to the other.
    let config = write_config(
        dir.path(),
        &[
            ProviderToml { name: NAME, label: LABEL, issuer: &issuer, client_id: "portal-one", secret: "s1" },
            ProviderToml { name: "other", label: "Other login", issuer: &issuer, client_id: "portal-two", secret: "s2" },
        ],
    );
    let portal = start_portal(&config, None).await;
    portal.cli(&["course", "add", "CS-101", "Deep Learning"], "");
    let callback = format!("{}/login/oidc/{NAME}/callback", portal.url);

    // A forged state (never handed out), with and without a sign-in cookie.
    let begun = begin(&portal, NAME, "", &[]).await;
    for cookies in [&[begun.browser.as_str()][..], &[][..]] {
        let forged = get(&format!("{callback}?code=abc&state=forged-state-0123456789"), cookies).await;
        refused(&forged, "stale", "a state the portal never gave");
    }

    // The same callback URL twice: the second time it is stale.
    let begun = begin(&portal, NAME, "", &[]).await;
    let back = idp.approve(&begun.authorize_url, "ann-sub-1").await;
    let first = signed_in(&get(&back, &[&begun.browser]).await, "/", &portal);
    assert!(cookie_works(&portal, &first).await);
    let replay = get(&back, &[&begun.browser]).await;
    refused(&replay, "stale", "the same answer again");

    // The answer delivered to a browser without the cookie (another browser, or a link
    // someone was sent): refused, and the attempt is used up, so the browser that began it
    // cannot finish it either.
    let begun = begin(&portal, NAME, "", &[]).await;
    let back = idp.approve(&begun.authorize_url, "mallory-sub").await;
    refused(&get(&back, &[]).await, "other-browser", "no sign-in cookie");
    refused(&get(&back, &[&begun.browser]).await, "stale", "after another browser used it");
    // …and with the cookie of another attempt.
    let mine = begin(&portal, NAME, "", &[]).await;
    let theirs = begin(&portal, NAME, "", &[]).await;
    let back = idp.approve(&theirs.authorize_url, "mallory-sub").await;
    refused(&get(&back, &[&mine.browser]).await, "other-browser", "another attempt's cookie");
    refused(&get(&back, &[&theirs.browser]).await, "stale", "used up");
    // …and with two cookies of the name: Mallory's own planted beside the browser's (a
    // host of the same site can set one on a more specific path, which the browser sends
    // first). Which is whose cannot be told, so neither is believed, in either order.
    for planted_first in [true, false] {
        let mine = begin(&portal, NAME, "", &[]).await;
        let theirs = begin(&portal, NAME, "", &[]).await;
        let back = idp.approve(&theirs.authorize_url, "mallory-sub").await;
        let cookies = if planted_first { [&theirs.browser, &mine.browser] } else { [&mine.browser, &theirs.browser] };
        let cookies = [cookies[0].as_str(), cookies[1].as_str()];
        refused(&get(&back, &cookies).await, "other-browser", "two sign-in cookies");
        // The browser's own sign-in, with its own cookie alone, still works.
        let back = idp.approve(&mine.authorize_url, "ann-sub-1").await;
        let cookie = signed_in(&get(&back, &[&mine.browser]).await, "/", &portal);
        assert_eq!(me(&portal, &cookie).await["username"], "ann.lee");
    }

    // A code of attempt A with the state of attempt B of the same browser: the ID token's
    // nonce is A's, not B's.
    let a = begin(&portal, NAME, "", &[]).await;
    let b = begin(&portal, NAME, "", &[&a.browser]).await;
    let back_a = idp.approve(&a.authorize_url, "mallory-sub").await;
    let back_b = idp.approve(&b.authorize_url, "mallory-sub").await;
    let code_a = query_param(&back_a, "code").expect("a code");
    let state_b = query_param(&back_b, "state").expect("a state");
    assert_eq!(query_param(&back_b, "state").unwrap(), b.param("state"));
    let mixed = format!("{callback}?code={}&state={}", urlencode(&code_a), urlencode(&state_b));
    refused(&get(&mixed, &[&b.browser]).await, "refused", "A's code with B's state");

    // One provider's answer delivered to another provider's callback.
    let begun = begin(&portal, "other", "", &[]).await;
    let back = idp.approve(&begun.authorize_url, "mallory-sub").await;
    let moved = back.replace("/login/oidc/other/callback", &format!("/login/oidc/{NAME}/callback"));
    assert_ne!(moved, back);
    refused(&get(&moved, &[&begun.browser]).await, "stale", "the other provider's answer");

    // The person says no at the provider.
    let begun = begin(&portal, NAME, "", &[]).await;
    let resp = client().post(&begun.authorize_url).form(&[("action", "deny")]).send().await.unwrap();
    let back = resp.headers().get("location").expect("back to the portal").to_str().unwrap().to_string();
    assert_eq!(query_param(&back, "error").as_deref(), Some("access_denied"), "{back}");
    refused(&get(&back, &[&begun.browser]).await, "denied", "access denied");
    let other_error = get(&format!("{callback}?error=server_error&state={}", urlencode(&begun.param("state"))), &[&begun.browser]).await;
    refused(&other_error, "refused", "another error");

    // The provider vouches for someone it does not name: a subject it does not know gets
    // only an `email` claim, no `preferred_username`; or a name no account can have.
    let begun = begin(&portal, NAME, "", &[]).await;
    let back = idp.approve(&begun.authorize_url, "stranger@campus.edu").await;
    refused(&get(&back, &[&begun.browser]).await, "unusable", "no preferred_username");
    idp.set_user("odd-sub", json!({"preferred_username": "not a name!", "groups": ["gpu-admins"]})).await;
    refused(&through_provider(&portal, &idp, "odd-sub", "", &[]).await, "unusable", "a name no account can have");

    // Mallory was never signed in: no account, no identity, no course, no admin.
    let all = users(&portal).await;
    assert!(find(&all, "mallory").is_none(), "{all:?}");
    assert_eq!(all.len(), 2, "the administrator and ann: {all:?}");
    assert_eq!(cs101(&portal), (vec![], 1), "only ann, as a student");

    // `next` leads only to a page of this site.
    for (next, landing) in [
        ("//evil.example", "/"),
        ("https://evil.example", "/"),
        ("/%5Cevil.example", "/"),
        ("%2F%2Fevil.example%2Fx", "/"),
        ("/login", "/"),
        ("/admin/users?tab=1", "/admin/users?tab=1"),
    ] {
        let answer = through_provider(&portal, &idp, "ann-sub-1", &format!("?next={next}"), &[]).await;
        let cookie = signed_in(&answer, landing, &portal);
        assert!(cookie_works(&portal, &cookie).await, "next={next}");
    }

    // A provider the configuration does not name: 404 in plain words, no cookie.
    let admin = admin_cookie(&portal).await;
    for path in ["/login/oidc/nope", "/login/oidc/nope/callback?code=a&state=b", "/logout/oidc/nope"] {
        let answer = get(&format!("{}{path}", portal.url), &[]).await;
        assert_eq!(answer.status, 404, "{path}: {answer:?}");
        assert!(answer.body.contains("no such sign-in provider") && !answer.body.contains('<'), "{path}: {answer:?}");
        assert!(answer.set_cookies.iter().all(|c| !c.starts_with(BROWSER) && !c.starts_with(SESSION)), "{answer:?}");
    }
    let linked = client()
        .post(format!("{}/login/oidc/nope/link", portal.url))
        .header("origin", &portal.url)
        .header("cookie", &admin)
        .send()
        .await
        .unwrap();
    assert_eq!(linked.status(), 404);
}

fn urlencode(text: &str) -> String {
    slicehub_end2end::form::urlencode(text)
}

/// Two tabs of one browser sign in at once: one cookie, holding the secrets of both
/// attempts, so either tab may finish first; the cookie keeps only the newest three.
#[tokio::test(flavor = "multi_thread")]
async fn two_tabs_of_one_browser_signing_in_at_once_both_finish() {
    let idp = OidcProvider::start(&[with_sub("ann-sub-1", ann(&[]))]).await;
    let dir = tempfile::tempdir().unwrap();
    let issuer = idp.issuer();
    let config = write_config(
        dir.path(),
        &[ProviderToml { name: NAME, label: LABEL, issuer: &issuer, client_id: "portal", secret: "s" }],
    );
    let portal = start_portal(&config, None).await;

    // Tab one, then tab two (the browser sends the cookie tab one got).
    let first = begin(&portal, NAME, "?next=/account", &[]).await;
    let second = begin(&portal, NAME, "", &[&first.browser]).await;
    assert_ne!(first.param("state"), second.param("state"));
    let back_first = idp.approve(&first.authorize_url, "ann-sub-1").await;
    let back_second = idp.approve(&second.authorize_url, "ann-sub-1").await;

    // Tab one comes back first, with the browser's cookie as it is now (tab two's).
    let answer = get(&back_first, &[&second.browser]).await;
    assert_eq!((answer.status, answer.location.as_str()), (303, "/account"), "the first tab signs in: {answer:?}\n{}", log_tail(&portal));
    let cookie = answer.cookie(SESSION).unwrap_or_else(|| panic!("a login cookie: {answer:?}"));
    assert_eq!(me(&portal, &cookie).await["username"], "ann.lee");
    // The cookie now vouches for tab two's attempt alone; then tab two finishes too.
    let rest = answer.cookie(BROWSER).unwrap_or_else(|| panic!("tab two's secret stays: {answer:?}"));
    assert!(rest.len() < second.browser.len(), "the used secret went: {rest} / {}", second.browser);
    let cookie = signed_in(&get(&back_second, &[&rest]).await, "/", &portal);
    assert_eq!(me(&portal, &cookie).await["username"], "ann.lee");

    // Four tabs: the oldest attempt's secret has left the cookie; the other three work.
    let mut tabs: Vec<Begun> = Vec::new();
    for _ in 0..4 {
        let held: Vec<&str> = tabs.last().map(|t| vec![t.browser.as_str()]).unwrap_or_default();
        let begun = begin(&portal, NAME, "", &held).await;
        tabs.push(begun);
    }
    let browser = tabs[3].browser.clone();
    let back = idp.approve(&tabs[0].authorize_url, "ann-sub-1").await;
    refused(&get(&back, &[&browser]).await, "other-browser", "the fourth tab pushed out the first");
    let back = idp.approve(&tabs[1].authorize_url, "ann-sub-1").await;
    let answer = get(&back, &[&browser]).await;
    assert_eq!((answer.status, answer.cookie(SESSION).is_some()), (303, true), "the second of four: {answer:?}");
}

/// Over HTTPS (`server.secure_cookies`) the sign-in cookie is `__Host-slicehub_sign_in`:
/// no other host of the site can set it, and one of the plain name that another host
/// planted (say, a notebook host, on a more specific path) is not read at all, so it
/// cannot make a victim finish the planter's own sign-in.
#[tokio::test(flavor = "multi_thread")]
async fn over_https_the_sign_in_cookie_is_host_only_and_a_planted_one_signs_nobody_in() {
    let mallory = json!({"sub": "mallory-sub", "preferred_username": "mallory", "name": "Mallory"});
    let idp = OidcProvider::start(&[mallory, with_sub("ann-sub-1", ann(&[]))]).await;
    let dir = tempfile::tempdir().unwrap();
    let issuer = idp.issuer();
    let config = write_config(
        dir.path(),
        &[ProviderToml { name: NAME, label: LABEL, issuer: &issuer, client_id: "portal", secret: "s" }],
    );
    let portal = start_portal_with(&config, None, &[("SLICEHUB_SERVER_SECURE_COOKIES", "true")]).await;
    let begin_secure = |query: &'static str| {
        let portal = &portal;
        async move {
            let answer = get(&format!("{}/login/oidc/{NAME}{query}", portal.url), &[]).await;
            assert_eq!(answer.status, 303, "{answer:?}\n{}", log_tail(portal));
            assert!(answer.cookie(BROWSER).is_none(), "no cookie of the plain name: {answer:?}");
            let line = answer.set_cookie_line(HOST_BROWSER).unwrap_or_else(|| panic!("the __Host- cookie: {answer:?}"));
            for attribute in ["Secure", "Path=/", "HttpOnly", "SameSite=Lax"] {
                assert!(line.split("; ").any(|a| a == attribute), "{attribute} in {line}");
            }
            assert!(!line.to_lowercase().contains("domain="), "a __Host- cookie names no domain: {line}");
            let cookie = answer.cookie(HOST_BROWSER).unwrap();
            (answer.location, cookie)
        }
    };
    let accounts = || {
        let list: Vec<Value> = serde_json::from_str(&portal.cli(&["user", "list", "--json"], "")).expect("users as JSON");
        list.iter().map(|u| u["username"].as_str().unwrap_or_default().to_string()).collect::<Vec<_>>()
    };

    // Mallory begins her own sign-in, finishes it at the provider as herself, and plants
    // her secret under the plain name in Ann's browser, where Ann has begun hers.
    let (mallory_url, mallory_cookie) = begin_secure("").await;
    let mallory_back = idp.approve(&mallory_url, "mallory-sub").await;
    let (ann_url, ann_cookie) = begin_secure("?next=/account").await;
    let planted = mallory_cookie.replacen(HOST_BROWSER, BROWSER, 1);
    let answer = get(&mallory_back, &[&planted, &ann_cookie]).await;
    refused(&answer, "other-browser", "a planted cookie of the plain name");
    assert!(answer.cookie(HOST_SESSION).is_none(), "{answer:?}");

    // Two values of the __Host- name (not possible in a browser; refused all the same).
    let (mallory_url, mallory_cookie) = begin_secure("").await;
    let mallory_back = idp.approve(&mallory_url, "mallory-sub").await;
    let answer = get(&mallory_back, &[&mallory_cookie, &ann_cookie]).await;
    refused(&answer, "other-browser", "two values of the cookie");
    assert!(answer.cookie(HOST_SESSION).is_none(), "{answer:?}");
    assert!(!accounts().contains(&"mallory".to_string()), "Mallory was never signed in: {:?}", accounts());

    // Ann's own sign-in, with her cookie: signed in with the __Host- login cookie.
    let back = idp.approve(&ann_url, "ann-sub-1").await;
    let answer = get(&back, &[&ann_cookie]).await;
    assert_eq!((answer.status, answer.location.as_str()), (303, "/account"), "{answer:?}\n{}", log_tail(&portal));
    assert!(answer.clears(HOST_BROWSER), "the used cookie is removed: {answer:?}");
    let session = answer.cookie(HOST_SESSION).unwrap_or_else(|| panic!("a __Host- login cookie: {answer:?}"));
    assert_eq!(me(&portal, &session).await["username"], "ann.lee");
}

// ---------------------------------------------------------------------------------------
// 3. The provider's new signing key

#[tokio::test(flavor = "multi_thread")]
async fn a_provider_with_a_new_signing_key_is_believed_after_its_keys_are_read_again() {
    let mut idp = OidcProvider::start(&[
        with_sub("ann-sub-1", ann(&["cs101-students"])),
        json!({"sub": "bo-sub", "preferred_username": "bo", "name": "Bo"}),
    ])
    .await;
    let dir = tempfile::tempdir().unwrap();
    let issuer = idp.issuer();
    let config = write_config(
        dir.path(),
        &[ProviderToml { name: NAME, label: LABEL, issuer: &issuer, client_id: "portal", secret: "s" }],
    );
    let portal = start_portal(&config, None).await;
    // The portal read the provider's keys before it answered its first request.
    let keys_read_by = Instant::now();
    let first = signed_in(&through_provider(&portal, &idp, "ann-sub-1", "", &[]).await, "/", &portal);
    assert!(cookie_works(&portal, &first).await);

    // A new key (and, as ever with this provider, tokens naming no `kid`). The portal reads
    // keys again at most every 10 s; past that, two people signing in at once after the
    // change are both believed.
    idp.restart().await;
    let ann_begun = begin(&portal, NAME, "", &[]).await;
    let bo_begun = begin(&portal, NAME, "", &[]).await;
    let ann_back = idp.approve(&ann_begun.authorize_url, "ann-sub-1").await;
    let bo_back = idp.approve(&bo_begun.authorize_url, "bo-sub").await;
    if let Some(wait) = Duration::from_secs(11).checked_sub(keys_read_by.elapsed()) {
        tokio::time::sleep(wait).await;
    }
    let (ann_with, bo_with) = ([ann_begun.browser.as_str()], [bo_begun.browser.as_str()]);
    let (ann_answer, bo_answer) = tokio::join!(get(&ann_back, &ann_with), get(&bo_back, &bo_with));
    let ann_cookie = signed_in(&ann_answer, "/", &portal);
    let bo_cookie = signed_in(&bo_answer, "/", &portal);
    assert_eq!(me(&portal, &ann_cookie).await["username"], "ann.lee");
    assert_eq!(me(&portal, &bo_cookie).await["username"], "bo");
    assert!(portal.log().contains("reading the provider's keys again"), "{}", log_tail(&portal));

    // And the keys read again serve the next sign-ins without another read.
    let again = signed_in(&through_provider(&portal, &idp, "ann-sub-1", "", &[]).await, "/", &portal);
    assert_eq!(me(&portal, &again).await["username"], "ann.lee");
    assert_eq!(users(&portal).await.len(), 3);
}

// ---------------------------------------------------------------------------------------
// 4. Names taken by local accounts, and attaching a provider to one

#[tokio::test(flavor = "multi_thread")]
async fn a_local_accounts_name_is_never_joined_but_its_owner_can_attach_the_provider() {
    let root = json!({"sub": "root-sub", "preferred_username": "admin", "name": "Campus Root", "email": "root@campus.edu", "groups": ["cs101-students"]});
    let idp = OidcProvider::start(&[root, with_sub("ann-sub-1", ann(&[]))]).await;
    let dir = tempfile::tempdir().unwrap();
    let issuer = idp.issuer();
    let config = write_config(
        dir.path(),
        &[ProviderToml { name: NAME, label: LABEL, issuer: &issuer, client_id: "portal", secret: "s" }],
    );
    let portal = start_portal(&config, None).await;
    portal.cli(&["course", "add", "CS-101", "Deep Learning"], "");
    let before = users(&portal).await;
    assert_eq!(find(&before, "admin").unwrap()["sources"], json!(["Password"]));

    // The provider's `admin` is not the portal's `admin`: refused, twice, whatever case.
    for _ in 0..2 {
        refused(&through_provider(&portal, &idp, "root-sub", "", &[]).await, "name-taken", "the name of a local account");
    }
    idp.set_user("root-sub", json!({"preferred_username": "ADMIN@campus.edu", "name": "Campus Root", "groups": ["cs101-students"]})).await;
    refused(&through_provider(&portal, &idp, "root-sub", "", &[]).await, "name-taken", "the same name in capitals, as an e-mail");
    let after = users(&portal).await;
    assert_eq!(after, before, "no account made, nothing attached to admin");
    assert_eq!(cs101(&portal), (vec![], 0), "the refused groups gave no membership to anyone");
    let admin = admin_cookie(&portal).await;

    // Attaching: only for a signed-in account, only from the portal's own pages.
    let link = format!("{}/login/oidc/{NAME}/link", portal.url);
    let anonymous = answer_of(client().post(&link).header("origin", &portal.url).send().await.unwrap()).await;
    assert_eq!((anonymous.status, anonymous.location.as_str()), (303, "/login?next=/account"), "{anonymous:?}");
    assert!(anonymous.cookie(BROWSER).is_none());
    let forged = answer_of(
        client().post(&link).header("origin", "http://evil.example").header("cookie", &admin).send().await.unwrap(),
    )
    .await;
    assert_eq!(forged.status, 403, "another site cannot begin an attachment: {forged:?}");
    assert!(forged.cookie(BROWSER).is_none());

    // The administrator attaches the provider's root to her account.
    let started = answer_of(client().post(&link).header("origin", &portal.url).header("cookie", &admin).send().await.unwrap()).await;
    assert_eq!(started.status, 303, "{started:?}");
    assert!(started.location.starts_with(&format!("{issuer}/")), "{started:?}");
    let browser = started.cookie(BROWSER).expect("the sign-in cookie");
    let back = idp.approve(&started.location, "root-sub").await;
    let attached = get(&back, &[&browser, &admin]).await;
    let admin_again = signed_in(&attached, "/account", &portal);
    assert_eq!(me(&portal, &admin_again).await["username"], "admin");
    let row = users(&portal).await;
    assert_eq!(row.len(), 1, "no account made: {row:?}");
    assert_eq!(find(&row, "admin").unwrap()["sources"], json!(["Password", LABEL]));

    // From now on the provider's root signs in as the administrator, who stays one (the
    // right was given by hand, not by a group), and whose password still works.
    let via_provider = signed_in(&through_provider(&portal, &idp, "root-sub", "?next=/account", &[]).await, "/account", &portal);
    let who = me(&portal, &via_provider).await;
    assert_eq!((who["username"].as_str(), who["is_admin"].as_bool()), (Some("admin"), Some(true)), "{who}");
    assert_eq!(list_users_status(&portal, &via_provider).await, 200);
    assert_eq!(my_courses(&portal, &via_provider).await, vec![("CS-101".to_string(), "student".to_string())]);
    assert!(sign_in(&client(), &portal.url, "admin", ADMIN_PASSWORD).await.is_some(), "the password still works");

    // The same identity cannot be attached to a second account.
    let ann_cookie = signed_in(&through_provider(&portal, &idp, "ann-sub-1", "", &[]).await, "/", &portal);
    let started = answer_of(client().post(&link).header("origin", &portal.url).header("cookie", &ann_cookie).send().await.unwrap()).await;
    assert_eq!(started.status, 303, "{started:?}");
    let browser = started.cookie(BROWSER).expect("the sign-in cookie");
    let back = idp.approve(&started.location, "root-sub").await;
    refused(&get(&back, &[&browser, &ann_cookie]).await, "attached-elsewhere", "root is attached to admin already");
    assert_eq!(me(&portal, &ann_cookie).await["username"], "ann.lee", "ann is still signed in as herself");
    let all = users(&portal).await;
    assert_eq!(find(&all, "admin").unwrap()["sources"], json!(["Password", LABEL]));
    assert_eq!(find(&all, "ann.lee").unwrap()["sources"], json!([LABEL]));
    assert_eq!(all.len(), 2);
}

// ---------------------------------------------------------------------------------------
// 5. Forged ID tokens, from a provider written here

/// An RSA key made by the `openssl` command: PKCS#1 DER for jsonwebtoken, the modulus for
/// the JWK, the public key in PEM.
struct RsaKey {
    der: Vec<u8>,
    n: String,
    public_pem: Vec<u8>,
}

fn openssl(args: &[&str]) -> Vec<u8> {
    let out = std::process::Command::new("openssl").args(args).output().expect("the openssl command");
    assert!(out.status.success(), "openssl {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    out.stdout
}

fn rsa_key(dir: &Path, name: &str) -> RsaKey {
    let pem = dir.join(format!("{name}.pem"));
    let pem = pem.to_str().unwrap();
    openssl(&["genrsa", "-out", pem, "2048"]);
    let der = openssl(&["rsa", "-in", pem, "-outform", "DER", "-traditional"]);
    let modulus = String::from_utf8(openssl(&["rsa", "-in", pem, "-noout", "-modulus"])).unwrap();
    let hex = modulus.trim().strip_prefix("Modulus=").expect("Modulus=…");
    let bytes: Vec<u8> = (0..hex.len()).step_by(2).map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap()).collect();
    let public_pem = openssl(&["rsa", "-in", pem, "-pubout"]);
    RsaKey { der, n: b64url(&bytes), public_pem }
}

fn b64url(bytes: &[u8]) -> String {
    slicehub_end2end::form::base64(bytes).trim_end_matches('=').replace('+', "-").replace('/', "_")
}

/// What the provider written here answers.
#[derive(Default)]
struct FakeState {
    issuer: String,
    jwks: Mutex<Value>,
    /// Another token endpoint than its own, when set.
    token_endpoint: Option<String>,
    /// The next token endpoint answer's `id_token`.
    id_token: Mutex<String>,
    /// The `id_token` for a code, when set (else `id_token`).
    by_code: Mutex<HashMap<String, String>>,
    /// When set, the token endpoint answers only once this many requests wait.
    gate: Mutex<Option<Arc<tokio::sync::Barrier>>>,
    /// When set, the token endpoint answers with a redirect there.
    redirect_to: Mutex<Option<String>>,
    token_requests: AtomicUsize,
}

/// A JWK set of the public half of `key`, under `kid`.
fn jwks(key: &RsaKey, kid: &str) -> Value {
    json!({"keys": [{"kty": "RSA", "use": "sig", "alg": "RS256", "kid": kid, "n": key.n, "e": "AQAB"}]})
}

/// Serves discovery, keys and the token endpoint on `listener`.
fn serve_fake(listener: tokio::net::TcpListener, state: Arc<FakeState>) {
    use axum::extract::State;
    use axum::response::IntoResponse;
    use axum::routing::{get, post};
    let app = axum::Router::new()
        .route(
            "/.well-known/openid-configuration",
            get(|State(s): State<Arc<FakeState>>| async move {
                axum::Json(json!({
                    "issuer": s.issuer,
                    "authorization_endpoint": format!("{}/authorize", s.issuer),
                    "token_endpoint": s.token_endpoint.clone().unwrap_or_else(|| format!("{}/token", s.issuer)),
                    "jwks_uri": format!("{}/jwks", s.issuer),
                    "end_session_endpoint": format!("{}/logout", s.issuer),
                    "response_types_supported": ["code"],
                    "subject_types_supported": ["public"],
                    "id_token_signing_alg_values_supported": ["RS256"],
                }))
            }),
        )
        .route("/jwks", get(|State(s): State<Arc<FakeState>>| async move { axum::Json(s.jwks.lock().unwrap().clone()) }))
        .route(
            "/token",
            post(|State(s): State<Arc<FakeState>>, axum::Form(form): axum::Form<HashMap<String, String>>| async move {
                s.token_requests.fetch_add(1, Ordering::SeqCst);
                let gate = s.gate.lock().unwrap().clone();
                if let Some(gate) = gate {
                    gate.wait().await;
                }
                if let Some(to) = s.redirect_to.lock().unwrap().clone() {
                    return (axum::http::StatusCode::FOUND, [(axum::http::header::LOCATION, to)]).into_response();
                }
                let by_code = form.get("code").and_then(|code| s.by_code.lock().unwrap().get(code).cloned());
                let id_token = by_code.unwrap_or_else(|| s.id_token.lock().unwrap().clone());
                axum::Json(json!({"access_token": "at-1", "token_type": "Bearer", "expires_in": 300, "id_token": id_token}))
                    .into_response()
            }),
        )
        .with_state(state);
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
}

/// A forged ID token for the nonce of the attempt.
type Forge<'a> = Box<dyn Fn(&str) -> String + 'a>;

fn case<'a>(what: &'a str, forge: impl Fn(&str) -> String + 'a) -> (&'a str, Forge<'a>) {
    (what, Box::new(forge))
}

fn now_s() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs() as i64
}

fn rs256(key: &RsaKey, kid: Option<&str>, claims: &Value) -> String {
    let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::RS256);
    header.kid = kid.map(str::to_string);
    jsonwebtoken::encode(&header, claims, &jsonwebtoken::EncodingKey::from_rsa_der(&key.der)).expect("signed")
}

fn hs256(secret: &[u8], claims: &Value) -> String {
    let header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256);
    jsonwebtoken::encode(&header, claims, &jsonwebtoken::EncodingKey::from_secret(secret)).expect("signed")
}

fn unsigned(claims: &Value) -> String {
    format!("{}.{}.", b64url(br#"{"alg":"none","typ":"JWT"}"#), b64url(claims.to_string().as_bytes()))
}

#[tokio::test(flavor = "multi_thread")]
async fn forged_id_tokens_and_a_redirecting_token_endpoint_sign_nobody_in() {
    let dir = tempfile::tempdir().unwrap();
    let key = rsa_key(dir.path(), "provider");
    let other_key = rsa_key(dir.path(), "other");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let issuer = format!("http://{}", listener.local_addr().unwrap());
    let state = Arc::new(FakeState {
        issuer: issuer.clone(),
        jwks: Mutex::new(jwks(&key, "k1")),
        ..FakeState::default()
    });
    serve_fake(listener, state.clone());
    // Where the redirecting token endpoint points: it must never be asked anything.
    let elsewhere = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let elsewhere_url = format!("http://{}/token", elsewhere.local_addr().unwrap());
    let elsewhere_hits = Arc::new(AtomicUsize::new(0));
    {
        let hits = elsewhere_hits.clone();
        let app = axum::Router::new().fallback(move || {
            let hits = hits.clone();
            async move {
                hits.fetch_add(1, Ordering::SeqCst);
                axum::Json(json!({"access_token": "x", "token_type": "Bearer"}))
            }
        });
        tokio::spawn(async move {
            let _ = axum::serve(elsewhere, app).await;
        });
    }

    let client_id = "portal-fake";
    let client_secret = "fake-client-secret";
    let config = write_config(
        dir.path(),
        &[ProviderToml { name: "fake", label: "Fake login", issuer: &issuer, client_id, secret: client_secret }],
    );
    let portal = start_portal(&config, None).await;
    portal.cli(&["course", "add", "CS-101", "Deep Learning"], "");
    let callback = format!("{}/login/oidc/fake/callback", portal.url);

    let claims = |nonce: &str| {
        json!({
            "iss": issuer,
            "sub": "forged-sub",
            "aud": client_id,
            "iat": now_s(),
            "exp": now_s() + 300,
            "nonce": nonce,
            "preferred_username": "forged",
            "name": "Forged Person",
            "groups": ["gpu-admins", "cs101-staff"],
        })
    };
    let with = |nonce: &str, change: &dyn Fn(&mut Value)| {
        let mut c = claims(nonce);
        change(&mut c);
        c
    };
    let cases = [
        case("another audience", |n| rs256(&key, Some("k1"), &with(n, &|c: &mut Value| c["aud"] = json!("someone-else")))),
        case("the client among audiences it does not trust", |n| {
            rs256(&key, Some("k1"), &with(n, &|c: &mut Value| c["aud"] = json!([client_id, "someone-else"])))
        }),
        case("expired", |n| {
            rs256(&key, Some("k1"), &with(n, &|c: &mut Value| {
                c["iat"] = json!(now_s() - 1200);
                c["exp"] = json!(now_s() - 600);
            }))
        }),
        case("another issuer", |n| rs256(&key, Some("k1"), &with(n, &|c: &mut Value| c["iss"] = json!(format!("{issuer}/other"))))),
        case("another nonce", |n| rs256(&key, Some("k1"), &with(n, &|c: &mut Value| c["nonce"] = json!("not-the-nonce")))),
        case("no nonce", |n| {
            rs256(&key, Some("k1"), &with(n, &|c: &mut Value| {
                c.as_object_mut().unwrap().remove("nonce");
            }))
        }),
        case("signed by another key under the provider's kid", |n| rs256(&other_key, Some("k1"), &claims(n))),
        case("signed by another key, no kid", |n| rs256(&other_key, None, &claims(n))),
        case("signed by another key, an unknown kid", |n| rs256(&other_key, Some("k2"), &claims(n))),
        case("a payload changed after signing", |n| {
            let good = rs256(&key, Some("k1"), &claims(n));
            let parts: Vec<&str> = good.split('.').collect();
            let changed = with(n, &|c: &mut Value| c["groups"] = json!(["gpu-admins", "cs101-staff", "more"]));
            format!("{}.{}.{}", parts[0], b64url(changed.to_string().as_bytes()), parts[2])
        }),
        case("alg none", |n| unsigned(&claims(n))),
        case("HS256 keyed with the public key", |n| hs256(&key.public_pem, &claims(n))),
        case("HS256 keyed with the client secret", |n| hs256(client_secret.as_bytes(), &claims(n))),
    ];
    for (what, forge) in &cases {
        let begun = begin(&portal, "fake", "", &[]).await;
        assert!(begun.authorize_url.starts_with(&format!("{issuer}/authorize?")), "{}", begun.authorize_url);
        *state.id_token.lock().unwrap() = forge(&begun.param("nonce"));
        let asked = state.token_requests.load(Ordering::SeqCst);
        let answer = get(&format!("{callback}?code=code-1&state={}", urlencode(&begun.param("state"))), &[&begun.browser]).await;
        refused(&answer, "refused", what);
        assert_eq!(state.token_requests.load(Ordering::SeqCst), asked + 1, "{what}: the code was exchanged");
    }
    let all = users(&portal).await;
    assert_eq!(all.len(), 1, "no account from a forged token: {all:?}");
    assert_eq!(cs101(&portal), (vec![], 0), "no membership from a forged token");
    assert!(portal.log().contains("refused an ID token"), "{}", log_tail(&portal));

    // A token endpoint that answers with a redirect: not followed, nobody signed in.
    *state.redirect_to.lock().unwrap() = Some(elsewhere_url.clone());
    let begun = begin(&portal, "fake", "", &[]).await;
    *state.id_token.lock().unwrap() = rs256(&key, Some("k1"), &claims(&begun.param("nonce")));
    let asked = state.token_requests.load(Ordering::SeqCst);
    let answer = get(&format!("{callback}?code=code-1&state={}", urlencode(&begun.param("state"))), &[&begun.browser]).await;
    assert!(
        ["/login?problem=refused", "/login?problem=unavailable"].contains(&answer.location.as_str()) && answer.status == 303,
        "{answer:?}"
    );
    assert!(answer.cookie(SESSION).is_none(), "{answer:?}");
    assert_eq!(state.token_requests.load(Ordering::SeqCst), asked + 1);
    assert_eq!(elsewhere_hits.load(Ordering::SeqCst), 0, "the redirect was not followed");
    assert_eq!(users(&portal).await.len(), 1);
    *state.redirect_to.lock().unwrap() = None;

    // The control: the same claims, honestly signed, sign in (and the groups apply).
    let begun = begin(&portal, "fake", "?next=/account", &[]).await;
    *state.id_token.lock().unwrap() = rs256(&key, Some("k1"), &claims(&begun.param("nonce")));
    let answer = get(&format!("{callback}?code=code-1&state={}", urlencode(&begun.param("state"))), &[&begun.browser]).await;
    let cookie = signed_in(&answer, "/account", &portal);
    let who = me(&portal, &cookie).await;
    assert_eq!((who["username"].as_str(), who["is_admin"].as_bool()), (Some("forged"), Some(true)), "{who}");
    assert_eq!(cs101(&portal), (vec!["forged".to_string()], 0));
    assert_eq!(find(&users(&portal).await, "forged").unwrap()["sources"], json!(["Fake login"]));

    // The provider's own sign-out page, with the client named.
    let out = get(&format!("{}/logout/oidc/fake", portal.url), &[&cookie]).await;
    assert_eq!((out.status, out.location.as_str()), (303, format!("{issuer}/logout?client_id={client_id}").as_str()), "{out:?}");
}

/// Several people come back from the provider at the same moment, just after it changed
/// its signing key and named the new one's `kid` in its tokens (the mock's tokens name
/// none): the keys held have no such key, the portal reads them again, and every one of
/// the people is believed, not only the one whose sign-in read them. (Whether a second
/// sign-in failed with the old keys before the first read the new ones is up to timing;
/// `MetadataCache::refresh` lets it retry with the new ones when it did.)
#[tokio::test(flavor = "multi_thread")]
async fn people_signing_in_at_once_during_a_key_rotation_are_all_believed() {
    const PEOPLE: usize = 6;
    let dir = tempfile::tempdir().unwrap();
    let old_key = rsa_key(dir.path(), "old");
    let new_key = rsa_key(dir.path(), "new");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let issuer = format!("http://{}", listener.local_addr().unwrap());
    let state = Arc::new(FakeState { issuer: issuer.clone(), jwks: Mutex::new(jwks(&old_key, "old")), ..FakeState::default() });
    serve_fake(listener, state.clone());
    let config = write_config(
        dir.path(),
        &[ProviderToml { name: "fake", label: "Fake login", issuer: &issuer, client_id: "portal-fake", secret: "s" }],
    );
    let portal = start_portal(&config, None).await;
    let keys_read_by = Instant::now();

    *state.jwks.lock().unwrap() = jwks(&new_key, "new");
    let mut callbacks = Vec::new();
    for i in 0..PEOPLE {
        let begun = begin(&portal, "fake", "", &[]).await;
        let claims = json!({
            "iss": issuer,
            "sub": format!("rotation-{i}"),
            "aud": "portal-fake",
            "iat": now_s(),
            "exp": now_s() + 300,
            "nonce": begun.param("nonce"),
            "preferred_username": format!("person{i}"),
        });
        state.by_code.lock().unwrap().insert(format!("code-{i}"), rs256(&new_key, Some("new"), &claims));
        let url = format!("{}/login/oidc/fake/callback?code=code-{i}&state={}", portal.url, urlencode(&begun.param("state")));
        callbacks.push((url, begun.browser));
    }
    // All token answers leave together, past the portal's 10 s between reads of the keys.
    *state.gate.lock().unwrap() = Some(Arc::new(tokio::sync::Barrier::new(PEOPLE)));
    if let Some(wait) = Duration::from_secs(11).checked_sub(keys_read_by.elapsed()) {
        tokio::time::sleep(wait).await;
    }
    let answers = futures_util::future::join_all(callbacks.iter().map(|(url, browser)| async move { get(url, &[browser.as_str()]).await })).await;
    for (i, answer) in answers.iter().enumerate() {
        let cookie = signed_in(answer, "/", &portal);
        assert_eq!(me(&portal, &cookie).await["username"], format!("person{i}"));
    }
    assert_eq!(users(&portal).await.len(), PEOPLE + 1);
}

// ---------------------------------------------------------------------------------------
// 6. A provider that cannot be reached

#[tokio::test(flavor = "multi_thread")]
async fn a_provider_that_cannot_be_reached_neither_stops_the_portal_nor_answers_500() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let issuer = format!("http://127.0.0.1:{port}");
    let config = write_config(
        dir.path(),
        &[ProviderToml { name: NAME, label: LABEL, issuer: &issuer, client_id: "portal", secret: "s" }],
    );
    // Nothing listens there: the portal starts (the first administrator has a password).
    let portal = start_portal(&config, None).await;
    assert!(portal.log().contains("a sign-in provider cannot be read"), "{}", log_tail(&portal));
    let answer = get(&format!("{}/login/oidc/{NAME}?next=/account", portal.url), &[]).await;
    refused(&answer, "unavailable", "an unreachable provider");
    assert!(answer.cookie(BROWSER).is_none(), "no attempt begun: {answer:?}");
    let page = get(&format!("{}/login?problem=unavailable", portal.url), &[]).await;
    assert_eq!(page.status, 200);
    assert!(page.body.contains("cannot be reached right now"), "the sign-in page says why");
    assert!(admin_cookie(&portal).await.len() > 20, "passwords still sign in");

    // The provider comes up: its button works, without a restart of the portal.
    let key = rsa_key(dir.path(), "provider");
    let state = Arc::new(FakeState {
        issuer: issuer.clone(),
        jwks: Mutex::new(jwks(&key, "k1")),
        ..FakeState::default()
    });
    serve_fake(tokio::net::TcpListener::bind(("127.0.0.1", port)).await.expect("the port is free still"), state);
    let begun = begin(&portal, NAME, "", &[]).await;
    assert!(begun.authorize_url.starts_with(&format!("{issuer}/authorize?")), "{}", begun.authorize_url);
    drop(portal);

    // A provider that takes connections and never answers: the portal still starts, and
    // the button gives up within the client's time limit.
    let hanging = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let issuer = format!("http://{}", hanging.local_addr().unwrap());
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = hanging.accept().await {
            held.push(socket);
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(
        dir.path(),
        &[ProviderToml { name: NAME, label: LABEL, issuer: &issuer, client_id: "portal", secret: "s" }],
    );
    let portal = start_portal(&config, None).await;
    assert!(portal.log().contains("a sign-in provider cannot be read"), "{}", log_tail(&portal));
    let asked = Instant::now();
    let answer = get(&format!("{}/login/oidc/{NAME}", portal.url), &[]).await;
    refused(&answer, "unavailable", "a provider that never answers");
    assert!(asked.elapsed() < Duration::from_secs(30), "gave up after {:?}", asked.elapsed());
    drop(portal);

    // A provider whose token endpoint cannot be reached when the browser comes back: the
    // service is unavailable (not a refusal of the person), and nobody is signed in.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let issuer = format!("http://{}", listener.local_addr().unwrap());
    let state = Arc::new(FakeState {
        issuer: issuer.clone(),
        jwks: Mutex::new(jwks(&key, "k1")),
        token_endpoint: Some(format!("http://127.0.0.1:{}/token", free_port())),
        ..FakeState::default()
    });
    serve_fake(listener, state);
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(
        dir.path(),
        &[ProviderToml { name: NAME, label: LABEL, issuer: &issuer, client_id: "portal", secret: "s" }],
    );
    let portal = start_portal(&config, None).await;
    let begun = begin(&portal, NAME, "", &[]).await;
    let callback = format!("{}/login/oidc/{NAME}/callback?code=c&state={}", portal.url, urlencode(&begun.param("state")));
    refused(&get(&callback, &[&begun.browser]).await, "unavailable", "an unreachable token endpoint");
    assert_eq!(users(&portal).await.len(), 1);
}
