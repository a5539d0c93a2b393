//! Trusted-header sign-in (`[header_sign_in]`, REMOTE_USER style): the web server in front
//! names the person in a header, and the portal believes it only when the TCP peer is in
//! `server.trusted_proxies`. Every request of these tests comes from 127.0.0.1, so the
//! portal that trusts 127.0.0.1 plays the one behind Apache, and the portals that trust
//! nobody or only 10.0.0.0/8 are reached "directly".

use slicehub_end2end::form::{client, post, sign_in};
use slicehub_end2end::Portal;

const BIN: &str = env!("CARGO_BIN_EXE_slicehub");
const ADMIN_PASSWORD: &str = "header-admin-1";
const USER: &str = "x-remote-user";
const GROUPS: &str = "x-remote-groups";

async fn portal(trusted: &str) -> Portal {
    Portal::start(
        BIN.as_ref(),
        &[
            ("SLICEHUB_ADMIN_PASSWORD", ADMIN_PASSWORD),
            ("SLICEHUB_SERVER_TRUSTED_PROXIES", trusted),
            ("SLICEHUB_HEADER_SIGN_IN_USER_HEADER", "X-Remote-User"),
            ("SLICEHUB_HEADER_SIGN_IN_NAME_HEADER", "X-Remote-Name"),
            ("SLICEHUB_HEADER_SIGN_IN_EMAIL_HEADER", "X-Remote-Email"),
            ("SLICEHUB_HEADER_SIGN_IN_GROUPS_HEADER", "X-Remote-Groups"),
            ("SLICEHUB_HEADER_SIGN_IN_GROUPS_SEPARATOR", ";"),
            ("SLICEHUB_HEADER_SIGN_IN_ADMIN_GROUPS", "gpu-admins"),
            ("SLICEHUB_HEADER_SIGN_IN_COURSE_GROUPS", "CS-101: cs101-staff=instructor, cs101-students=student"),
        ],
    )
    .await
}

/// GET `path` with these headers; the status, the `Location` and the body.
async fn get(portal: &Portal, path: &str, headers: &[(&str, &[u8])]) -> (u16, String, String) {
    let mut request = client().get(format!("{}{path}", portal.url));
    for (name, value) in headers {
        request = request.header(*name, reqwest::header::HeaderValue::from_bytes(value).unwrap());
    }
    let resp = request.send().await.expect("the portal answers");
    let status = resp.status().as_u16();
    let location = resp
        .headers()
        .get("location")
        .and_then(|l| l.to_str().ok())
        .unwrap_or_default()
        .to_string();
    // A page that never finishes its body must not hang the test.
    let body = tokio::time::timeout(std::time::Duration::from_secs(30), resp.text()).await;
    (status, location, body.ok().and_then(Result::ok).unwrap_or_else(|| "(no body)".to_string()))
}

/// POSTs to server function `function` from the portal's own origin with these headers.
async fn call(portal: &Portal, function: &str, body: &str, headers: &[(&str, &[u8])]) -> (u16, String) {
    let mut request = client()
        .post(format!("{}/api/{function}", portal.url))
        .header("content-type", "application/x-www-form-urlencoded")
        .header("origin", &portal.url)
        .body(body.to_string());
    for (name, value) in headers {
        request = request.header(*name, reqwest::header::HeaderValue::from_bytes(value).unwrap());
    }
    let resp = request.send().await.expect("the portal answers");
    (resp.status().as_u16(), resp.text().await.unwrap_or_default())
}

/// Every account as the administrator (signed in with the password form) sees them.
async fn users(portal: &Portal) -> Vec<serde_json::Value> {
    let admin = sign_in(&client(), &portal.url, "admin", ADMIN_PASSWORD).await.expect("the administrator signs in");
    let resp = post(&client(), &portal.url, Some(&admin), "list_users", String::new()).await;
    assert_eq!(resp.status(), 200);
    serde_json::from_str(&resp.text().await.unwrap()).expect("the users as JSON")
}

