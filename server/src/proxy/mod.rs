//! Notebooks, each on its own origin (`SESSION.NOTEBOOK_DOMAIN`, see
//! `slicehub_core::notebook_access`). On the portal's host, `/user/NAME/SESSION/…` is only
//! a door: for the owner (or a confirming administrator, when allowed) it mints a launch
//! ticket and redirects to the notebook host; everyone else gets 404, so a session's
//! existence does not leak. The notebook host (`notebook_host`) redeems the ticket and
//! forwards to JupyterLab (`forward`).
//!
//! The way in, for a browser without a grant for the notebook host:
//!
//! 1. `GET PORTAL/user/NAME/SESSION/lab`: the door checks the login and sends the browser
//!    to the same path on the notebook host (a browser with a grant is simply in);
//! 2. the notebook host finds no grant, sets the browser's launch nonce cookie and sends it
//!    back to `PORTAL/user/NAME/SESSION/lab?slicehub_state=NONCE`;
//! 3. the door checks the login again and mints a ticket bound to that nonce:
//!    `NOTEBOOK/_slicehub/launch?ticket=…`;
//! 4. the notebook host redeems it only with the nonce cookie: the grant cookie, and on to
//!    the path.
//!
//! A ticket link taken out of this (step 3's answer) and opened in another browser finds
//! no nonce cookie there, or another one, and opens nothing.

mod admitted;
mod forward;
mod idle_banner;
pub mod notebook_host;
pub mod pages;

