//! The idle warning inside JupyterLab. The proxy adds one script tag to JupyterLab's page
//! (`…/lab`); the script asks `…/_slicehub/idle` on the notebook's own host and draws the
//! warning over JupyterLab's corner, whose "Keep it running" posts to `…/_slicehub/keep`,
//! and a small chip at the bottom left with the time left, leading back to SliceHub. These
//! paths are answered here and never reach JupyterLab. Chosen over a JupyterLab extension
//! because it works with every image a course allows, with nothing installed in it, and
//! the script only adds an element of its own to the page.

use axum::body::Body;
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use slicehub_core::sessions::{GpuSession, SessionState};
use slicehub_core::CoreError;

use crate::serve::AppState;

const SCRIPT: &str = include_str!("idle_banner.js");
/// JupyterLab's page is about 30 KB; a page far larger is refused rather than held.
const MOST_PAGE_BYTES: usize = 4 * 1024 * 1024;

/// `_slicehub/…` under the session's base URL, answered by the portal.
/// `owner`: the request carries the session's own student's grant (an administrator's
/// visit cannot answer for the student).
pub(super) async fn answer(state: &AppState, session: &GpuSession, rest: &str, method: &Method, owner: bool) -> Response {
    let sessions = &state.services.sessions;
    match (method, rest) {
        (&Method::GET, "idle.js") => (
            [(header::CONTENT_TYPE, "text/javascript; charset=utf-8"), (header::CACHE_CONTROL, "no-cache")],
            SCRIPT,
        )
            .into_response(),
        (&Method::GET, "idle") => {
            let notice = match sessions.idle_notice(&session.id).await {
                Ok(notice) => notice.filter(|_| session.state == SessionState::Ready),
                Err(e) => {
                    tracing::warn!(error = %e, "notebook host: idle state unreadable");
                    None
                }
            };
            let sessions_url = format!("{}/sessions", state.services.notebooks.portal_url());
            // An ended session says so, and why, in place of JupyterLab's "check your
            // network" (its server is gone).
            let ended = session.state.is_final().then(|| {
                serde_json::json!({
                    "reason": session.reason,
                    "sessions_url": sessions_url,
                })
            });
            // While it runs, the corner chip counts down to its time limit and leads back.
            let ends_at_ms =
                (session.state == SessionState::Ready).then_some(session.deadline_at_ms);
            let body = serde_json::json!({
                "idle": notice,
                "ended": ended,
                "ends_at_ms": ends_at_ms,
                "sessions_url": sessions_url,
            });
            ([(header::CACHE_CONTROL, "no-store")], axum::Json(body)).into_response()
        }
        (&Method::POST, "keep") if !owner => {
            (StatusCode::FORBIDDEN, "Only the session's own student can keep it running.").into_response()
        }
        (&Method::POST, "keep") => match sessions.keep_running(session, &session.username).await {
            Ok(()) => StatusCode::NO_CONTENT.into_response(),
            Err(CoreError::Conflict(words)) => (StatusCode::CONFLICT, words).into_response(),
            Err(e) => {
                tracing::warn!(session = %session.id, error = %e, "notebook host: keep running not recorded");
                (StatusCode::SERVICE_UNAVAILABLE, "The portal cannot record that right now; try again.").into_response()
            }
        },
        _ => StatusCode::NOT_FOUND.into_response(),
    }
}

/// JupyterLab's own page (`…/lab`, `…/lab/tree/…`, `…/lab/workspaces/…`).
pub(super) fn is_lab_page(path: &str, session: &GpuSession) -> bool {
    path.strip_prefix(&session.base_url())
        .is_some_and(|rest| rest == "lab" || rest.starts_with("lab/tree") || rest.starts_with("lab/workspaces"))
}

/// Adds the warning's script to an HTML page; any other answer passes untouched.
pub(super) async fn inject(response: Response, session: &GpuSession) -> Response {
    let html = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.starts_with("text/html"));
    let encoded = response.headers().contains_key(header::CONTENT_ENCODING);
    if !html || encoded || response.status() != StatusCode::OK {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, MOST_PAGE_BYTES).await else {
        return (StatusCode::BAD_GATEWAY, "JupyterLab's page could not be read.").into_response();
    };
    let page = String::from_utf8_lossy(&bytes);
    let tag = format!(r#"<script src="{}_slicehub/idle.js" defer></script>"#, session.base_url());
    let page = match page.rfind("</head>") {
        Some(at) => format!("{}{tag}{}", &page[..at], &page[at..]),
        None => format!("{page}{tag}"),
    };
    parts.headers.remove(header::CONTENT_LENGTH);
    if let Ok(length) = HeaderValue::from_str(&page.len().to_string()) {
        parts.headers.insert(header::CONTENT_LENGTH, length);
    }
    Response::from_parts(parts, Body::from(page))
}
