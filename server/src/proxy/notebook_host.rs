//! Requests to a notebook host (`SESSION.NOTEBOOK_DOMAIN`). They never reach the portal's
//! pages, server functions or cookie: [`dispatch`] hands them to this router before any
//! portal layer runs. Here a browser without a grant gets its launch nonce, a launch
//! ticket (with that nonce) becomes the host's grant cookie, and every request under the
//! session's base URL must carry a grant that admits it.

use std::collections::HashMap;
use std::sync::Arc;

use axum::extract::{Query, Request, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get};
use axum::Router;
use slicehub_core::notebook_access::{is_nonce, new_nonce, NotebookAccess, NONCE_SECS};
use slicehub_app::api::ssr::cookie_header;
use slicehub_core::sessions::SessionState;
use tower::ServiceExt;

use super::{pages, see_other, session_at, with_state, LAUNCH_PATH, PREFIX};
use crate::serve::AppState;

/// The session a notebook host names, for the handlers below.
#[derive(Clone)]
struct HostSession(Option<String>);

pub fn router(state: AppState) -> Router {
    Router::new()
        .route(LAUNCH_PATH, get(launch))
        .route("/user/{*rest}", any(forward))
        .fallback(|State(state): State<AppState>| async move {
            pages::not_found(state.services.notebooks.portal_url())
        })
        .with_state(state)
}

/// What [`dispatch`] needs: how to tell notebook hosts apart, and their router.
#[derive(Clone)]
pub struct Dispatch {
    pub access: NotebookAccess,
    pub router: Router,
}

/// The outermost layer: a request whose Host is under the notebook domain goes to the
/// notebook router; everything else goes on to the portal.
pub async fn dispatch(State(to): State<Dispatch>, mut request: Request, next: Next) -> Response {
    let host = request
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .map(str::to_string)
        .or_else(|| request.uri().authority().map(|a| a.to_string()));
    match host.as_deref().and_then(|h| to.access.session_of_host(h)) {
        None => next.run(request).await,
        Some(session) => {
            request.extensions_mut().insert(HostSession(session));
            match to.router.oneshot(request).await {
                Ok(response) => response,
                Err(never) => match never {},
            }
        }
    }
}

fn host_session(request_session: &Option<HostSession>) -> Option<&str> {
    request_session.as_ref().and_then(|h| h.0.as_deref())
}

async fn launch(
    State(state): State<AppState>,
    axum::Extension(host): axum::Extension<HostSession>,
    Query(query): Query<HashMap<String, String>>,
    headers: HeaderMap,
) -> Response {
    let services = &state.services;
    let portal = services.notebooks.portal_url();
    let (Some(id), Some(ticket)) = (host.0.as_deref(), query.get("ticket")) else {
        return pages::link_expired(&portal);
    };
    let session = match services.store.gpu_session(id).await {
        Ok(Some(session)) => session,
        Ok(None) => return pages::link_expired(&portal),
        Err(e) => {
            tracing::warn!(error = %e, "notebook host: reading the session failed");
            return pages::unavailable(&portal, "The portal cannot read this session right now.");
        }
    };
    // The ticket opens only in the browser it was minted for: the one holding its nonce.
    let nonces = nonce_cookies(&headers, services.notebooks.nonce_cookie());
    let entry = match services.notebooks.redeem(ticket, &nonces, &session).await {
        Ok(Some(entry)) => entry,
        Ok(None) => {
            if nonces.is_empty() {
                tracing::info!(session = %session.id, "notebook host: a launch link came without its browser's nonce");
            }
            return pages::link_expired(&portal);
        }
        Err(e) => {
            tracing::warn!(error = %e, "notebook host: redeeming a ticket failed");
            return pages::unavailable(&portal, "The portal cannot open this notebook right now.");
        }
    };
    let cookie = cookie_header(
        services.notebooks.grant_cookie(),
        &entry.grant,
        entry.max_age_secs,
        services.config.server.secure_cookies,
    );
    let mut response = (StatusCode::SEE_OTHER, [(header::LOCATION, entry.path)]).into_response();
    let headers = response.headers_mut();
    if let Ok(value) = HeaderValue::from_str(&cookie) {
        headers.insert(header::SET_COOKIE, value);
    }
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    response
}