use axum::extract::{Request, State};
use axum::http::{header, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use slicehub_app::api::ssr::{Caller, RequestAuth};
use slicehub_core::sessions::GpuSession;

use crate::serve::AppState;

pub use admitted::Admitted;
pub use forward::Upstream;

pub const PREFIX: &str = "/user/";
/// Where a notebook host redeems a launch ticket.
pub const LAUNCH_PATH: &str = "/_slicehub/launch";
/// The query parameter in which a notebook host hands the door its browser's nonce.
pub const STATE_PARAM: &str = "slicehub_state";

/// `/user/a/s-1/lab?x=1&slicehub_state=N` → (`/user/a/s-1/lab?x=1`, `Some(N)`): the
/// address without the nonce parameter(s), and the last well-formed nonce among them.
pub(super) fn take_state(path_and_query: &str) -> (String, Option<String>) {
    let Some((path, query)) = path_and_query.split_once('?') else {
        return (path_and_query.to_string(), None);
    };
    let mut state = None;
    let mut kept = Vec::new();
    for pair in query.split('&') {
        match pair.split_once('=') {
            Some((STATE_PARAM, value)) => {
                if slicehub_core::notebook_access::is_nonce(value) {
                    state = Some(value.to_string());
                }
            }
            _ if pair == STATE_PARAM => {}
            _ => kept.push(pair),
        }
    }
    match kept.is_empty() {
        true => (path.to_string(), state),
        false => (format!("{path}?{}", kept.join("&")), state),
    }
}

/// `target` with the nonce parameter added.
pub(super) fn with_state(target: &str, nonce: &str) -> String {
    let separator = if target.contains('?') { '&' } else { '?' };
    format!("{target}{separator}{STATE_PARAM}={nonce}")
}

/// A redirect that no cache keeps and whose address no next page learns.
pub(super) fn see_other(location: String) -> Response {
    (
        StatusCode::SEE_OTHER,
        [
            (header::LOCATION, location),
            (header::CACHE_CONTROL, "no-store".to_string()),
            (header::REFERRER_POLICY, "no-referrer".to_string()),
        ],
    )
        .into_response()
}

/// `/user/alice/s-abc/lab?x` → (`alice`, `s-abc`)
pub(super) fn owner_and_session(path: &str) -> Option<(&str, &str)> {
    let rest = path.strip_prefix(PREFIX)?;
    let mut parts = rest.splitn(3, '/');
    let name = parts.next().filter(|n| !n.is_empty())?;
    let session = parts.next().filter(|s| !s.is_empty())?;
    Some((name, session))
}

/// The session a `/user/NAME/SESSION/…` path names, if it exists under that name.
async fn session_at(state: &AppState, path: &str) -> Result<GpuSession, Response> {
    let Some((name, id)) = owner_and_session(path) else {
        return Err(pages::not_found(""));
    };
    match state.services.store.gpu_session(id).await {
        Ok(Some(s)) if s.username == name => Ok(s),
        Ok(_) => Err(pages::not_found("")),
        Err(e) => {
            tracing::warn!(error = %e, "proxy: reading the session failed");
            Err(pages::unavailable("", "The portal cannot read this session right now."))
        }
    }
}

/// `/user/…` on the portal's own host.
pub async fn door(State(state): State<AppState>, request: Request) -> Response {
    let services = &state.services;
    let session = match session_at(&state, request.uri().path()).await {
        Ok(session) => session,
        Err(page) => return page,
    };
    let caller = request
        .extensions()
        .get::<RequestAuth>()
        .map(|a| a.caller.clone())
        .unwrap_or(Caller::Anonymous);
    let Caller::User { id: caller_id, username, is_admin, must_change_password, memberships } = &caller else {
        return pages::not_found("");
    };
    // A one-time password opens nothing but the account page; a student dropped from the
    // course no longer owns its notebooks.
    if *must_change_password {
        return (StatusCode::SEE_OTHER, [(header::LOCATION, "/account".to_string())]).into_response();
    }
    let enrolled = memberships.iter().any(|(course, _)| *course == session.course_id);
    // Administrators may start sessions in any course (and are members of none).
    let owner = *caller_id == session.user_id && (enrolled || *is_admin);
    let admin_visit = !owner && *is_admin && services.config.notebooks.admin_access;
    if !owner && !admin_visit {
        return pages::not_found("");
    }
    if session.state.is_final() {
        return pages::ended("", &session);
    }
    let (target, state) = take_state(request.uri().path_and_query().map(|p| p.as_str()).unwrap_or_default());
    let target = Some(target)
        .filter(|t| t.starts_with(&session.base_url()))
        .unwrap_or_else(|| format!("{}lab", session.base_url()));
    let origin = services.notebooks.origin_of(&session.id);
    // No nonce yet: the notebook host gives this browser one and sends it back here (or
    // lets it straight in, when it already holds a grant there).
    let Some(state) = state else {
        return see_other(format!("{origin}{target}"));
    };
    if admin_visit {
        if request.method() != Method::POST {
            return pages::confirm_admin_visit(&session, &with_state(&target, &state), &origin);
        }
        if let Err(e) = services
            .store
            .audit(username, "session.admin_open", &session.id, &session.username)
            .await
        {
            tracing::warn!(error = %e, "could not audit an administrator's notebook visit");
            return pages::unavailable("", "The portal cannot record this visit right now.");
        }
    }
    match services.notebooks.mint_ticket(&session, *caller_id, &target, &state).await {
        Ok(ticket) => see_other(format!("{origin}{LAUNCH_PATH}?ticket={ticket}")),
        Err(e) => {
            tracing::warn!(error = %e, "could not mint a launch ticket");
            pages::unavailable("", "The portal cannot open this notebook right now.")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{owner_and_session, take_state, with_state};

    #[test]
    fn the_nonce_comes_off_the_address_before_it_becomes_the_landing_path() {
        let n = "A".repeat(43);
        let m = "b".repeat(43);
        assert_eq!(take_state(&format!("/user/a/s-1/lab?slicehub_state={n}")), ("/user/a/s-1/lab".into(), Some(n.clone())));
        assert_eq!(
            take_state(&format!("/user/a/s-1/api/status?token=guess&slicehub_state={n}")),
            ("/user/a/s-1/api/status?token=guess".into(), Some(n.clone()))
        );
        assert_eq!(
            take_state(&format!("/user/a/s-1/lab?slicehub_state={m}&x=1&slicehub_state={n}")),
            ("/user/a/s-1/lab?x=1".into(), Some(n.clone())),
            "the last one, which the notebook host added"
        );
        assert_eq!(take_state("/user/a/s-1/lab?slicehub_state=short&slicehub_state"), ("/user/a/s-1/lab".into(), None));
        assert_eq!(take_state("/user/a/s-1/lab?reset"), ("/user/a/s-1/lab?reset".into(), None));
        assert_eq!(take_state("/user/a/s-1/lab"), ("/user/a/s-1/lab".into(), None));
        assert_eq!(with_state("/user/a/s-1/lab", &n), format!("/user/a/s-1/lab?slicehub_state={n}"));
        assert_eq!(with_state("/user/a/s-1/lab?reset", &n), format!("/user/a/s-1/lab?reset&slicehub_state={n}"));
        let (back, state) = take_state(&with_state("/user/a/s-1/tree?x=%20", &n));
        assert_eq!((back.as_str(), state), ("/user/a/s-1/tree?x=%20", Some(n)));
    }

    #[test]
    fn paths_name_the_owner_and_the_session() {
        assert_eq!(owner_and_session("/user/alice/s-1/lab"), Some(("alice", "s-1")));
        assert_eq!(owner_and_session("/user/alice/s-1/"), Some(("alice", "s-1")));
        assert_eq!(owner_and_session("/user/alice/s-1"), Some(("alice", "s-1")));
        assert_eq!(owner_and_session("/user/alice/"), None);
        assert_eq!(owner_and_session("/user//s-1/"), None);
    }
}
