//! Resolves who sent each request (from the session cookie) once, applies the page
//! guard, and hands the result to handlers and server functions as `RequestAuth`.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};

use axum::extract::{ConnectInfo, Request, State};
use axum::http::{header, HeaderMap};
use axum::middleware::Next;
use axum::response::Response;
use slicehub_app::api::ssr::{Caller, RequestAuth, SESSION_COOKIE};
use slicehub_core::Services;

use crate::page_guard;

pub async fn resolve(
    State(services): State<Services>,
    mut request: Request,
    next: Next,
) -> Response {
    // Scripts, styles and health checks answer the same to everyone: no session lookup
    // (a database query) for each of them.
    let path = request.uri().path();
    let token = if path.starts_with("/pkg/") || path == "/healthz" {
        None
    } else {
        cookie(request.headers(), SESSION_COOKIE)
    };
    let caller = match services.auth.caller(token.as_deref()).await {
        Ok(caller) => caller,
        Err(e) => {
            tracing::warn!(error = %e, "could not read the session; treating the request as anonymous");
            Caller::Anonymous
        }
    };
    if let Some(refusal) = page_guard::check(&services, request.uri(), &caller).await {
        return refusal;
    }
    let address = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|c| c.0.ip())
        .unwrap_or(IpAddr::V4(Ipv4Addr::LOCALHOST));
    request.extensions_mut().insert(RequestAuth {
        caller,
        token,
        address,
        secure_cookies: services.config.server_secure_cookies,
    });
    next.run(request).await
}

fn cookie(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.to_string())
        .filter(|v| !v.is_empty())
}
