//! Resolves who sent each request (from the session cookie, or the header of a trusted web
//! server in front: `header_sign_in`; on the APIs from a token: `api_tokens`) once, applies
//! the page guard, and hands the result to handlers and server functions as `RequestAuth`.

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;
use slicehub_app::api::ssr::{session_cookie, Caller, RequestAuth};
use slicehub_core::Services;

use crate::http::client_addr;
use crate::http::header_sign_in;
use crate::http::page_guard;

pub async fn resolve(
    State(services): State<Services>,
    mut request: Request,
    next: Next,
) -> Response {
    // Scripts, styles and metrics answer the same to everyone: no session lookup for
    // each of them.
    let path = request.uri().path();
    if crate::http::api_tokens::takes_tokens(path) {
        return crate::http::api_tokens::resolve(&services, request, next).await;
    }
    let same_for_all = path.starts_with("/pkg/") || path == crate::http::handlers::metrics::PATH;
    let token = if same_for_all {
        None
    } else {
        let name = session_cookie(services.config.server.secure_cookies);
        crate::http::cookies::values(request.headers(), name).into_iter().next()
    };
    // The person a trusted web server in front names wins over the cookie's.
    let from_header = match same_for_all {
        true => None,
        false => header_sign_in::caller(&services, header_sign_in::peer(&request), request.headers()).await,
    };
    let caller = match from_header {
        Some(Ok(caller)) => caller,
        Some(Err(refusal)) => return refusal,
        None => match services.auth.caller(token.as_deref()).await {
            Ok(caller) => caller,
            Err(e) => {
                tracing::warn!(error = %e, "could not read the session; treating the request as anonymous");
                Caller::Anonymous
            }
        },
    };
    if let Some(refusal) = page_guard::check(&services, request.uri(), &caller).await {
        return refusal;
    }
    let address = client_addr::of_request(&request, &services.config.server.trusted_proxies);
    request.extensions_mut().insert(RequestAuth {
        caller,
        token,
        address,
        secure_cookies: services.config.server.secure_cookies,
    });
    next.run(request).await
}
