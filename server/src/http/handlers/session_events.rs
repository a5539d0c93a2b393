//! `GET /api/sessions/events`: the caller's session state changes as server-sent events,
//! each after it is in the database. The dashboard refreshes on every one.

use std::convert::Infallible;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::Extension;
use futures_util::{stream, StreamExt};
use slicehub_app::api::ssr::{Action, Caller, RequestAuth};
use slicehub_core::auth::authorize;
use tokio::sync::broadcast::error::RecvError;

use crate::serve::AppState;

pub const PATH: &str = "/api/sessions/events";

/// How many event streams are open now.
#[derive(Clone, Default)]
pub struct OpenStreams(Arc<AtomicUsize>);

impl OpenStreams {
    pub fn open(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }
}

/// Counts one stream while it lives.
struct Counted(Arc<AtomicUsize>);

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

pub async fn events(State(state): State<AppState>, Extension(auth): Extension<RequestAuth>) -> Response {
    if let Err(denied) = authorize(&auth.caller, &Action::ListOwnSessions) {
        return (StatusCode::UNAUTHORIZED, denied.to_string()).into_response();
    }
    let Caller::User { id: user_id, .. } = auth.caller else {
        return StatusCode::UNAUTHORIZED.into_response();
    };
    let receiver = state.services.sessions.subscribe();
    state.event_streams.0.fetch_add(1, Ordering::SeqCst);
    let counted = Counted(state.event_streams.0.clone());
    let events = stream::unfold((receiver, counted), move |(mut receiver, counted)| async move {
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
                    return Some((Ok::<_, Infallible>(sse), (receiver, counted)));
                }
                Ok(_) => continue,
                // Missed some: tell the page to re-read everything.
                Err(RecvError::Lagged(_)) => {
                    let sse = Event::default().data("{\"lagged\":true}");
                    return Some((Ok(sse), (receiver, counted)));
                }
                Err(RecvError::Closed) => return None,
            }
        }
    });
    let events = events.take_until(state.shutdown.clone().cancelled_owned());
    Sse::new(events)
        .keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
        .into_response()
}
