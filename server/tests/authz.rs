//! The authorization matrix: every page and every server function, asked by each kind of
//! caller, answers exactly as the table says. The table must name every route the binary
//! serves (`slicehub routes`), so a new route nobody decided access for fails here.

use std::collections::BTreeSet;

use slicehub_end2end::form::{base64, client, post, sign_in, urlencode};
use slicehub_end2end::Portal;

const BIN: &str = env!("CARGO_BIN_EXE_slicehub");
const ADMIN_PASSWORD: &str = "admin-password-1";

/// anonymous, student of A, student of B, instructor of A, admin
const CALLERS: [&str; 5] = [
    "anonymous",
    "student-a",
    "student-b",
    "instructor-a",
    "admin",
];

/// GET pages: expected status per caller (303 = sent to sign in).
const PAGES: &[(&str, [u16; 5])] = &[
    ("/", [200, 200, 200, 200, 200]),
    ("/login", [200, 200, 200, 200, 200]),
    ("/account", [303, 200, 200, 200, 200]),
    ("/courses", [303, 200, 200, 200, 200]),
    ("/courses/{code}", [303, 200, 403, 200, 200]),
    ("/sessions", [303, 200, 200, 200, 200]),
    ("/admin/users", [303, 403, 403, 403, 200]),
    ("/gpus", [303, 403, 403, 403, 200]),
    ("/status", [303, 403, 403, 403, 200]),
];

/// Other GET endpoints: expected status per caller.
const ENDPOINTS: &[(&str, [u16; 5])] = &[
    ("/healthz", [200, 200, 200, 200, 200]),
    ("/api/sessions/events", [401, 200, 200, 200, 200]),
    // No such session: nobody learns more than 404.
    ("/user/{*rest}", [404, 404, 404, 404, 404]),
];

/// Server functions: the form body (`{n}` is replaced by a number unique to the call)
/// and the expected status per caller.
const FUNCTIONS: &[(&str, &str, [u16; 5])] = &[
    ("check_instance", "", [200, 200, 200, 200, 200]),
    ("current_user", "", [200, 200, 200, 200, 200]),
    (
        "login",
        "username=nobody{n}&password=wrong-password",
        [401, 401, 401, 401, 401],
    ),
    (
        "change_password",
        "current=x&new_password=aaaaaaaaaaaa&confirm=bbbbbbbbbbbb",
        [401, 400, 400, 400, 400],
    ),
    ("list_courses", "", [401, 200, 200, 200, 200]),
    ("open_course", "code=CS-101", [401, 200, 403, 200, 200]),
    (
        "check_roster",
        "code=CS-101&csv_base64={roster}",
        [401, 403, 403, 200, 200],
    ),
    (
        "import_roster",
        "code=CS-101&csv_base64={roster}",
        [401, 403, 403, 200, 200],
    ),
    (
        "drop_student",
        "code=CS-101&username=bob",
        [401, 403, 403, 404, 404],
    ),
    (
        "make_instructor",
        "code=CS-101&username=ivy",
        [401, 403, 403, 403, 200],
    ),
    (
        "add_course",
        "code=NEW-{n}&title=New",
        [401, 403, 403, 403, 200],
    ),
    ("list_users", "", [401, 403, 403, 403, 200]),
    (
        "add_account",
        "username=new{n}&display_name=New&email=",
        [401, 403, 403, 403, 200],
    ),
    (
        "reset_account_password",
        "user_id={spare}",
        [401, 403, 403, 403, 200],
    ),
    (
        "set_account_disabled",
        "user_id={spare}&disabled=false",
        [401, 403, 403, 403, 200],
    ),
    ("read_gpus", "", [401, 403, 403, 403, 200]),
    ("launch_options", "", [401, 200, 200, 200, 200]),
    ("my_sessions", "", [401, 200, 200, 200, 200]),
    // CS-101 is course 1. Past the guard the claim itself is refused: the image is not
    // allowed (400). Who owns which session is tested in sessions_http.rs.
    (
        "start_session",
        "course_id=1&profile=1g.10gb&image=not/allowed:1",
        [401, 400, 403, 400, 400],
    ),
    ("stop_session", "id=s-nosuchsession", [401, 404, 404, 404, 404]),
    ("session_logs", "id=s-nosuchsession", [401, 404, 404, 404, 404]),
    // Last: it ends the caller's session.
    ("logout", "", [200, 200, 200, 200, 200]),
];

async fn signed_in(portal: &Portal, user: &str, password: &str) -> String {
    sign_in(&client(), &portal.url, user, password)
        .await
        .unwrap_or_else(|| panic!("{user} could not sign in"))
}

