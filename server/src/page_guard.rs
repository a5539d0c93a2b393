//! Which pages need what. Every page path is decided here with the one guard
//! (`slicehub_core::auth::authorize`); server functions ask the same guard themselves.

use axum::http::{header, StatusCode, Uri};
use axum::response::{Html, IntoResponse, Response};
use slicehub_app::api::ssr::{Action, Caller};
use slicehub_core::auth::{authorize, Denied};
use slicehub_core::Services;

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
}

pub fn rule(path: &str) -> PageRule {
    let path = path.trim_end_matches('/');
    match path {
        "" | "/login" => PageRule::Public,
        "/account" => PageRule::Needs(Action::ViewOwnAccount),
        "/courses" => PageRule::Needs(Action::ListOwnCourses),
        "/sessions" => PageRule::Needs(Action::ListOwnSessions),
        "/gpus" => PageRule::Needs(Action::ViewGpus),
        "/status" => PageRule::Needs(Action::ViewStatus),
        "/admin/users" => PageRule::Needs(Action::ListUsers),
        "/reports" | "/reports/usage.csv" => PageRule::Needs(Action::ViewReports),
        "/admin/audit" | "/admin/audit.csv" => PageRule::Needs(Action::ReadAuditLog),
        "/admin/sessions" => PageRule::Needs(Action::ListAllSessions),
        _ => match path.strip_prefix("/courses/").map(|rest| rest.split_once('/')) {
            Some(None) => PageRule::Course(path["/courses/".len()..].to_string()),
            Some(Some((code, "policy" | "bookings"))) if !code.is_empty() => PageRule::CoursePolicy(code.to_string()),
            Some(Some((code, "class" | "usage.csv"))) if !code.is_empty() => PageRule::CourseClass(code.to_string()),
            _ => PageRule::Public,
        },
    }
}

/// `None` lets the request through; otherwise the answer to send instead.
pub async fn check(services: &Services, uri: &Uri, caller: &Caller) -> Option<Response> {
    let (code, action_on): (String, fn(i64) -> Action) = match rule(uri.path()) {
        PageRule::Public => return None,
        PageRule::Needs(action) => return answer(caller, &action, uri),
        PageRule::Course(code) => (code, Action::ViewCourse),
        PageRule::CoursePolicy(code) => (code, Action::SetCoursePolicy),
        PageRule::CourseClass(code) => (code, Action::WatchClass),
    };
    let action = match services.store.course_by_code(&code).await {
        Ok(Some(course)) => action_on(course.id),
        // Unknown course: signed-in users get the app's 404 page; others sign in first.
        Ok(None) => Action::ListOwnCourses,
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

fn answer(caller: &Caller, action: &Action, uri: &Uri) -> Option<Response> {
    match authorize(caller, action) {
        Ok(()) => None,
        Err(Denied::NotLoggedIn) => Some(see_other(&format!("/login?next={}", uri.path()))),
        Err(Denied::MustChangePassword) => Some(see_other("/account")),
        Err(Denied::Forbidden) => Some(forbidden(caller)),
    }
}

fn see_other(location: &str) -> Response {
    (
        StatusCode::SEE_OTHER,
        [(header::LOCATION, location.to_string())],
    )
        .into_response()
}

/// The 403 page, with the caller's navigation and the footer like every other page. It
/// is served before the app runs, so its menu is laid out without the menu button.
fn forbidden(caller: &Caller) -> Response {
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
    let page = format!(
        r##"<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Not allowed · SliceHub</title><link rel="stylesheet" href="/pkg/slicehub.css"></head>
<body><div class="app" data-hydrated="false"><a class="skip-link" href="#main">Skip to the page</a>
<header class="topbar"><div class="topbar-inner"><a class="brand" href="/">
<span class="brand-mark" aria-hidden="true"><i></i><i></i><i></i><i></i></span>SliceHub</a>
<div class="topbar-menu"><nav class="nav" aria-label="Main"><a href="/">Overview</a><a href="/sessions">Sessions</a>
<a href="/courses">Courses</a>{admin_links}</nav>
<div class="who"><a class="who-name" href="/account">{username}</a>
<form class="inline-form" method="post" action="/api/logout"><button class="btn btn-ghost btn-small" type="submit">Sign out</button></form></div>
</div></div></header>
<main class="page" id="main"><section class="card notfound"><p class="eyebrow">403</p>
<h1>This page is not open to you.</h1>
<p class="muted">It belongs to another role or course. If you think you should see it, ask your instructor or administrator.</p>
<a class="btn btn-primary" href="/">Back to the overview</a></section></main>
<footer class="footer">SliceHub — MIG-aware GPU sharing for classrooms. <a href="/healthz">Health (JSON)</a></footer>
</div></body></html>"##
    );
    (StatusCode::FORBIDDEN, Html(page)).into_response()
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}