async fn forward(State(state): State<AppState>, request: Request) -> Response {
    let services = &state.services;
    let portal = services.notebooks.portal_url();
    let host = request.extensions().get::<HostSession>().cloned();
    let Some(host_id) = host_session(&host).map(str::to_string) else {
        return pages::not_found(&portal);
    };
    let grants = grant_cookies(request.headers(), services.notebooks.grant_cookie());
    let path = request.uri().path();
    let changes = services.store.access_changes();
    let remembered = state
        .admitted
        .get(&host_id, &grants, changes)
        .filter(|s| super::owner_and_session(path) == Some((s.username.as_str(), s.id.as_str())));
    let admitted = remembered.is_some();
    let session = match remembered {
        Some(session) => session,
        None => match session_at(&state, path).await {
            Ok(session) if session.id == host_id => Arc::new(session),
            Ok(_) => return pages::not_found(&portal),
            Err(page) => return page,
        },
    };
    let origin = services.notebooks.origin_of(&session.id);
    let writes = !matches!(*request.method(), Method::GET | Method::HEAD | Method::OPTIONS);
    let upgrade = super::forward::is_upgrade(request.headers());
    if (writes || upgrade) && !from_own_origin(request.headers(), &origin)
    {
        tracing::warn!(session = %session.id, path = %request.uri().path(), "notebook host refused a request from another origin");
        return pages::refused(&portal, "This request came from another site.");
    }
    if !admitted {
        match services.notebooks.admits(&grants, &session).await {
            Ok(Some(index)) => state.admitted.remember(&grants[index], &session, changes),
            Ok(None) if request.method() == Method::GET && !upgrade => {
                // No grant for this host (yet): this browser gets its nonce, and the portal's
                // door, once it has checked the login, a ticket bound to it.
                let target = request.uri().path_and_query().map(|p| p.as_str()).unwrap_or(PREFIX);
                return begin(&state, request.headers(), &portal, target);
            }
            Ok(None) => return pages::not_found(&portal),
            Err(e) => {
                tracing::warn!(error = %e, "notebook host: checking a grant failed");
                return pages::unavailable(&portal, "The portal cannot check this request right now.");
            }
        }
    }
    let path = request.uri().path().to_string();
    let by_owner = || async {
        services.notebooks.held_by_owner(&grants, &session).await.unwrap_or_else(|e| {
            tracing::warn!(error = %e, "notebook host: checking whose grant this is failed");
            false
        })
    };
    if let Some(rest) = path.strip_prefix(&session.base_url()).and_then(|r| r.strip_prefix("_slicehub/")) {
        let owner = request.method() == Method::POST && by_owner().await;
        return super::idle_banner::answer(&state, &session, rest, request.method(), owner).await;
    }
    match (session.state, session.notebook_address.as_deref()) {
        (SessionState::Ready, Some(address)) if !session.token.is_empty() => {
            if writes && counts_as_activity(&path, &session.base_url()) && by_owner().await {
                services.sessions.note_activity(&session.id);
            }
            let lab_page = request.method() == Method::GET && super::idle_banner::is_lab_page(&path, &session);
            let mut request = request;
            if lab_page {
                // The page comes back unencoded, so the warning's script can be added.
                request.headers_mut().remove(header::ACCEPT_ENCODING);
            }
            let scheme = if portal.starts_with("https://") { "https" } else { "http" };
            let began = std::time::Instant::now();
            let proxy_cookies = [services.notebooks.grant_cookie(), services.notebooks.nonce_cookie()];
            let answer = state
                .upstream
                .forward(request, &session.id, address, &session.token, &proxy_cookies, scheme)
                .await;
            let answer = if lab_page { super::idle_banner::inject(answer, &session).await } else { answer };
            let kind = if upgrade { "websocket" } else { "http" };
            slicehub_core::metrics::METRICS.proxied(kind, began.elapsed().as_secs_f64());
            answer
        }
        (s, _) if s.is_final() => pages::ended(&portal, &session),
        _ => pages::starting(&portal, &session),
    }
}

