//! Which pages need what. Every page path is decided here with the one guard
//! (`slicehub_core::auth::authorize`); server functions ask the same guard themselves, and
//! so do the plain handlers (the CSV downloads) this guard also covers.
//!
//! The path is decided as the router and the handlers read it: split at `/`, each segment
//! percent-decoded once (axum's `Path` decodes `%43S-101` to `CS-101`), the fixed words
//! in any case, and empty segments (`//`, a trailing `/`) left out. A path with a `.` or
//! `..` segment, written plainly or percent-encoded, is answered 404: browsers resolve
//! those before they send a request, and the router would not.

use axum::http::{header, StatusCode, Uri};
use axum::response::{Html, IntoResponse, Response};
use slicehub_app::api::ssr::{Action, Caller};
use slicehub_core::auth::{authorize, Denied};
use slicehub_core::Services;
use slicehub_core::CourseId;

/// What a page path requires.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PageRule {
    /// Anyone, including anonymous visitors (and paths that are not pages).
    Public,
    Needs(Action),
    /// The course page: `ViewCourse` of the course with this code.
    Course(String),
    /// The course's policy and bookings pages: `SetCoursePolicy` of the course with this code.
    CoursePolicy(String),
    /// The class dashboard and its usage CSV: `WatchClass` of the course with this code.
    CourseClass(String),
    /// A path with a dot segment: no page, answered 404 whoever asks.
    NotCanonical,
}

/// The path's segments as the router sees them, each percent-decoded once (bytes that
/// are not UTF-8 become U+FFFD), empty ones left out.
fn segments(path: &str) -> Vec<String> {
    path.split('/').filter(|s| !s.is_empty()).map(percent_decoded).collect()
}

