//! Signing in through the portal's own form against a real directory (OpenLDAP's slapd,
//! StartTLS and ldaps with a test CA): search-then-bind with the service account, group
//! membership to roles, wrong passwords, locked entries, filter injection, empty
//! passwords, plain LDAP refused, local accounts never taken over.
//! Needs slapd and the OpenLDAP tools (`scripts/setup.sh --test`).

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use slicehub_end2end::form::{client, post, urlencode};
use slicehub_end2end::ldap_server::{LdapServer, Person};
use slicehub_end2end::Portal;

use crate::common::on_sqlite_then_postgres;

const BIN: &str = env!("CARGO_BIN_EXE_slicehub");
const ADMIN_PASSWORD: &str = "ldap-admin-pass-1";
const WRONG: &str = "Wrong username or password.";

fn people() -> Vec<Person> {
    vec![
        Person { uid: "alice", name: "Alice Liddell", mail: "alice@campus.example", password: "alice-dir-pass-1" },
        Person { uid: "bob", name: "Bob Builder", mail: "bob@campus.example", password: "bob-dir-pass-1" },
        Person { uid: "carol", name: "Carol Danvers", mail: "carol@campus.example", password: "carol-dir-pass-1" },
        Person { uid: "dave", name: "Dave Lister", mail: "dave@campus.example", password: "dave-dir-pass-1" },
    ]
}

const GROUPS: &[(&str, &[&str])] = &[
    ("gpu-admins", &["alice"]),
    ("cs101-staff", &["bob"]),
    ("cs101-students", &["alice", "carol"]),
];

/// The `SLICEHUB_LDAP_*` settings for `ldap`, the service account's password in a file
/// in `secrets`; `url` replaces the StartTLS URL when given.
fn ldap_env(ldap: &LdapServer, secrets: &Path, url: Option<&str>) -> Vec<(String, String)> {
    let password_file = secrets.join("ldap-bind-password");
    std::fs::write(&password_file, format!("{}\n", ldap.bind_password())).expect("password file");
    [
        ("SLICEHUB_ADMIN_PASSWORD", ADMIN_PASSWORD.to_string()),
        ("SLICEHUB_LDAP_URL", url.map(str::to_string).unwrap_or_else(|| ldap.ldap_url())),
        ("SLICEHUB_LDAP_CA_FILE", ldap.ca_pem_path().display().to_string()),
        ("SLICEHUB_LDAP_BIND_DN", ldap.bind_dn().to_string()),
        ("SLICEHUB_LDAP_BIND_PASSWORD_FILE", password_file.display().to_string()),
        ("SLICEHUB_LDAP_USER_BASE", ldap.people_dn().to_string()),
        ("SLICEHUB_LDAP_GROUP_BASE", ldap.groups_dn().to_string()),
        ("SLICEHUB_LDAP_ADMIN_GROUPS", "gpu-admins".to_string()),
        ("SLICEHUB_LDAP_COURSE_GROUPS", "CS-101: cs101-staff=instructor, cs101-students=student".to_string()),
        ("SLICEHUB_LDAP_TIMEOUT_SECONDS", "5".to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

/// A portal signing in against `ldap`, with `extra` settings on top.
async fn portal_for(ldap: &LdapServer, secrets: &Path, url: Option<&str>, extra: &[(&str, &str)]) -> Portal {
    let mut env = ldap_env(ldap, secrets, url);
    env.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    Portal::start(BIN.as_ref(), &env).await
}

/// What the form's login answers: the status, the words and the session cookie, if any.
async fn log_in(portal: &Portal, user: &str, password: &str) -> (u16, String, Option<String>) {
    let body = format!("username={}&password={}", urlencode(user), urlencode(password));
    let resp = post(&client(), &portal.url, None, "login", body).await;
    let status = resp.status().as_u16();
    let cookie = resp
        .headers()
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|v| v.starts_with("slicehub_session=") && !v.starts_with("slicehub_session=;"))
        .map(|v| v.split(';').next().unwrap_or_default().to_string());
    (status, resp.text().await.unwrap_or_default(), cookie)
}

/// Signs in; panics with the answer when refused.
async fn signed_in(portal: &Portal, user: &str, password: &str) -> String {
    let (status, words, cookie) = log_in(portal, user, password).await;
    cookie.unwrap_or_else(|| panic!("{user} was refused ({status}): {words}\n{}", portal.log()))
}

/// `current_user` as the cookie's owner sees it.
async fn me(portal: &Portal, cookie: &str) -> Value {
    let resp = post(&client(), &portal.url, Some(cookie), "current_user", String::new()).await;
    resp.json().await.expect("current_user as JSON")
}

fn role_in(me: &Value, course: &str) -> Option<String> {
    me["courses"]
        .as_array()?
        .iter()
        .find(|c| c["code"] == course)
        .and_then(|c| c["role"].as_str())
        .map(str::to_string)
}

/// `slicehub user list --json`, by username.
fn user_list(portal: &Portal) -> Vec<Value> {
    serde_json::from_str(&portal.cli(&["user", "list", "--json"], "")).expect("the user list as JSON")
}

fn listed<'a>(users: &'a [Value], name: &str) -> Option<&'a Value> {
    users.iter().find(|u| u["username"] == name)
}