/// Sends a browser without a grant to the portal's door with its launch nonce, set here
/// as a cookie for this host only: one it already holds (another tab on its way in) is
/// kept, so that tabs opening at once do not undo each other.
fn begin(state: &AppState, headers: &HeaderMap, portal: &str, target: &str) -> Response {
    let notebooks = &state.services.notebooks;
    let name = notebooks.nonce_cookie();
    let held = nonce_cookies(headers, name).into_iter().next();
    let nonce = match held.map(Ok).unwrap_or_else(new_nonce) {
        Ok(nonce) => nonce,
        Err(e) => {
            tracing::warn!(error = %e, "notebook host: no launch nonce");
            return pages::unavailable(portal, "The portal cannot open this notebook right now.");
        }
    };
    let cookie = cookie_header(name, &nonce, NONCE_SECS, state.services.config.server.secure_cookies);
    let mut response = see_other(format!("{portal}{}", with_state(target, &nonce)));
    if let Ok(value) = HeaderValue::from_str(&cookie) {
        response.headers_mut().insert(header::SET_COOKIE, value);
    }
    response
}

/// The well-formed values of the launch nonce cookie the browser sent (a few at most).
fn nonce_cookies(headers: &HeaderMap, name: &str) -> Vec<String> {
    let mut values = crate::http::cookies::values(headers, name);
    values.retain(|v| is_nonce(v));
    values.truncate(4);
    values
}

/// A change through JupyterLab counts as the student's activity, except the layout that
/// JupyterLab itself saves every few seconds while a tab is open (its workspace).
fn counts_as_activity(path: &str, base_url: &str) -> bool {
    !path.strip_prefix(base_url).is_some_and(|rest| rest.starts_with("lab/api/workspaces"))
}

/// A request that changes something, or opens a WebSocket, must come from the notebook's
/// own page: the browser's Origin (which script cannot forge) equals the host's origin,
/// and Sec-Fetch-Site, when sent, says same-origin. Other notebooks of the same site are
/// other origins.
fn from_own_origin(headers: &HeaderMap, origin: &str) -> bool {
    let text = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    if let Some(site) = text("sec-fetch-site") {
        if !matches!(site, "same-origin" | "none") {
            return false;
        }
    }
    match text(header::ORIGIN.as_str()) {
        Some(claimed) => claimed.eq_ignore_ascii_case(origin),
        None => true,
    }
}

/// Every value of the grant cookie the request carries: a sibling host may have tossed in
/// one of its own (with a Domain attribute), so each is checked, not just the first.
fn grant_cookies(headers: &HeaderMap, name: &str) -> Vec<String> {
    let mut values = crate::http::cookies::values(headers, name);
    values.truncate(8);
    values
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(*k, HeaderValue::from_static(v));
        }
        h
    }

    #[test]
    fn only_the_notebooks_own_origin_may_write() {
        let own = "http://s-a.nb.localhost:3000";
        assert!(from_own_origin(&headers(&[("origin", "http://s-a.nb.localhost:3000")]), own));
        assert!(!from_own_origin(&headers(&[("origin", "http://s-b.nb.localhost:3000")]), own));
        assert!(!from_own_origin(&headers(&[("origin", "http://127.0.0.1:3000")]), own));
        assert!(!from_own_origin(&headers(&[("origin", "null")]), own));
        assert!(!from_own_origin(
            &headers(&[("sec-fetch-site", "same-site"), ("origin", "http://s-a.nb.localhost:3000")]),
            own
        ));
        assert!(from_own_origin(&headers(&[]), own), "no browser: no cookie of the browser's");
    }

    #[test]
    fn an_open_tab_saving_its_layout_is_not_activity() {
        let base = "/user/ivy/s-1/";
        assert!(!counts_as_activity("/user/ivy/s-1/lab/api/workspaces/default", base));
        assert!(counts_as_activity("/user/ivy/s-1/api/contents/work.ipynb", base));
        assert!(counts_as_activity("/user/ivy/s-1/api/kernels", base));
    }

    #[test]
    fn every_grant_cookie_value_is_considered() {
        let h = headers(&[("cookie", "a=1; slicehub_notebook=tossed"), ("cookie", "slicehub_notebook=mine")]);
        assert_eq!(grant_cookies(&h, "slicehub_notebook"), ["tossed", "mine"]);
        assert!(grant_cookies(&headers(&[("cookie", "slicehub_notebook=")]), "slicehub_notebook").is_empty());
    }
}
