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
    // An LMS posts its login initiation and launch from its own site by design; state,
    // nonce and the platform's signature protect them instead.
    let from_lms = matches!(request.uri().path(), "/lti/login" | "/lti/launch");
    if safe || from_lms || same_origin(request.headers()) {
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

/// True unless the browser says the request came from another origin (Sec-Fetch-Site
/// other than same-origin, which also refuses the notebook hosts of the portal's own
/// site), or names an origin (or, lacking one, a referer) whose host differs from the Host
/// it sent the request to. Clients that send neither (curl, scripts) carry no browser
/// cookies and pass.
fn same_origin(headers: &HeaderMap) -> bool {
    let text = |name| headers.get(name).and_then(|v| v.to_str().ok());
    if let Some(site) = text("sec-fetch-site") {
        if !matches!(site, "same-origin" | "none") {
            return false;
        }
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

/// `https://portal.example.edu:8443/path` → `portal.example.edu:8443`; none for a URL with
/// credentials in it (browsers never send one).
fn authority(text: &str) -> Option<String> {
    let url = url::Url::parse(text).ok()?;
    if !url.username().is_empty() || url.password().is_some() {
        return None;
    }
    let host = url.host_str()?;
    Some(match url.port() {
        Some(port) => format!("{host}:{port}"),
        None => host.to_string(),
    })
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
        // The host hidden behind credentials, or a look-alike prefix, is not the portal.
        for claimed in ["http://127.0.0.1:3000@evil.example", "http://evil.example@127.0.0.1:3000", "http://127.0.0.1:30000", "http://127.0.0.1"] {
            let h = [("host", "127.0.0.1:3000"), ("origin", claimed)];
            let mut map = HeaderMap::new();
            for (k, v) in h {
                map.insert(k, HeaderValue::from_str(v).unwrap());
            }
            assert!(!same_origin(&map), "{claimed}");
        }
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
            !same_origin(&headers(&[
                ("host", "gpu.example.edu"),
                ("sec-fetch-site", "same-site"),
                ("referer", "https://gpu.example.edu/")
            ])),
            "a notebook host of the portal's own site is another origin"
        );
        assert!(
            same_origin(&headers(&[("host", "a:1")])),
            "no browser headers: not a browser"
        );
    }
}