/// The administrator's user list (the users page's own server function).
async fn admin_user_rows(portal: &Portal) -> Vec<Value> {
    let admin = signed_in(portal, "admin", ADMIN_PASSWORD).await;
    let resp = post(&client(), &portal.url, Some(&admin), "list_users", String::new()).await;
    assert_eq!(resp.status(), 200);
    resp.json().await.expect("list_users as JSON")
}

async fn store_of(portal: &Portal, database: Option<&str>) -> slicehub_core::store::Store {
    let url = match database {
        Some(url) => url.to_string(),
        None => format!("sqlite://{}", portal.dir.path().join("data/slicehub.db").display()),
    };
    slicehub_core::store::Store::connect(&url, 1).await.expect("the portal's database")
}

/// The newest audit rows of `action`, newest first, as (subject, detail).
async fn audited(portal: &Portal, database: Option<&str>, action: &str) -> Vec<(String, String)> {
    let store = store_of(portal, database).await;
    let rows = store.recent_audit(Some(action), 20).await.expect("audit rows");
    store.close().await;
    rows.into_iter().map(|e| (e.subject, e.detail)).collect()
}

/// How many simple binds slapd has seen as `dn`.
fn binds_as(ldap: &LdapServer, dn: &str) -> usize {
    ldap.log().matches(&format!("BIND dn=\"{dn}\" method=128")).count()
}

/// A first sign-in makes an account that has no password of its own and shows where it
/// comes from; the next sign-in finds the same account (by its DN, whatever the case
/// typed); ldaps:// works as StartTLS does.
#[tokio::test]
async fn a_directory_person_signs_in_through_the_form_and_gets_an_account_without_a_password() {
    let ldap = LdapServer::start(&people(), GROUPS);
    let secrets = tempfile::tempdir().unwrap();
    let portal = portal_for(&ldap, secrets.path(), None, &[]).await;
    wait_for_log(&portal, "answers; bound as cn=portal,dc=campus,dc=example").await;
    assert!(listed(&user_list(&portal), "alice").is_none(), "no account before the first sign-in");

    let cookie = signed_in(&portal, "alice", "alice-dir-pass-1").await;
    let who = me(&portal, &cookie).await;
    assert_eq!((who["username"].as_str(), who["display_name"].as_str()), (Some("alice"), Some("Alice Liddell")), "{who}");
    let users = user_list(&portal);
    let alice = listed(&users, "alice").expect("an account was made");
    assert_eq!(alice["email"], "alice@campus.example", "{alice}");
    assert_eq!(alice["must_change_password"], false, "{alice}");
    let rows = admin_user_rows(&portal).await;
    let row = rows.iter().find(|u| u["username"] == "alice").expect("listed to the admin");
    assert_eq!(row["sources"], serde_json::json!(["Campus directory"]), "no local password: {row}");
    let admin_row = rows.iter().find(|u| u["username"] == "admin").unwrap();
    assert_eq!(admin_row["sources"], serde_json::json!(["Password"]));
    let successes = audited(&portal, None, "login.success").await;
    assert!(successes.iter().any(|(who, detail)| who == "alice" && detail.starts_with("ldap from 127.0.0.1")), "{successes:?}");
    assert_eq!(audited(&portal, None, "user.create").await.iter().filter(|(s, _)| s == "alice").count(), 1);

    // The same person again, typed in capitals: the same account, not a second one.
    let again = signed_in(&portal, "ALICE", "alice-dir-pass-1").await;
    assert_eq!(me(&portal, &again).await["username"], "alice");
    assert_eq!(user_list(&portal).iter().filter(|u| u["username"].as_str().unwrap_or("").contains("alice")).count(), 1);
    // The account has no password here to change.
    let body = "current=alice-dir-pass-1&new_password=new-pass-12345&confirm=new-pass-12345".to_string();
    let resp = post(&client(), &portal.url, Some(&again), "change_password", body).await;
    assert_eq!(resp.status(), 400);
    assert!(resp.text().await.unwrap().contains("has no password here"));
    drop(portal);

    // ldaps:// with the same CA.
    let portal = portal_for(&ldap, secrets.path(), Some(&ldap.ldaps_url()), &[]).await;
    let cookie = signed_in(&portal, "bob", "bob-dir-pass-1").await;
    assert_eq!(me(&portal, &cookie).await["display_name"], "Bob Builder");
}

