//! Headers every portal response carries (notebook hosts never reach this layer; there
//! JupyterLab sets its own): a Content-Security-Policy that keeps the portal's pages to
//! its own scripts and out of frames, and a referrer policy that keeps addresses on site.

use axum::extract::Request;
use axum::http::HeaderValue;
use axum::middleware::Next;
use axum::response::Response;

/// Leptos hydrates with an inline module script and a wasm bundle, hence
/// `'unsafe-inline'` and `'wasm-unsafe-eval'` for scripts; nothing is loaded from
/// elsewhere and no other site may frame a portal page.
const CSP: &str = "default-src 'self'; script-src 'self' 'unsafe-inline' 'wasm-unsafe-eval'; \
    style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; \
    object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'";

pub async fn add(request: Request, next: Next) -> Response {
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    // A page that needs a narrower or other policy (the admin's notebook confirmation) sets
    // its own.
    if !headers.contains_key("content-security-policy") {
        headers.insert("content-security-policy", HeaderValue::from_static(CSP));
    }
    if !headers.contains_key("referrer-policy") {
        headers.insert("referrer-policy", HeaderValue::from_static("same-origin"));
    }
    headers.insert("x-content-type-options", HeaderValue::from_static("nosniff"));
    response
}
