//! `GET /api/sessions/events`: the caller's session state changes as server-sent events,
//! each after it is in the database. The dashboard refreshes on every one.

use std::convert::Infallible;
use std::time::Duration;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::Extension;
use futures_util::stream;
use slicehub_app::api::ssr::{Action, Caller, RequestAuth};
use slicehub_core::auth::authorize;
use tokio::sync::broadcast::error::RecvError;

use crate::serve::AppState;

pub const PATH: &str = "/api/sessions/events";

pub async fn events(State(state): State<AppState>, Extension(auth): Extension<RequestAuth>) -> Response {
    if let Err(denied) = authorize(&auth.caller, &Action::ListOwnSessions) {
        return (StatusCode::UNAUTHORIZED, denied.to_string()).into_response();
    }
    let Caller::User { id: user_id, .. } = auth.caller else {
        return StatusCode::UNAUTHORIZED.into_response();
    };
    let receiver = state.services.sessions.subscribe();
    let events = stream::unfold(receiver, move |mut receiver| async move {
        loop {
            match receiver.recv().await {
                Ok(event) if event.user_id == user_id => {
                    let data = serde_json::json!({
                        "session": event.session_id,
                        "state": event.state.as_str(),
                        "detail": event.detail,
                        "at_ms": event.at_ms,
                    });
                    let sse = Event::default().data(data.to_string());
                    return Some((Ok::<_, Infallible>(sse), receiver));
                }
                Ok(_) => continue,
                // Missed some: tell the page to re-read everything.
                Err(RecvError::Lagged(_)) => {
                    let sse = Event::default().data("{\"lagged\":true}");
                    return Some((Ok(sse), receiver));
                }
                Err(RecvError::Closed) => return None,
            }
        }
    });
    Sse::new(events)
        .keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
        .into_response()
}