/// Groups give the administrator flag and a course role at every sign-in; leaving a group
/// takes them back at the next. On SQLite, then on PostgreSQL.
#[tokio::test]
async fn groups_give_admin_and_course_roles_and_leaving_a_group_takes_them_back() {
    on_sqlite_then_postgres(group_mapping).await;
}

async fn group_mapping(database: Option<String>) {
    let ldap = LdapServer::start(&people(), GROUPS);
    let secrets = tempfile::tempdir().unwrap();
    let mut extra = Vec::new();
    if let Some(url) = &database {
        extra.push(("SLICEHUB_DATABASE_URL", url.as_str()));
    }
    let portal = portal_for(&ldap, secrets.path(), None, &extra).await;
    portal.cli(&["course", "add", "CS-101", "Deep Learning Lab"], "");

    let alice = signed_in(&portal, "alice", "alice-dir-pass-1").await;
    let who = me(&portal, &alice).await;
    assert_eq!(who["is_admin"], true, "gpu-admins: {who}");
    assert_eq!(role_in(&who, "CS-101").as_deref(), Some("student"), "{who}");
    let bob = signed_in(&portal, "bob", "bob-dir-pass-1").await;
    let who = me(&portal, &bob).await;
    assert_eq!(who["is_admin"], false, "{who}");
    assert_eq!(role_in(&who, "CS-101").as_deref(), Some("instructor"), "{who}");
    let dave = signed_in(&portal, "dave", "dave-dir-pass-1").await;
    let who = me(&portal, &dave).await;
    assert_eq!((who["is_admin"].clone(), role_in(&who, "CS-101")), (Value::Bool(false), None), "no groups, no roles: {who}");
    let courses: Vec<Value> = serde_json::from_str(&portal.cli(&["course", "list", "--json"], "")).unwrap();
    assert_eq!(courses[0]["instructors"], serde_json::json!(["bob"]), "{courses:?}");
    assert_eq!(courses[0]["students"], 1, "{courses:?}");

    // Alice leaves both groups; Dave joins the students.
    ldap.set_groups("alice", &[]);
    ldap.set_groups("dave", &["cs101-students"]);
    let alice = signed_in(&portal, "alice", "alice-dir-pass-1").await;
    let who = me(&portal, &alice).await;
    assert_eq!(who["is_admin"], false, "left gpu-admins: {who}");
    assert_eq!(role_in(&who, "CS-101"), None, "left cs101-students: {who}");
    let dave = signed_in(&portal, "dave", "dave-dir-pass-1").await;
    assert_eq!(role_in(&me(&portal, &dave).await, "CS-101").as_deref(), Some("student"));
    let db = database.as_deref();
    let changes = audited(&portal, db, "course.member.groups").await;
    assert!(changes.contains(&("alice".to_string(), "CS-101: removed".to_string())), "{changes:?}");
    assert!(changes.contains(&("dave".to_string(), "CS-101: student".to_string())), "{changes:?}");
    let revoked = audited(&portal, db, "user.admin.revoke").await;
    assert_eq!(revoked.first().map(|(s, _)| s.as_str()), Some("alice"), "{revoked:?}");
    // The portal's own administrator is no directory person: untouched.
    let admin = signed_in(&portal, "admin", ADMIN_PASSWORD).await;
    assert_eq!(me(&portal, &admin).await["is_admin"], true);
}