#[tokio::test]
async fn every_route_answers_each_caller_exactly_as_the_table_says() {
    let portal = Portal::start(BIN.as_ref(), &[("SLICEHUB_ADMIN_PASSWORD", ADMIN_PASSWORD)]).await;

    // The table covers exactly what the binary serves.
    let routes: serde_json::Value = serde_json::from_str(&portal.cli(&["routes"], "")).unwrap();
    let served: BTreeSet<String> = routes["pages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap().to_string())
        .collect();
    let decided: BTreeSet<String> = PAGES.iter().map(|(p, _)| p.to_string()).collect();
    assert_eq!(
        served, decided,
        "pages served vs pages in the authorization table"
    );
    let served: BTreeSet<String> = routes["server_functions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap().to_string())
        .collect();
    let decided: BTreeSet<String> = FUNCTIONS
        .iter()
        .map(|(f, ..)| format!("POST /api/{f}"))
        .collect();
    assert_eq!(
        served, decided,
        "server functions served vs those in the authorization table"
    );

    let served: BTreeSet<String> = routes["endpoints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap().to_string())
        .collect();
    let decided: BTreeSet<String> = ENDPOINTS.iter().map(|(p, _)| p.to_string()).collect();
    assert_eq!(served, decided, "endpoints served vs endpoints in the table");

    // Two courses; alice studies A, bob studies B, ivy teaches A.
    for (user, name) in [
        ("alice", "Alice"),
        ("bob", "Bob"),
        ("ivy", "Ivy"),
        ("spare", "Spare"),
    ] {
        portal.cli(
            &["user", "add", user, "--name", name, "--password-stdin"],
            &format!("{user}-password-1\n"),
        );
    }
    portal.cli(&["course", "add", "CS-101", "Deep Learning"], "");
    portal.cli(&["course", "add", "MA-201", "Linear Algebra"], "");
    portal.cli(&["course", "instructor", "CS-101", "ivy"], "");
    let admin = signed_in(&portal, "admin", ADMIN_PASSWORD).await;
    for (course, student) in [("CS-101", "alice"), ("MA-201", "bob")] {
        let csv = format!("username,display name,email\n{student},{student},\n");
        let body = format!(
            "code={course}&csv_base64={}",
            urlencode(&base64(csv.as_bytes()))
        );
        let resp = post(&client(), &portal.url, Some(&admin), "import_roster", body).await;
        assert_eq!(resp.status(), 200, "{}", resp.text().await.unwrap());
    }
    let users: serde_json::Value =
        serde_json::from_str(&portal.cli(&["user", "list", "--json"], "")).unwrap();
    assert!(users
        .as_array()
        .unwrap()
        .iter()
        .any(|u| u["username"] == "spare"));
    let spare_id = {
        let resp = post(
            &client(),
            &portal.url,
            Some(&admin),
            "list_users",
            String::new(),
        )
        .await;
        let list: serde_json::Value = resp.json().await.unwrap();
        list.as_array()
            .unwrap()
            .iter()
            .find(|u| u["username"] == "spare")
            .unwrap()["id"]
            .to_string()
    };
    let roster = urlencode(&base64(b"username,display name,email\nalice,alice,\n"));

    let cookies: Vec<Option<String>> = vec![
        None,
        Some(signed_in(&portal, "alice", "alice-password-1").await),
        Some(signed_in(&portal, "bob", "bob-password-1").await),
        Some(signed_in(&portal, "ivy", "ivy-password-1").await),
        Some(signed_in(&portal, "admin", ADMIN_PASSWORD).await),
    ];

    let mut mismatches = Vec::new();
    for (page, expected) in PAGES.iter().chain(ENDPOINTS) {
        let path = page.replace("{code}", "CS-101");
        for (i, cookie) in cookies.iter().enumerate() {
            let mut request = client().get(format!("{}{path}", portal.url));
            if let Some(cookie) = cookie {
                request = request.header("cookie", cookie);
            }
            let status = request.send().await.unwrap().status().as_u16();
            if status != expected[i] {
                mismatches.push(format!(
                    "GET {path} as {}: {status}, expected {}",
                    CALLERS[i], expected[i]
                ));
            }
        }
    }
    let mut n = 0;
    for (function, body, expected) in FUNCTIONS {
        for (i, cookie) in cookies.iter().enumerate() {
            n += 1;
            let body = body
                .replace("{n}", &n.to_string())
                .replace("{roster}", &roster)
                .replace("{spare}", &spare_id);
            let resp = post(&client(), &portal.url, cookie.as_deref(), function, body).await;
            let status = resp.status().as_u16();
            if status != expected[i] {
                let text = resp.text().await.unwrap_or_default();
                mismatches.push(format!(
                    "POST /api/{function} as {}: {status}, expected {} ({text})",
                    CALLERS[i], expected[i]
                ));
            }
        }
    }
    assert!(
        mismatches.is_empty(),
        "authorization mismatches:\n{}",
        mismatches.join("\n")
    );
}
