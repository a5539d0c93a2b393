//! Forwarding one request to a notebook container at its session-network address: headers
//! cleaned (hop-by-hop out, the grant cookie and any client-sent forwarding or
//! authorization headers out), bodies streamed without buffering, and `Upgrade`
//! (WebSocket) requests spliced byte for byte once JupyterLab agrees.
//!
//! The session's token is added to safe requests (GET, HEAD, WebSocket upgrades) only.
//! JupyterLab answers such a request with its own login cookie for this host, and every
//! request that changes something then authenticates with that cookie, so JupyterLab's
//! XSRF check (`_xsrf` cookie against the `X-XSRFToken` header) applies to it.

use axum::body::Body;
use axum::extract::Request;
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode, Uri};
use axum::response::Response;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioIo};
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

pub(super) fn is_upgrade(headers: &HeaderMap) -> bool {
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

/// Headers a client could send to make JupyterLab believe something about the request
/// (its scheme, host or address) or to authenticate as someone.
const CLIENT_CLAIMS: [&str; 7] = [
    "authorization",
    "forwarded",
    "x-forwarded-for",
    "x-forwarded-host",
    "x-forwarded-proto",
    "x-real-ip",
    "x-scheme",
];

/// The Cookie header without the grant cookie: the container never sees it.
fn without_cookie(headers: &mut HeaderMap, name: &str) {
    let kept: Vec<String> = headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .map(str::trim)
        .filter(|pair| !pair.is_empty() && !pair.starts_with(&format!("{name}=")))
        .map(str::to_string)
        .collect();
    headers.remove(header::COOKIE);
    if !kept.is_empty() {
        if let Ok(value) = HeaderValue::from_str(&kept.join("; ")) {
            headers.insert(header::COOKIE, value);
        }
    }
}

/// A container may set cookies for its own host only: one with a Domain attribute would
/// reach sibling notebook hosts (or a parent domain), and the grant cookie's name is the
/// proxy's.
fn cookie_allowed(set_cookie: &HeaderValue, grant_cookie: &str) -> bool {
    let Ok(text) = set_cookie.to_str() else { return false };
    let mut parts = text.split(';').map(str::trim);
    let name = parts.next().and_then(|p| p.split_once('=')).map(|(n, _)| n.trim()).unwrap_or("");
    let scoped = parts.any(|attr| {
        attr.split_once('=')
            .map(|(k, _)| k.trim())
            .unwrap_or(attr)
            .eq_ignore_ascii_case("domain")
    });
    !scoped && !name.is_empty() && name != grant_cookie && !name.starts_with("__Host-slicehub")
}

impl Upstream {
    /// `address` is `IP:PORT` on the session network; `scheme` is how the browser reached
    /// the notebook host (JupyterLab marks its cookies Secure over https).
    pub async fn forward(
        &self,
        mut request: Request,
        address: &str,
        token: &str,
        grant_cookie: &str,
        scheme: &'static str,
    ) -> Response {
        let upgrade = is_upgrade(request.headers());
        let safe = matches!(*request.method(), Method::GET | Method::HEAD);
        let path = request
            .uri()
            .path_and_query()
            .map(|p| p.as_str().to_string())
            .unwrap_or_else(|| "/".into());
        let Ok(uri) = format!("http://{address}{path}").parse::<Uri>() else {
            return pages::not_found("");
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
        without_cookie(&mut parts.headers, grant_cookie);
        for name in CLIENT_CLAIMS {
            parts.headers.remove(name);
        }
        parts.headers.insert("x-forwarded-proto", HeaderValue::from_static(scheme));
        if safe {
            if let Ok(value) = HeaderValue::from_str(&format!("token {token}")) {
                parts.headers.insert(header::AUTHORIZATION, value);
            }
        }
        parts.uri = uri;
        // JupyterLab compares Origin with Host, so Host stays the notebook host's.
        let outgoing = Request::from_parts(parts, body);
        let mut response = match self.client.request(outgoing).await {
            Ok(response) => response,
            Err(e) => {
                tracing::warn!(error = %e, address, "proxy: JupyterLab did not answer");
                return pages::unavailable("", "JupyterLab did not answer; it may be restarting. Try again in a moment.");
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
        let cookies: Vec<HeaderValue> = parts.headers.get_all(header::SET_COOKIE).iter().cloned().collect();
        parts.headers.remove(header::SET_COOKIE);
        for cookie in cookies {
            if cookie_allowed(&cookie, grant_cookie) {
                parts.headers.append(header::SET_COOKIE, cookie);
            } else {
                tracing::warn!(address, "proxy: dropped a cookie the container tried to set beyond its host");
            }
        }
        Response::from_parts(parts, Body::new(body))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn containers_set_cookies_for_their_own_host_only() {
        let ok = |v: &'static str| cookie_allowed(&HeaderValue::from_static(v), "slicehub_notebook");
        assert!(ok("_xsrf=abc; Path=/user/a/s-1/"));
        assert!(ok("username-s-1-nb-localhost-3000=x; HttpOnly; Path=/"));
        assert!(!ok("_xsrf=abc; Domain=nb.localhost; Path=/"));
        assert!(!ok("x=1; path=/; DOMAIN=.localhost"));
        assert!(!ok("slicehub_notebook=forged; Path=/"));
        assert!(!ok("__Host-slicehub_session=forged; Path=/; Secure"));
    }
}
