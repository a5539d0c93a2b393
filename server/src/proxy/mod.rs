//! Notebooks, each on its own origin (`SESSION.NOTEBOOK_DOMAIN`, see
//! `slicehub_core::notebook_access`). On the portal's host, `/user/NAME/SESSION/…` is only
//! a door: for the owner (or a confirming administrator, when allowed) it mints a launch
//! ticket and redirects to the notebook host; everyone else gets 404, so a session's
//! existence does not leak. The notebook host (`notebook_host`) redeems the ticket and
//! forwards to JupyterLab (`forward`).

mod admitted;
mod forward;
mod idle_banner;
pub mod notebook_host;
mod pages;

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
    let Caller::User { id: caller_id, username, is_admin, .. } = &caller else {
        return pages::not_found("");
    };
    let owner = *caller_id == session.user_id;
    let admin_visit = !owner && *is_admin && services.config.notebooks_admin_access;
    if !owner && !admin_visit {
        return pages::not_found("");
    }
    if session.state.is_final() {
        return pages::ended("", &session);
    }
    let target = request
        .uri()
        .path_and_query()
        .map(|p| p.as_str().to_string())
        .filter(|t| t.starts_with(&session.base_url()))
        .unwrap_or_else(|| format!("{}lab", session.base_url()));
    if admin_visit {
        if request.method() != Method::POST {
            let origin = services.notebooks.origin_of(&session.id);
            return pages::confirm_admin_visit(&session, request.uri().path(), &origin);
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
    match services.notebooks.mint_ticket(&session, *caller_id, &target).await {
        Ok(ticket) => {
            let location = format!(
                "{}{LAUNCH_PATH}?ticket={ticket}",
                services.notebooks.origin_of(&session.id)
            );
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
        Err(e) => {
            tracing::warn!(error = %e, "could not mint a launch ticket");
            pages::unavailable("", "The portal cannot open this notebook right now.")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::owner_and_session;

    #[test]
    fn paths_name_the_owner_and_the_session() {
        assert_eq!(owner_and_session("/user/alice/s-1/lab"), Some(("alice", "s-1")));
        assert_eq!(owner_and_session("/user/alice/s-1/"), Some(("alice", "s-1")));
        assert_eq!(owner_and_session("/user/alice/s-1"), Some(("alice", "s-1")));
        assert_eq!(owner_and_session("/user/alice/"), None);
        assert_eq!(owner_and_session("/user//s-1/"), None);
    }
}
