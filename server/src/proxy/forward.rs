//! Forwarding one request to a container on 127.0.0.1: headers cleaned (hop-by-hop out,
//! the portal's cookie out, the session's token in), bodies streamed without buffering,
//! and `Upgrade` (WebSocket) requests spliced byte for byte once JupyterLab agrees.

use axum::body::Body;
use axum::extract::Request;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioIo};
use slicehub_app::api::ssr::SESSION_COOKIE;

use super::pages;

/// Headers meaningful only for one connection (RFC 9110 §7.6.1).
const HOP_BY_HOP: [&str; 8] = [
    "connection",
    "keep-alive",
    "proxy-authenticate",
    "proxy-authorization",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
];

/// The HTTP client the proxy forwards with: one pool of keep-alive connections.
#[derive(Clone)]
pub struct Upstream {
    client: Client<HttpConnector, Body>,
}

impl Default for Upstream {
    fn default() -> Self {
        let mut connector = HttpConnector::new();
        connector.set_nodelay(true);
        Upstream {
            client: Client::builder(TokioExecutor::new()).build(connector),
        }
    }
}

fn is_upgrade(headers: &HeaderMap) -> bool {
    headers.contains_key(header::UPGRADE)
        && headers
            .get_all(header::CONNECTION)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .any(|v| v.split(',').any(|t| t.trim().eq_ignore_ascii_case("upgrade")))
}

fn strip_hop_by_hop(headers: &mut HeaderMap) {
    let named: Vec<String> = headers
        .get_all(header::CONNECTION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(',').map(|t| t.trim().to_ascii_lowercase()))
        .collect();
    for name in HOP_BY_HOP.iter().copied().chain(named.iter().map(String::as_str)) {
        headers.remove(name);
    }
}

/// The Cookie header without the portal's own session cookie.
fn without_portal_cookie(headers: &mut HeaderMap) {
    let kept: Vec<String> = headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .map(str::trim)
        .filter(|pair| !pair.is_empty() && !pair.starts_with(&format!("{SESSION_COOKIE}=")))
        .map(str::to_string)
        .collect();
    headers.remove(header::COOKIE);
    if !kept.is_empty() {
        if let Ok(value) = HeaderValue::from_str(&kept.join("; ")) {
            headers.insert(header::COOKIE, value);
        }
    }
}

/// A WebSocket opened from another site is refused (cookies would make it the student's).
fn cross_origin(headers: &HeaderMap) -> bool {
    let text = |name: header::HeaderName| headers.get(name).and_then(|v| v.to_str().ok());
    match (text(header::ORIGIN), text(header::HOST)) {
        (Some(origin), Some(host)) => origin
            .split_once("://")
            .map(|(_, rest)| rest.split('/').next().unwrap_or(rest))
            .is_none_or(|authority| !authority.eq_ignore_ascii_case(host)),
        _ => false,
    }
}

impl Upstream {
    pub async fn forward(&self, mut request: Request, port: u16, token: &str) -> Response {
        let upgrade = is_upgrade(request.headers());
        if upgrade && cross_origin(request.headers()) {
            return (StatusCode::FORBIDDEN, "Refused: a WebSocket from another site.").into_response();
        }
        let path = request
            .uri()
            .path_and_query()
            .map(|p| p.as_str().to_string())
            .unwrap_or_else(|| "/".into());
        let Ok(uri) = format!("http://127.0.0.1:{port}{path}").parse::<Uri>() else {
            return pages::not_found();
        };
        let client_upgrade = upgrade.then(|| hyper::upgrade::on(&mut request));
        let (mut parts, body) = request.into_parts();
        let upgrade_headers = upgrade.then(|| {
            (
                parts.headers.get(header::UPGRADE).cloned(),
                HeaderValue::from_static("upgrade"),
            )
        });
        strip_hop_by_hop(&mut parts.headers);
        if let Some((Some(protocol), connection)) = upgrade_headers {
            parts.headers.insert(header::UPGRADE, protocol);
            parts.headers.insert(header::CONNECTION, connection);
        }
        without_portal_cookie(&mut parts.headers);
        if let Ok(value) = HeaderValue::from_str(&format!("token {token}")) {
            parts.headers.insert(header::AUTHORIZATION, value);
        }
        parts.uri = uri;
        // JupyterLab compares Origin with Host, so Host stays the portal's.
        let outgoing = Request::from_parts(parts, body);
        let mut response = match self.client.request(outgoing).await {
            Ok(response) => response,
            Err(e) => {
                tracing::warn!(error = %e, port, "proxy: JupyterLab did not answer");
                return pages::unavailable("JupyterLab did not answer; it may be restarting. Try again in a moment.");
            }
        };
        if response.status() == StatusCode::SWITCHING_PROTOCOLS {
            if let Some(client_upgrade) = client_upgrade {
                let server_upgrade = hyper::upgrade::on(&mut response);
                tokio::spawn(async move {
                    match tokio::try_join!(client_upgrade, server_upgrade) {
                        Ok((client, server)) => {
                            let mut client = TokioIo::new(client);
                            let mut server = TokioIo::new(server);
                            let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                        }
                        Err(e) => tracing::debug!(error = %e, "proxy: upgrade failed"),
                    }
                });
            }
            let (parts, _) = response.into_parts();
            return Response::from_parts(parts, Body::empty());
        }
        let (mut parts, body) = response.into_parts();
        strip_hop_by_hop(&mut parts.headers);
        Response::from_parts(parts, Body::new(body))
    }
}