fn find<'a>(users: &'a [serde_json::Value], name: &str) -> Option<&'a serde_json::Value> {
    users.iter().find(|u| u["username"] == name)
}

#[tokio::test]
async fn a_trusted_proxy_signs_people_in_by_header_and_their_groups_give_roles() {
    let portal = portal("127.0.0.1").await;
    portal.cli(&["course", "add", "CS-101", "Deep Learning"], "");
    let ann: &[(&str, &[u8])] = &[
        (USER, b"ann.lee@campus.edu"),
        ("x-remote-name", b"Ann Lee"),
        ("x-remote-email", b"ann.lee@campus.edu"),
        (GROUPS, b" cs101-students ; library "),
    ];

    // The first request makes her account; she is signed in without any cookie.
    let (status, location, _) = get(&portal, "/courses", ann).await;
    assert_eq!(status, 200, "signed in by the header, not sent to {location}");
    let (status, body) = call(&portal, "current_user", "", ann).await;
    assert_eq!(status, 200);
    assert!(body.contains("ann.lee") && body.contains("Ann Lee"), "{body}");
    let (status, set_cookie) = {
        let resp = client().get(format!("{}/sessions", portal.url)).header(USER, "ann.lee@campus.edu").send().await.unwrap();
        let sessions = resp.headers().get_all("set-cookie").iter().filter(|c| c.to_str().unwrap_or("").contains("session")).count();
        (resp.status().as_u16(), sessions)
    };
    assert_eq!((status, set_cookie), (200, 0), "no login session is opened for a header sign-in");

    let all = users(&portal).await;
    let row = find(&all, "ann.lee").unwrap_or_else(|| panic!("the account was made: {all:?}"));
    assert_eq!(row["display_name"], "Ann Lee");
    assert_eq!(row["email"], "ann.lee@campus.edu");
    assert_eq!(row["is_admin"], false);
    let sources = row["sources"].to_string();
    assert!(!sources.contains("Password") && sources.contains("Web server"), "{sources}");
    for password in ["", "ann.lee@campus.edu", "anything-at-all-1"] {
        assert_eq!(
            sign_in(&client(), &portal.url, "ann.lee", password).await,
            None,
            "the password form signs nobody in as a header account ({password:?})"
        );
    }

    // Her groups make her a student of CS-101 (the course exists); a changed groups
    // header takes the course away on the very next request.
    let (status, body) = call(&portal, "open_course", "code=CS-101", ann).await;
    assert_eq!(status, 200, "{body}");
    let left: &[(&str, &[u8])] = &[(USER, b"ann.lee@campus.edu"), (GROUPS, b"library")];
    let (status, _) = call(&portal, "open_course", "code=CS-101", left).await;
    assert_eq!(status, 404, "out of the group, out of the course");
    let (status, _) = call(&portal, "list_users", "", ann).await;
    assert_eq!(status, 403, "not an administrator");

    // The admin group makes her one, and leaving it takes it back.
    let admin_group: &[(&str, &[u8])] = &[(USER, b"ann.lee@campus.edu"), (GROUPS, b"gpu-admins")];
    let (status, body) = call(&portal, "list_users", "", admin_group).await;
    assert_eq!(status, 200, "{body}");
    let (status, _) = call(&portal, "list_users", "", left).await;
    assert_eq!(status, 403, "out of the admin group, no longer an administrator");

    // The header wins over a session cookie of someone else.
    let admin = sign_in(&client(), &portal.url, "admin", ADMIN_PASSWORD).await.unwrap();
    let with_cookie: &[(&str, &[u8])] = &[(USER, b"ann.lee@campus.edu"), ("cookie", admin.as_bytes())];
    let (status, _) = call(&portal, "list_users", "", with_cookie).await;
    assert_eq!(status, 403, "ann, not the administrator whose cookie came along");

    // A header naming the first administrator does not sign in as that account: the
    // name is taken by a local account, and the request is refused in plain words.
    let count = users(&portal).await.len();
    for path in ["/", "/admin/users"] {
        let (status, _, body) = get(&portal, path, &[(USER, b"admin"), (GROUPS, b"cs101-staff")]).await;
        assert_eq!(status, 403, "{path}: {body}");
        assert!(body.contains("already exists"), "{body}");
        assert!(!body.contains('<'), "plain words, not a page: {body}");
    }
    let (status, body) = call(&portal, "list_users", "", &[(USER, b"Admin@campus.edu")]).await;
    assert_eq!(status, 403, "{body}");
    assert!(!body.contains("\"username\""), "no user list: {body}");
    let all = users(&portal).await;
    assert_eq!(all.len(), count, "no account was made: {all:?}");
    assert_eq!(find(&all, "admin").unwrap()["sources"].to_string(), "[\"Password\"]", "nothing attached to admin");

    // A header that is too long, not UTF-8 or with a control character: a plain 400,
    // never a 500, and no account.
    let long = "a".repeat(300);
    for (bad, what) in [(long.as_bytes(), "long"), (b"ann\tbo".as_slice(), "a tab"), (b"bo\xff".as_slice(), "not UTF-8")] {
        let (status, _, body) = get(&portal, "/courses", &[(USER, bad)]).await;
        assert_eq!(status, 400, "{what}: {body}");
        assert!(body.contains("x-remote-user") && !body.contains('<'), "{what}: {body}");
        let (status, body) = call(&portal, "current_user", "", &[(USER, bad)]).await;
        assert_eq!(status, 400, "{what}: {body}");
    }
    let (status, _, body) = get(&portal, "/", &[(USER, b"ann.lee@campus.edu"), (GROUPS, "g;".repeat(9000).as_bytes())]).await;
    assert_eq!(status, 400, "an endless groups header: {body}");
    assert_eq!(users(&portal).await.len(), count, "no account from a refused header");
}