/// A wrong password, a locked entry and an empty password get a local wrong password's
/// words, audit and throttle; an empty password never reaches the directory (an empty
/// simple bind is an anonymous bind, which succeeds).
#[tokio::test]
async fn wrong_locked_and_empty_passwords_are_refused_like_a_local_wrong_password() {
    let ldap = LdapServer::start(&people(), GROUPS);
    let secrets = tempfile::tempdir().unwrap();
    let portal = portal_for(&ldap, secrets.path(), None, &[]).await;

    let (status, local_words, cookie) = log_in(&portal, "admin", "not-the-admin-password").await;
    assert_eq!((status, cookie.is_some()), (401, false));
    assert!(local_words.contains(WRONG), "{local_words}");

    let (status, words, cookie) = log_in(&portal, "alice", "not-alices-password").await;
    assert_eq!((status, cookie.is_some()), (401, false), "{words}");
    assert_eq!(words, local_words, "the same words as a local wrong password");
    let failures = audited(&portal, None, "login.failure").await;
    assert_eq!(failures.first(), Some(&("alice".to_string(), "127.0.0.1".to_string())), "{failures:?}");
    assert!(listed(&user_list(&portal), "alice").is_none(), "no account for a wrong password");

    // Locked in the directory: the right password does not sign in.
    ldap.lock("carol");
    let (status, words, cookie) = log_in(&portal, "carol", "carol-dir-pass-1").await;
    assert_eq!((status, words.as_str(), cookie.is_some()), (401, local_words.as_str(), false));
    assert!(listed(&user_list(&portal), "carol").is_none());
    assert_eq!(audited(&portal, None, "login.failure").await.first().map(|(s, _)| s.as_str()), Some("carol"));

    // Empty: refused without a bind as Alice.
    let alice_dn = ldap.person_dn("alice");
    let binds_before = binds_as(&ldap, &alice_dn);
    assert!(binds_before >= 1, "the wrong password was checked by binding as Alice:\n{}", ldap.log());
    for typed in ["alice", "bob"] {
        let (status, words, cookie) = log_in(&portal, typed, "").await;
        assert_eq!((status, cookie.is_some()), (401, false), "{words}");
        assert_eq!(words, local_words);
    }
    assert_eq!(binds_as(&ldap, &alice_dn), binds_before, "an empty password reached the directory");
    assert!(!ldap.log().contains("BIND dn=\"\" method=128"), "no anonymous bind:\n{}", ldap.log());
    assert!(listed(&user_list(&portal), "bob").is_none());

    // Wrong directory passwords count toward the account's limit like local ones: after
    // five, even the right one waits.
    for _ in 0..5 {
        assert_eq!(log_in(&portal, "dave", "guess-guess-1").await.0, 401);
    }
    let (status, words, cookie) = log_in(&portal, "dave", "dave-dir-pass-1").await;
    assert_eq!((status, cookie.is_some()), (429, false), "{words}");
    assert!(words.contains("Too many failed attempts"), "{words}");
}

/// A name typed to widen the search filter finds nobody: escaped, it is a literal name.
#[tokio::test]
async fn filter_injection_in_the_username_signs_nobody_in() {
    let ldap = LdapServer::start(&people(), GROUPS);
    let secrets = tempfile::tempdir().unwrap();
    let portal = portal_for(&ldap, secrets.path(), None, &[]).await;
    let injections = ["*", "*)(uid=*))(|(uid=*", "alice)(|(uid=*", "*)(|(objectClass=*", "al*", "alice\\2a", "*)(userPassword=*"];
    for typed in injections {
        for password in ["alice-dir-pass-1", "bob-dir-pass-1"] {
            let (status, words, cookie) = log_in(&portal, typed, password).await;
            assert!(cookie.is_none(), "{typed:?} signed in");
            assert_eq!(status, 401, "{typed:?}: {words}");
            assert!(words.contains(WRONG), "{typed:?}: {words}");
        }
    }
    let users = user_list(&portal);
    assert_eq!(users.len(), 1, "only the administrator: {users:?}");
    let log = ldap.log();
    assert!(log.contains(r"(uid=\2A)") || log.contains(r"(uid=\2a)"), "the star was sent escaped:\n{log}");
    assert!(!log.contains("(uid=*)"), "a wildcard reached the directory:\n{log}");
    // The person herself still signs in.
    signed_in(&portal, "alice", "alice-dir-pass-1").await;
}

