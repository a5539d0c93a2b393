//! What the proxy answers instead of JupyterLab: small self-contained HTML pages.

use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Response};
use slicehub_core::sessions::GpuSession;

fn page(title: &str, body: &str) -> Html<String> {
    Html(format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{title} · SliceHub</title>\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <link rel=\"stylesheet\" href=\"/pkg/slicehub.css\"></head>\
         <body><main class=\"page\"><div class=\"card notfound\"><h1 class=\"page-title\">{title}</h1>{body}\
         <p><a class=\"btn btn-primary\" href=\"/sessions\">Back to your sessions</a></p></div></main></body></html>"
    ))
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

pub fn not_found() -> Response {
    (
        StatusCode::NOT_FOUND,
        page("Not found", "<p>There is no session at this address.</p>"),
    )
        .into_response()
}

pub fn ended(session: &GpuSession) -> Response {
    let body = format!(
        "<p>Session <code>{}</code> is over: {}.</p><p>Your files in your home folder are kept; start a new session to continue.</p>",
        escape(&session.id),
        escape(&session.reason)
    );
    (StatusCode::GONE, page("This session has ended", &body)).into_response()
}

pub fn starting(session: &GpuSession) -> Response {
    let body = format!(
        "<p>Session <code>{}</code> is {}; this page reloads until JupyterLab is ready.</p>",
        escape(&session.id),
        session.state.as_str()
    );
    (
        StatusCode::SERVICE_UNAVAILABLE,
        [("refresh", "2")],
        page("Starting…", &body),
    )
        .into_response()
}

pub fn unavailable(message: &str) -> Response {
    (
        StatusCode::BAD_GATEWAY,
        page("Unavailable", &format!("<p>{}</p>", escape(message))),
    )
        .into_response()
}