/// The same headers from a peer that is not a trusted proxy sign nobody in, make no
/// account and are not even checked: the request is anonymous (or its cookie's).
#[tokio::test]
async fn the_trusted_header_is_ignored_from_an_untrusted_peer() {
    for trusted in ["", "10.0.0.0/8"] {
        let portal = portal(trusted).await;
        let eve: &[(&str, &[u8])] = &[(USER, b"eve"), (GROUPS, b"gpu-admins;cs101-staff")];
        let forwarded: &[(&str, &[u8])] =
            &[(USER, b"eve"), (GROUPS, b"gpu-admins"), ("x-forwarded-for", b"10.0.0.5"), ("x-real-ip", b"10.0.0.5")];
        let as_admin: &[(&str, &[u8])] = &[(USER, b"admin"), (GROUPS, b"gpu-admins")];
        for headers in [eve, forwarded, as_admin] {
            let (status, location, _) = get(&portal, "/account", headers).await;
            assert_eq!(status, 303, "trusted {trusted:?}: a protected page sends to sign in");
            assert!(location.starts_with("/login"), "{location}");
            let (status, body) = call(&portal, "list_users", "", headers).await;
            assert_eq!(status, 401, "trusted {trusted:?}: {body}");
            let (status, body) = call(&portal, "current_user", "", headers).await;
            assert_eq!(status, 200);
            assert_eq!(body.trim(), "null", "trusted {trusted:?}: anonymous");
        }
        // Not even looked at: a malformed header is no refusal here.
        let (status, _, _) = get(&portal, "/", &[(USER, "a".repeat(300).as_bytes())]).await;
        assert_eq!(status, 200);
        // With a cookie, the cookie's person and no one else.
        let admin = sign_in(&client(), &portal.url, "admin", ADMIN_PASSWORD).await.unwrap();
        let (status, body) = call(&portal, "current_user", "", &[(USER, b"eve"), ("cookie", admin.as_bytes())]).await;
        assert_eq!(status, 200);
        assert!(body.contains("\"admin\"") && !body.contains("eve"), "{body}");

        let all = users(&portal).await;
        assert!(find(&all, "eve").is_none(), "trusted {trusted:?}: no account from the header: {all:?}");
        assert_eq!(all.len(), 1, "{all:?}");
    }
}
