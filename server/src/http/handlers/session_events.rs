//! `GET /api/sessions/events`: the caller's session state changes as server-sent events,
//! each after it is in the database, with the caller's sessions as their page shows them
//! then: the page follows the stream without asking again.

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
use slicehub_app::api::sessions::sessions_of;
use slicehub_app::api::ssr::{Action, Caller, RequestAuth};
use slicehub_core::auth::authorize;
use tokio::sync::broadcast::error::RecvError;

use crate::serve::AppState;

pub const PATH: &str = "/api/sessions/events";

/// An event that carries nothing but "read your sessions again".
const READ_AGAIN: &str = "{\"lagged\":true}";

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

pub async fn events(
    State(state): State<AppState>,
    Extension(auth): Extension<RequestAuth>,
) -> Response {
    if let Err(denied) = authorize(&auth.caller, &Action::ListOwnSessions) {
        return (StatusCode::UNAUTHORIZED, denied.to_string()).into_response();
    }
    let Caller::User {
        id: user_id,
        is_admin,
        ..
    } = auth.caller
    else {
        return StatusCode::UNAUTHORIZED.into_response();
    };
    let receiver = state.services.sessions.subscribe();
    state.event_streams.0.fetch_add(1, Ordering::SeqCst);
    let counted = Counted(state.event_streams.0.clone());
    let (services, reads) = (state.services.clone(), state.session_reads.clone());
    // Who may read what was decided when the stream opened: once anyone's access changes
    // (a sign-out, a role, a disabled account), the stream ends and the page reads again
    // and reconnects, each asked as the caller is then.
    let access = services.store.access_changes();
    let events = stream::unfold((receiver, counted, false), move |(mut receiver, counted, over)| {
        let (services, reads) = (services.clone(), reads.clone());
        async move {
            if over {
                return None;
            }
            loop {
                match receiver.recv().await {
                    Ok(_) if services.store.access_changes() != access => {
                        let sse = Event::default().data(READ_AGAIN);
                        return Some((Ok(sse), (receiver, counted, true)));
                    }
                    Ok(event) if event.user_id == user_id => {
                        let mut data = serde_json::json!({
                            "session": event.session_id,
                            "state": event.state.as_str(),
                            "at_ms": event.at_ms,
                        });
                        // A step's detail names devices and containers: an administrator's.
                        if is_admin {
                            data["detail"] = serde_json::json!(event.detail);
                        }
                        // Without the list the page reads it itself.
                        match sessions_of(&services, Some(&reads), user_id, is_admin).await {
                            Ok(sessions) => data["sessions"] = serde_json::json!(sessions),
                            Err(e) => {
                                tracing::warn!(error = %e, "the sessions sent with an event could not be read")
                            }
                        }
                        let sse = Event::default().data(data.to_string());
                        return Some((Ok::<_, Infallible>(sse), (receiver, counted, false)));
                    }
                    Ok(_) => continue,
                    // Missed some: tell the page to re-read everything.
                    Err(RecvError::Lagged(_)) => {
                        let sse = Event::default().data(READ_AGAIN);
                        return Some((Ok(sse), (receiver, counted, false)));
                    }
                    Err(RecvError::Closed) => return None,
                }
            }
        }
    });
    let events = events.take_until(state.shutdown.clone().cancelled_owned());
    Sse::new(events)
        .keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
        .into_response()
}
