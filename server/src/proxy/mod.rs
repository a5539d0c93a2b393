//! `/user/NAME/SESSION/…`: the authenticated way into a session's JupyterLab. Only the
//! session's owner passes (admins too, audited); everyone else gets 404 so a session's
//! existence does not leak. The portal adds the session's token itself, strips its own
//! cookie, and streams bodies and WebSocket upgrades both ways.

mod forward;
mod pages;

use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};
use slicehub_app::api::ssr::{Caller, RequestAuth};
use slicehub_core::sessions::{GpuSession, SessionState};

use crate::serve::AppState;

pub use forward::Upstream;

pub const PREFIX: &str = "/user/";

/// `/user/alice/s-abc/lab?x` → (`alice`, `s-abc`)
fn owner_and_session(path: &str) -> Option<(&str, &str)> {
    let rest = path.strip_prefix(PREFIX)?;
    let mut parts = rest.splitn(3, '/');
    let name = parts.next().filter(|n| !n.is_empty())?;
    let session = parts.next().filter(|s| !s.is_empty())?;
    Some((name, session))
}

pub async fn handle(State(state): State<AppState>, request: Request) -> Response {
    let services = &state.services;
    let path = request.uri().path().to_string();
    let Some((name, id)) = owner_and_session(&path) else {
        return pages::not_found();
    };
    let caller = request
        .extensions()
        .get::<RequestAuth>()
        .map(|a| a.caller.clone())
        .unwrap_or(Caller::Anonymous);
    let session = match services.store.gpu_session(id).await {
        Ok(Some(s)) if s.username == name => s,
        Ok(_) => return pages::not_found(),
        Err(e) => {
            tracing::warn!(error = %e, "proxy: reading the session failed");
            return pages::unavailable("The portal cannot read this session right now.");
        }
    };
    let Caller::User { id: caller_id, username, is_admin, .. } = &caller else {
        return pages::not_found();
    };
    let owner = *caller_id == session.user_id;
    if !owner && !is_admin {
        return pages::not_found();
    }
    if !owner {
        let _ = services
            .store
            .audit(username, "session.proxy", &session.id, request.uri().path())
            .await;
    }
    match ready_port(&session) {
        Ok(port) => state.upstream.forward(request, port, &session.token).await,
        Err(page) => page,
    }
}

/// The port to forward to, or the page to answer instead.
fn ready_port(session: &GpuSession) -> Result<u16, Response> {
    match (session.state, session.host_port) {
        (SessionState::Ready, Some(port)) => Ok(port),
        (s, _) if s.is_final() => Err(pages::ended(session).into_response()),
        _ => Err(pages::starting(session).into_response()),
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