fn percent_decoded(segment: &str) -> String {
    let bytes = segment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (bytes[i], bytes.get(i + 1).copied().and_then(hex), bytes.get(i + 2).copied().and_then(hex)) {
            (b'%', Some(high), Some(low)) => {
                out.push((high * 16 + low) as u8);
                i += 3;
            }
            (byte, ..) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

pub fn rule(path: &str) -> PageRule {
    let segments = segments(path);
    if segments.iter().any(|s| s == "." || s == "..") {
        return PageRule::NotCanonical;
    }
    let words: Vec<String> = segments.iter().map(|s| s.to_lowercase()).collect();
    let words: Vec<&str> = words.iter().map(String::as_str).collect();
    let code = || segments[1].clone();
    match words.as_slice() {
        [] | ["login"] => PageRule::Public,
        ["account"] => PageRule::Needs(Action::ViewOwnAccount),
        ["courses"] => PageRule::Needs(Action::ListOwnCourses),
        ["sessions"] => PageRule::Needs(Action::ListOwnSessions),
        ["gpus"] => PageRule::Needs(Action::ViewGpus),
        ["status"] => PageRule::Needs(Action::ViewStatus),
        ["admin", "users"] => PageRule::Needs(Action::ListUsers),
        ["reports"] | ["reports", "usage.csv"] => PageRule::Needs(Action::ViewReports),
        ["admin", "audit"] | ["admin", "audit.csv"] => PageRule::Needs(Action::ReadAuditLog),
        ["admin", "sessions"] => PageRule::Needs(Action::ListAllSessions),
        ["admin", "lms"] => PageRule::Needs(Action::ManageSignIn),
        ["courses", _] => PageRule::Course(code()),
        ["courses", _, "policy" | "bookings"] => PageRule::CoursePolicy(code()),
        ["courses", _, "class" | "usage.csv"] => PageRule::CourseClass(code()),
        // Nothing deeper is served today; whatever is, is the course's.
        ["courses", _, ..] => PageRule::Course(code()),
        _ => PageRule::Public,
    }
}

/// `None` lets the request through; otherwise the answer to send instead.
pub async fn check(services: &Services, uri: &Uri, caller: &Caller) -> Option<Response> {
    let (code, action_on): (String, fn(CourseId) -> Action) = match rule(uri.path()) {
        PageRule::Public => return None,
        PageRule::NotCanonical => return Some(not_found()),
        PageRule::Needs(action) => return answer(caller, &action, uri),
        PageRule::Course(code) => (code, Action::ViewCourse),
        PageRule::CoursePolicy(code) => (code, Action::SetCoursePolicy),
        PageRule::CourseClass(code) => (code, Action::WatchClass),
    };
    let action = match services.store.course_by_code(&code).await {
        Ok(Some(course)) => action_on(course.id),
        // Unknown course: others sign in first (or change their password); signed-in
        // users get the same 404 as a course they do not belong to, so neither answer
        // tells which course codes exist.
        Ok(None) => {
            return answer(caller, &Action::ListOwnCourses, uri).or_else(|| Some(no_such_course(caller)));
        }
        Err(e) => {
            tracing::warn!(error = %e, "course lookup failed");
            return Some(
                (
                    StatusCode::SERVICE_UNAVAILABLE,
                    "The database is unavailable.",
                )
                    .into_response(),
            );
        }
    };
    answer(caller, &action, uri)
}

/// The guard's answer for `caller` asking `action` at `uri`: `None` when allowed, else
/// the sign-in redirect, the password page, the 403 page, or, for a course page of a
/// course the caller does not belong to, the same 404 as for a course that does not
/// exist. Handlers that authorize on their own decoded values answer with it too, so a
/// refusal looks the same either way.
pub fn answer(caller: &Caller, action: &Action, uri: &Uri) -> Option<Response> {
    match authorize(caller, action) {
        Ok(()) => None,
        Err(Denied::NotLoggedIn) => Some(see_other(&slicehub_app::api::auth::login_path_for(
            uri.path_and_query().map(|pq| pq.as_str()).unwrap_or("/"),
        ))),
        Err(Denied::MustChangePassword) => Some(see_other("/account")),
        Err(Denied::Forbidden) => match course_page_of(action) {
            Some(course) if !member_of(caller, course) => Some(no_such_course(caller)),
            // A member without the role (a student at the class dashboard), or a page
            // that exists for everyone (the administration): 403.
            _ => Some(forbidden(caller)),
        },
    }
}

/// The course whose page `action` guards, for the actions the course pages need.
fn course_page_of(action: &Action) -> Option<CourseId> {
    match *action {
        Action::ViewCourse(course) | Action::SetCoursePolicy(course) | Action::WatchClass(course) => Some(course),
        _ => None,
    }
}

fn member_of(caller: &Caller, course: CourseId) -> bool {
    match caller {
        Caller::User { memberships, .. } => memberships.iter().any(|(c, _)| *c == course),
        Caller::Anonymous => false,
    }
}

fn not_found() -> Response {
    (StatusCode::NOT_FOUND, "There is no page here.").into_response()
}

fn see_other(location: &str) -> Response {
    (
        StatusCode::SEE_OTHER,
        [(header::LOCATION, location.to_string())],
    )
        .into_response()
}

/// The 403 page: a page that exists, but for another role.
fn forbidden(caller: &Caller) -> Response {
    let page = refusal_page(
        caller,
        "Not allowed",
        "403",
        "This page is not open to you.",
        "It belongs to another role or course. If you think you should see it, ask your instructor or administrator.",
        ("/", "Back to the overview"),
    );
    (StatusCode::FORBIDDEN, Html(page)).into_response()
}

/// The 404 page for a course page whose course does not exist or is not the caller's:
/// the same for both, and without the code asked for, so that it is the same whatever
/// the code.
fn no_such_course(caller: &Caller) -> Response {
    let page = refusal_page(
        caller,
        "No such course",
        "404",
        "There is no such course.",
        "None of your courses has this address. Check the address, or pick one of your courses.",
        ("/courses", "See your courses"),
    );
    (StatusCode::NOT_FOUND, Html(page)).into_response()
}

/// A refusal page with the caller's navigation and the footer like every other page. It
/// is served before the app runs, so its menu is laid out without the menu button.
fn refusal_page(
    caller: &Caller,
    title: &str,
    eyebrow: &str,
    heading: &str,
    why: &str,
    (back_href, back_label): (&str, &str),
) -> String {
    let (username, admin) = match caller {
        Caller::User {
            username, is_admin, ..
        } => (escape(username), *is_admin),
        Caller::Anonymous => (String::new(), false),
    };
    let reports = authorize(caller, &Action::ViewReports).is_ok();
    let admin_links = match (admin, reports) {
        (true, _) => r#"<a href="/reports">Reports</a><a href="/admin/sessions">All sessions</a><a href="/gpus">GPUs</a><a href="/admin/users">Users</a><a href="/admin/audit">Audit</a><a href="/status">Status</a>"#,
        (false, true) => r#"<a href="/reports">Reports</a>"#,
        (false, false) => "",
    };
    format!(
        r##"<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title} · SliceHub</title><link rel="stylesheet" href="/pkg/slicehub.css"></head>
<body><div class="app" data-hydrated="false"><a class="skip-link" href="#main">Skip to the page</a>
<header class="topbar"><div class="topbar-inner"><a class="brand" href="/">
<span class="brand-mark" aria-hidden="true"><i></i><i></i><i></i><i></i></span>SliceHub</a>
<div class="topbar-menu"><nav class="nav" aria-label="Main"><a href="/">Overview</a><a href="/sessions">Sessions</a>
<a href="/courses">Courses</a>{admin_links}</nav>
<div class="who"><a class="who-name" href="/account">{username}</a>
<form class="inline-form" method="post" action="/api/logout"><button class="btn btn-ghost btn-small" type="submit">Sign out</button></form></div>
</div></div></header>
<main class="page" id="main"><section class="card notfound"><p class="eyebrow">{eyebrow}</p>
<h1>{heading}</h1>
<p class="muted">{why}</p>
<a class="btn btn-primary" href="{back_href}">{back_label}</a></section></main>
<footer class="footer">SliceHub — MIG-aware GPU sharing for classrooms. <a href="/healthz">Health (JSON)</a></footer>
</div></body></html>"##
    )
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn course_paths_are_decided_on_the_decoded_code_whatever_the_spelling() {
        let class = PageRule::CourseClass("CS-101".into());
        for path in [
            "/courses/CS-101/usage.csv",
            "/courses/%43S-101/usage.csv",
            "/courses/CS%2D101/usage.csv",
            "/courses/%43%53%2d%31%30%31/usage.csv",
            "/courses/CS-101/usage.csv/",
            "//courses//CS-101//usage.csv",
            "/COURSES/CS-101/USAGE.CSV",
            "/courses/CS-101/Class",
        ] {
            assert_eq!(rule(path), class, "{path}");
        }
        // Decoded once, as axum's Path does: the handler then looks up `%43S-101`.
        assert_eq!(rule("/courses/%2543S-101/usage.csv"), PageRule::CourseClass("%43S-101".into()));
        assert_eq!(rule("/courses/cs-101/policy"), PageRule::CoursePolicy("cs-101".into()));
        assert_eq!(rule("/courses/CS-101/other/page"), PageRule::Course("CS-101".into()));
        assert_eq!(rule("/admin/audit.csv/"), PageRule::Needs(Action::ReadAuditLog));
        assert_eq!(rule("/%61dmin/users"), PageRule::Needs(Action::ListUsers));
        assert_eq!(rule("/"), PageRule::Public);
        assert_eq!(rule("/user/alice/s-1/lab"), PageRule::Public);
    }

    fn user(memberships: Vec<(CourseId, slicehub_core::store::Role)>, is_admin: bool) -> Caller {
        Caller::User {
            id: slicehub_core::UserId(7),
            username: "bob".into(),
            is_admin,
            must_change_password: false,
            memberships,
        }
    }

    async fn status_and_body(response: Response) -> (StatusCode, String) {
        let status = response.status();
        let bytes = axum::body::to_bytes(response.into_body(), usize::MAX).await.unwrap();
        (status, String::from_utf8_lossy(&bytes).into_owned())
    }

    #[tokio::test]
    async fn a_course_one_does_not_belong_to_looks_like_no_course_at_all() {
        use slicehub_core::store::Role;
        let uri: Uri = "/courses/CS-101/class".parse().unwrap();
        let outsider = user(vec![(CourseId(2), Role::Student)], false);
        let missing = status_and_body(no_such_course(&outsider)).await;
        assert_eq!(missing.0, StatusCode::NOT_FOUND);
        for action in [Action::ViewCourse(CourseId(1)), Action::SetCoursePolicy(CourseId(1)), Action::WatchClass(CourseId(1))] {
            let refused = answer(&outsider, &action, &uri).expect("refused");
            assert_eq!(status_and_body(refused).await, missing, "{action:?}");
        }
        // A member without the role, and a page for another role: 403.
        let student = user(vec![(CourseId(1), Role::Student)], false);
        let refused = answer(&student, &Action::WatchClass(CourseId(1)), &uri).expect("refused");
        assert_eq!(refused.status(), StatusCode::FORBIDDEN);
        let refused = answer(&outsider, &Action::ListUsers, &uri).expect("refused");
        assert_eq!(refused.status(), StatusCode::FORBIDDEN);
        // Allowed stays allowed; anonymous callers sign in first.
        assert!(answer(&student, &Action::ViewCourse(CourseId(1)), &uri).is_none());
        assert!(answer(&user(vec![], true), &Action::WatchClass(CourseId(1)), &uri).is_none());
        let anonymous = answer(&Caller::Anonymous, &Action::ViewCourse(CourseId(1)), &uri).expect("sign in");
        assert_eq!(anonymous.status(), StatusCode::SEE_OTHER);
    }

    #[test]
    fn dot_segments_are_no_page() {
        for path in [
            "/courses/x/../CS-101/usage.csv",
            "/courses/CS-101/./usage.csv",
            "/courses/%2E%2E/usage.csv",
            "/courses/CS-101/%2e/class",
            "/admin/x/../users",
        ] {
            assert_eq!(rule(path), PageRule::NotCanonical, "{path}");
        }
    }
}
