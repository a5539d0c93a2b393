//! What the proxy answers instead of JupyterLab: small self-contained HTML pages. `portal`
//! is the portal's URL (`""` on the portal's own host; its public URL on notebook hosts,
//! which serve no portal assets themselves).

use axum::http::{header, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use slicehub_core::sessions::GpuSession;

fn page(portal: &str, title: &str, body: &str, back: bool) -> Html<String> {
    let back = if back {
        format!("<p><a class=\"btn btn-primary\" href=\"{portal}/sessions\">Back to your sessions</a></p>")
    } else {
        String::new()
    };
    Html(format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{title} · SliceHub</title>\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <link rel=\"stylesheet\" href=\"{portal}/pkg/slicehub.css\"></head>\
         <body><main class=\"page\"><div class=\"card notfound\"><h1 class=\"page-title\">{title}</h1>{body}\
         {back}</div></main></body></html>"
    ))
}

pub fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

pub fn not_found(portal: &str) -> Response {
    (
        StatusCode::NOT_FOUND,
        page(portal, "Not found", "<p>There is no session at this address.</p>", true),
    )
        .into_response()
}

pub fn ended(portal: &str, session: &GpuSession) -> Response {
    let body = format!(
        "<p>Session <code>{}</code> is over: {}.</p><p>Your files in your home folder are kept; start a new session to continue.</p>",
        escape(&session.id),
        escape(&session.reason)
    );
    (StatusCode::GONE, page(portal, "This session has ended", &body, true)).into_response()
}

pub fn starting(portal: &str, session: &GpuSession) -> Response {
    let body = format!(
        "<p>Session <code>{}</code> is {}; this page reloads until JupyterLab is ready.</p>",
        escape(&session.id),
        session.state.as_str()
    );
    (
        StatusCode::SERVICE_UNAVAILABLE,
        [("refresh", "2")],
        page(portal, "Starting…", &body, true),
    )
        .into_response()
}

pub fn unavailable(portal: &str, message: &str) -> Response {
    (
        StatusCode::BAD_GATEWAY,
        page(portal, "Unavailable", &format!("<p>{}</p>", escape(message)), true),
    )
        .into_response()
}

/// JupyterLab has had a request for [`super::forward::HEAD_TIMEOUT`] without beginning
/// to answer it.
pub fn timed_out(portal: &str) -> Response {
    (
        StatusCode::GATEWAY_TIMEOUT,
        page(
            portal,
            "No answer",
            &format!(
                "<p>JupyterLab did not begin to answer within {} seconds. It may be busy or stuck; try again in a moment.</p>",
                super::forward::HEAD_TIMEOUT.as_secs()
            ),
            true,
        ),
    )
        .into_response()
}

/// The session already has [`super::forward::PER_SESSION`] requests in flight.
pub fn too_many_at_once(portal: &str) -> Response {
    (
        StatusCode::SERVICE_UNAVAILABLE,
        [(header::RETRY_AFTER, "1")],
        page(
            portal,
            "Too many requests at once",
            "<p>This notebook has too many requests at once waiting for JupyterLab. Wait for some to finish, then try again.</p>",
            true,
        ),
    )
        .into_response()
}

/// A launch link that was used, has expired, belongs to another notebook, or was opened
/// in another browser than the one that asked for it.
pub fn link_expired(portal: &str) -> Response {
    let body = "<p>This link into a notebook works once, for a minute, and only in the browser that asked for it. Open the notebook again from your sessions page.</p>";
    (
        StatusCode::NOT_FOUND,
        [(header::CACHE_CONTROL, "no-store")],
        page(portal, "This link has expired", body, true),
    )
        .into_response()
}

pub fn refused(portal: &str, why: &str) -> Response {
    (
        StatusCode::FORBIDDEN,
        page(portal, "Refused", &format!("<p>{}</p>", escape(why)), false),
    )
        .into_response()
}

/// An administrator about to open a student's notebook: one explicit, audited step. Its
/// form answers with a redirect to the notebook's origin, which the page's own policy
/// names (the portal's default allows forms to the portal only).
pub fn confirm_admin_visit(session: &GpuSession, action: &str, notebook_origin: &str) -> Response {
    let body = format!(
        "<p>This notebook belongs to <strong>{owner}</strong> (course {course}). Opening it \
         is recorded in the audit log under your name, and whatever its pages run, runs in \
         your browser on the notebook's own address.</p>\
         <form method=\"post\" action=\"{action}\"><p>\
         <button class=\"btn btn-primary\" type=\"submit\">Open {owner}'s notebook</button></p></form>",
        owner = escape(&session.username),
        course = escape(&session.course_code),
        action = escape(action),
    );
    let policy = format!(
        "default-src 'none'; style-src 'self'; form-action 'self' {notebook_origin}; \
         frame-ancestors 'none'; base-uri 'none'"
    );
    (
        StatusCode::OK,
        [
            (header::CACHE_CONTROL, "no-store".to_string()),
            (header::CONTENT_SECURITY_POLICY, policy),
        ],
        page("", "Open a student's notebook?", &body, true),
    )
        .into_response()
}
