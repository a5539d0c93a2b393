//! Cross-site request forgery defence for every state-changing request: a POST (or any
//! method but GET/HEAD/OPTIONS) must come from the portal's own origin. SameSite=Lax
//! cookies already keep most cross-site POSTs anonymous; this refuses the rest, including
//! Leptos server functions, which do no origin checks of their own.

use axum::extract::Request;
use axum::http::{header, HeaderMap, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

pub async fn same_origin_only(request: Request, next: Next) -> Response {
    let safe = matches!(
        *request.method(),
        Method::GET | Method::HEAD | Method::OPTIONS
    );
    let from_notebook = !request.uri().path().starts_with(crate::proxy::PREFIX)
        && sent_from_notebook(request.headers());
    if safe || (same_origin(request.headers()) && !from_notebook) {
        return next.run(request).await;
    }
    tracing::warn!(
        method = %request.method(),
        path = %request.uri().path(),
        origin = ?request.headers().get(header::ORIGIN),
        "refused a cross-origin request"
    );
    (
        StatusCode::FORBIDDEN,
        "Refused: this request came from another site.",
    )
        .into_response()
}

/// True unless the browser says the request is cross-site, or names an origin (or, lacking
/// one, a referer) whose host differs from the Host it sent the request to. Clients that
/// send neither (curl, scripts) carry no browser cookies and pass.
fn same_origin(headers: &HeaderMap) -> bool {
    let text = |name| headers.get(name).and_then(|v| v.to_str().ok());
    if text("sec-fetch-site") == Some("cross-site") {
        return false;
    }
    let Some(host) = text(header::HOST.as_str()) else {
        return false;
    };
    let claimed = text(header::ORIGIN.as_str()).or_else(|| text(header::REFERER.as_str()));
    match claimed {
        None => true,
        Some("null") => false,
        Some(url) => authority(url).is_some_and(|a| a.eq_ignore_ascii_case(host)),
    }
}

/// A portal request made by a page under `/user/` (a notebook's output, served on the
/// portal's origin), or by a browser page that hid where it came from. Scripts on the
/// same origin can still forge a referer; per-user subdomains are the real separation
/// (README, "Notebook isolation").
fn sent_from_notebook(headers: &HeaderMap) -> bool {
    let text = |name| headers.get(name).and_then(|v| v.to_str().ok());
    let browser = text("sec-fetch-site").is_some();
    match text(header::REFERER.as_str()) {
        Some(referer) => referer
            .split_once("://")
            .map(|(_, rest)| rest)
            .and_then(|rest| rest.find('/').map(|i| &rest[i..]))
            .is_some_and(|path| path.starts_with(crate::proxy::PREFIX)),
        None => browser,
    }
}

/// `https://portal.example.edu:8443/path` → `portal.example.edu:8443`
fn authority(url: &str) -> Option<&str> {
    let rest = url.split_once("://")?.1;
    Some(rest.split(['/', '?', '#']).next().unwrap_or(rest))
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, HeaderValue::from_static(v));
        }
        h
    }

    #[test]
    fn same_origin_passes_and_other_origins_do_not() {
        assert!(same_origin(&headers(&[
            ("host", "127.0.0.1:3000"),
            ("origin", "http://127.0.0.1:3000")
        ])));
        assert!(!same_origin(&headers(&[
            ("host", "127.0.0.1:3000"),
            ("origin", "http://evil.example")
        ])));
        assert!(!same_origin(&headers(&[
            ("host", "127.0.0.1:3000"),
            ("origin", "null")
        ])));
        assert!(same_origin(&headers(&[
            ("host", "a:1"),
            ("referer", "http://a:1/login?x=1")
        ])));
        assert!(!same_origin(&headers(&[
            ("host", "a:1"),
            ("referer", "http://b:1/")
        ])));
        assert!(!same_origin(&headers(&[
            ("host", "a:1"),
            ("sec-fetch-site", "cross-site")
        ])));
        assert!(
            same_origin(&headers(&[("host", "a:1")])),
            "no browser headers: not a browser"
        );
    }

    #[test]
    fn portal_requests_from_notebook_pages_are_told_apart() {
        assert!(sent_from_notebook(&headers(&[(
            "referer",
            "http://a:1/user/alice/s-1/lab/tree/x.ipynb"
        )])));
        assert!(!sent_from_notebook(&headers(&[("referer", "http://a:1/sessions")])));
        assert!(
            sent_from_notebook(&headers(&[("sec-fetch-site", "same-origin")])),
            "a browser page that hides its referer"
        );
        assert!(!sent_from_notebook(&headers(&[])), "not a browser");
    }
}