/// Plain ldap:// without StartTLS stops the start unless `ldap.allow_plain`; the
/// directory's certificate must chain to `ldap.ca_file`.
#[tokio::test]
async fn plain_ldap_is_refused_at_start_up_unless_allowed_and_certificates_are_checked() {
    let ldap = LdapServer::start(&people(), GROUPS);
    let secrets = tempfile::tempdir().unwrap();
    let mut env = ldap_env(&ldap, secrets.path(), None);
    env.push(("SLICEHUB_LDAP_START_TLS".into(), "false".into()));
    let (code, text) = serve_until_exit(&env);
    assert_eq!(code, Some(2), "a configuration error: {text}");
    assert!(text.contains("ldap.allow_plain") && text.contains("in clear"), "{text}");

    env.push(("SLICEHUB_LDAP_ALLOW_PLAIN".into(), "true".into()));
    let plain: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let portal = Portal::start(BIN.as_ref(), &plain).await;
    assert!(portal.log().contains("ldap.allow_plain"), "warned about: {}", portal.log());
    signed_in(&portal, "alice", "alice-dir-pass-1").await;
    drop(portal);

    // Another CA than the one that signed the directory's certificate: nobody signs in,
    // the person reads that the directory cannot be reached, the log says why.
    let other = LdapServer::start(&[], &[]);
    let portal = portal_for(&ldap, secrets.path(), None, &[("SLICEHUB_LDAP_CA_FILE", other.ca_pem_path().to_str().unwrap())]).await;
    let (status, words, cookie) = log_in(&portal, "alice", "alice-dir-pass-1").await;
    assert!(cookie.is_none(), "signed in over TLS to an unknown certificate");
    assert_eq!(status, 401);
    assert!(words.contains("The campus directory cannot be reached"), "{words}");
    let log = portal.log();
    assert!(log.to_lowercase().contains("certificate"), "the log names the certificate: {log}");
    assert!(!words.to_lowercase().contains("certificate"), "the detail stays in the log: {words}");
}

/// A directory that does not answer: the portal starts and says so, local accounts sign
/// in, directory names get plain words, and `slicehub check` reports it either way.
#[tokio::test]
async fn an_unreachable_directory_leaves_local_sign_in_working_and_check_reports_it() {
    let ldap = LdapServer::start(&people(), GROUPS);
    let secrets = tempfile::tempdir().unwrap();
    let portal = portal_for(&ldap, secrets.path(), None, &[]).await;
    let out = portal.cli(&["check"], "");
    assert!(out.contains("[ok  ] ldap:") && out.contains("reachable"), "{out}");
    let json: Value = serde_json::from_str(&portal.cli(&["check", "--json"], "")).unwrap();
    assert_eq!(json["ldap"]["ok"], true, "{json}");
    drop(portal);

    let dead = format!("ldap://127.0.0.1:{}", slicehub_end2end::free_port());
    let portal = portal_for(&ldap, secrets.path(), Some(&dead), &[]).await;
    wait_for_log(&portal, "the directory cannot be used right now").await;
    signed_in(&portal, "admin", ADMIN_PASSWORD).await;
    let (status, words, cookie) = log_in(&portal, "alice", "alice-dir-pass-1").await;
    assert_eq!((status, cookie.is_some()), (401, false));
    assert!(words.contains("The campus directory cannot be reached; try again in a minute."), "{words}");
    assert!(!words.contains("127.0.0.1"), "no detail for the person: {words}");
    // Not held against the person: five more tries do not lock the name.
    for _ in 0..5 {
        log_in(&portal, "alice", "alice-dir-pass-1").await;
    }
    let (status, words, _) = log_in(&portal, "alice", "alice-dir-pass-1").await;
    assert_eq!(status, 401, "{words}");
    // A local account's wrong passwords are counted all the same: a directory that is down
    // (or made to time out) does not lift the throttle on guessing the administrator's.
    for _ in 0..5 {
        let (status, words, cookie) = log_in(&portal, "admin", "guessed-admin-pass").await;
        assert_eq!((status, cookie.is_some()), (401, false), "{words}");
    }
    let failures = audited(&portal, None, "login.failure").await;
    assert_eq!(
        failures.iter().take(5).filter(|(who, detail)| who == "admin" && detail == "127.0.0.1").count(),
        5,
        "each wrong guess is audited: {failures:?}"
    );
    let (status, words, cookie) = log_in(&portal, "admin", "guessed-admin-pass").await;
    assert_eq!((status, cookie.is_some()), (429, false), "the sixth guess waits: {words}");
    let (status, words, cookie) = log_in(&portal, "admin", ADMIN_PASSWORD).await;
    assert_eq!((status, cookie.is_some()), (429, false), "even the right password waits now: {words}");
    assert!(words.contains("Too many failed attempts"), "{words}");
    let out = slicehub_end2end::cli::run(BIN, portal.dir.path(), &["check"], &env_refs(&ldap_env(&ldap, secrets.path(), Some(&dead))));
    let text = slicehub_end2end::cli::text(&out);
    assert_eq!(out.status.code(), Some(0), "an unreachable directory is reported, not a failure: {text}");
    assert!(text.contains("[DOWN] ldap:") && text.contains("unreachable"), "{text}");
}

