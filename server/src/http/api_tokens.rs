//! Who calls the APIs (`/api/v1/…` and the JupyterHub-compatible `/hub/api/…`): the
//! personal access token in the `Authorization` header (`Bearer X`, or JupyterHub's
//! `token X`), never a cookie. A browser's login therefore opens nothing here, and a page
//! of another site cannot make a signed-in browser call the API.

use axum::extract::Request;
use axum::http::header::AUTHORIZATION;
use axum::middleware::Next;
use axum::response::Response;
use slicehub_app::api::ssr::{Caller, RequestAuth};
use slicehub_core::auth::token_from_authorization;
use slicehub_core::Services;

use crate::http::client_addr;

pub fn takes_tokens(path: &str) -> bool {
    path == "/api/v1" || path.starts_with("/api/v1/") || path == "/hub/api" || path.starts_with("/hub/api/")
}

pub async fn resolve(services: &Services, mut request: Request, next: Next) -> Response {
    let address = client_addr::of_request(&request, &services.config.server.trusted_proxies);
    let secret = request
        .headers()
        .get(AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(token_from_authorization)
        .map(str::to_string);
    let presented = match secret {
        Some(secret) => match services.auth.token_caller(&secret, &address.to_string()).await {
            Ok(found) => found,
            Err(e) => {
                tracing::warn!(error = %e, "could not read the API token; treating the request as anonymous");
                None
            }
        },
        None => None,
    };
    let caller = presented.as_ref().map_or(Caller::Anonymous, |t| t.caller.clone());
    if let Some(token) = presented {
        request.extensions_mut().insert(token);
    }
    request.extensions_mut().insert(RequestAuth {
        caller,
        token: None,
        address,
        secure_cookies: services.config.server.secure_cookies,
    });
    next.run(request).await
}
