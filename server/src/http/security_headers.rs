//! Headers every portal response carries (notebook hosts never reach this layer; there
//! JupyterLab sets its own): a Content-Security-Policy that keeps the portal's pages to
//! its own scripts and out of frames, and a referrer policy that keeps addresses on site.
//! A page that needs a narrower or other policy (the admin's notebook confirmation) sets
//! its own, which is kept.

use axum::http::{header, HeaderValue};
use tower::layer::util::{Identity, Stack};
use tower::ServiceBuilder;
use tower_http::set_header::SetResponseHeaderLayer;

/// Leptos hydrates with an inline module script and a wasm bundle, hence
/// `'unsafe-inline'` and `'wasm-unsafe-eval'` for scripts; nothing is loaded from
/// elsewhere and no other site may frame a portal page.
const CSP: &str = "default-src 'self'; script-src 'self' 'unsafe-inline' 'wasm-unsafe-eval'; \
    style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; \
    object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'";

type SetHeader = SetResponseHeaderLayer<HeaderValue>;

pub type SecurityHeaders = ServiceBuilder<Stack<SetHeader, Stack<SetHeader, Stack<SetHeader, Identity>>>>;

pub fn layer() -> SecurityHeaders {
    ServiceBuilder::new()
        .layer(SetResponseHeaderLayer::if_not_present(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CSP)))
        .layer(SetResponseHeaderLayer::if_not_present(header::REFERRER_POLICY, HeaderValue::from_static("same-origin")))
        .layer(SetResponseHeaderLayer::overriding(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff")))
}