/// A local account named like a directory person stays the local person's: the directory
/// person is told the name is taken, the local password still works, and the directory's
/// password for that name is no way into it.
#[tokio::test]
async fn a_local_account_named_like_a_directory_person_is_not_taken_over() {
    let ldap = LdapServer::start(&people(), GROUPS);
    let secrets = tempfile::tempdir().unwrap();
    let portal = portal_for(&ldap, secrets.path(), None, &[]).await;
    portal.cli(&["user", "add", "alice", "--name", "Alice Local", "--password-stdin"], "local-alice-pass-1\n");

    let (status, words, cookie) = log_in(&portal, "alice", "alice-dir-pass-1").await;
    assert!(cookie.is_none(), "the directory's Alice got into the local account");
    assert_eq!(status, 403, "{words}");
    assert!(words.contains("already exists"), "{words}");
    let failures = audited(&portal, None, "login.failure").await;
    assert!(
        failures.first().is_some_and(|(who, detail)| who == "alice" && detail.starts_with("ldap:") && detail.contains("already exists")),
        "{failures:?}"
    );

    let cookie = signed_in(&portal, "alice", "local-alice-pass-1").await;
    assert_eq!(me(&portal, &cookie).await["display_name"], "Alice Local");
    let rows = admin_user_rows(&portal).await;
    let row = rows.iter().find(|u| u["username"] == "alice").unwrap();
    assert_eq!(row["sources"], serde_json::json!(["Password"]), "nothing was attached: {row}");
    assert_eq!(user_list(&portal).len(), 2, "admin and the local alice, no third account");

    // The refusals do not clear the local account's failed attempts: four wrong local
    // passwords, a directory sign-in, one more wrong one, and the account waits.
    for _ in 0..4 {
        assert_eq!(log_in(&portal, "alice", "wrong-local-1").await.0, 401);
    }
    assert_eq!(log_in(&portal, "alice", "alice-dir-pass-1").await.0, 403);
    assert_eq!(log_in(&portal, "alice", "wrong-local-1").await.0, 401);
    assert_eq!(log_in(&portal, "alice", "local-alice-pass-1").await.0, 429);
}

/// Until the portal's log says `text` (the start-up probe runs beside the start).
async fn wait_for_log(portal: &Portal, text: &str) {
    let started = Instant::now();
    while !portal.log().contains(text) {
        assert!(started.elapsed() < Duration::from_secs(20), "the log never said {text:?}:\n{}", portal.log());
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn env_refs(env: &[(String, String)]) -> Vec<(&str, &str)> {
    env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect()
}

/// `slicehub serve` with these settings, which must stop on its own within 30 s: its
/// exit code and output.
fn serve_until_exit(env: &[(String, String)]) -> (Option<i32>, String) {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("serve.log");
    let file = std::fs::File::create(&log).unwrap();
    let mut child = Command::new(BIN)
        .arg("serve")
        .current_dir(dir.path())
        .env("SLICEHUB_DATA_DIR", dir.path().join("data"))
        .env("SLICEHUB_SERVER_BIND", format!("127.0.0.1:{}", slicehub_end2end::free_port()))
        .env_remove("SLICEHUB_CONFIG")
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(file.try_clone().unwrap())
        .stderr(file)
        .spawn()
        .expect("slicehub serve starts");
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return (status.code(), std::fs::read_to_string(&log).unwrap_or_default());
        }
        if started.elapsed() > Duration::from_secs(30) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("serve kept running: {}", std::fs::read_to_string(&log).unwrap_or_default());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}
