//! A person's notebook as JupyterHub's "server": start it (`user_options` name the course,
//! profile and image; what is left out is the course's first choice), stop it, and follow
//! its start as server-sent events.

use std::convert::Infallible;
use std::time::Duration;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::Json;
use futures_util::stream;
use serde::Deserialize;
use serde_json::{json, Value};
use slicehub_app::api::sessions;
use slicehub_core::auth::{Caller, Scope};
use slicehub_core::sessions::{GpuSession, SessionState};
use slicehub_core::store::User;

use super::users::{only_own, visible};
use super::HubCaller;
use crate::api_v1::answer::{ApiCaller, ApiError};
use crate::serve::AppState;

/// How long a progress stream follows a start.
const FOLLOW_AT_MOST: Duration = Duration::from_secs(600);

#[derive(Debug, Default, Deserialize)]
pub struct UserOptions {
    course: Option<String>,
    profile: Option<String>,
    image: Option<String>,
}

/// JupyterHub takes the body as the options, or `{"user_options": {...}}`; no body (of
/// whatever type), `null` or `{}` is no options.
fn options_of(body: &[u8]) -> Result<UserOptions, ApiError> {
    let mut body: Value = match body.iter().all(u8::is_ascii_whitespace) {
        true => Value::Null,
        false => serde_json::from_slice(body)
            .map_err(|_| ApiError::new(StatusCode::BAD_REQUEST, "The body is not JSON."))?,
    };
    if let Some(nested) = body.get_mut("user_options") {
        body = nested.take();
    }
    if body.is_null() {
        return Ok(UserOptions::default());
    }
    serde_json::from_value(body).map_err(|_| {
        ApiError::new(StatusCode::BAD_REQUEST, "user_options are {\"course\": \"CODE\", \"profile\": \"…\", \"image\": \"…\"}, each text.")
    })
}

async fn live_notebook(state: &AppState, caller: &Caller, user: &User) -> Result<Option<GpuSession>, ApiError> {
    let live = super::model::live_sessions(&state.services).await?;
    Ok(super::model::live_notebook(&live, caller, user))
}


pub async fn start(
    State(state): State<AppState>,
    HubCaller(mut caller): HubCaller,
    Path(name): Path<String>,
    body: axum::body::Bytes,
) -> Result<Response, ApiError> {
    caller.needs(Scope::Sessions)?;
    let user = visible(&state, &caller.auth.caller, &name).await?;
    only_own(&caller.auth.caller, &user, "A notebook is started by its own person only.")?;
    if live_notebook(&state, &caller.auth.caller, &user).await?.is_some() {
        return Err(ApiError::new(StatusCode::BAD_REQUEST, format!("{} is already running.", user.username)));
    }
    let options = options_of(&body)?;
    let (course, profile, image) = chosen(&state, &caller, options).await?;
    let Json(view) = caller.run(&state, sessions::start_session(course, profile, image, None)).await?;
    let status = if view.state == SessionState::Ready { StatusCode::CREATED } else { StatusCode::ACCEPTED };
    Ok((status, Json(json!({ "id": view.id, "state": view.state.as_str() }))).into_response())
}

/// The course, profile and image to start with: as named, else the one course the person
/// belongs to, the course's first image, and its first profile.
async fn chosen(state: &AppState, caller: &ApiCaller, options: UserOptions) -> Result<(slicehub_core::CourseId, String, String), ApiError> {
    let Json(courses) = caller.run(state, sessions::launch_options()).await?;
    let course = match options.course.as_deref() {
        Some(code) => courses.iter().find(|c| c.code.eq_ignore_ascii_case(code)),
        None if courses.len() == 1 => courses.first(),
        None => {
            return Err(ApiError::new(StatusCode::BAD_REQUEST, "Name the course in user_options: {\"course\": \"CODE\"}."));
        }
    }
    .ok_or_else(|| ApiError::new(StatusCode::NOT_FOUND, "There is no such course of yours."))?;
    let profile = options
        .profile
        .or_else(|| course.profiles.first().map(|p| p.name.clone()))
        .ok_or_else(|| ApiError::new(StatusCode::BAD_REQUEST, "The course allows no profile on this portal."))?;
    let image = options
        .image
        .or_else(|| course.images.first().cloned())
        .ok_or_else(|| ApiError::new(StatusCode::BAD_REQUEST, "The course allows no image."))?;
    Ok((course.course_id, profile, image))
}

pub async fn stop(State(state): State<AppState>, HubCaller(mut caller): HubCaller, Path(name): Path<String>) -> Result<StatusCode, ApiError> {
    caller.needs(Scope::Sessions)?;
    let user = visible(&state, &caller.auth.caller, &name).await?;
    let Some(session) = live_notebook(&state, &caller.auth.caller, &user).await? else {
        return Ok(StatusCode::NO_CONTENT);
    };
    let Json(()) = caller.run(&state, sessions::stop_session(session.id, None)).await?;
    Ok(StatusCode::ACCEPTED)
}

fn progress_of(session: &GpuSession) -> (Value, bool) {
    let over = match session.state {
        SessionState::Ready => {
            return (
                json!({ "progress": 100, "ready": true, "message": "Server ready", "html_message": "Server ready", "url": format!("{}lab", session.base_url()) }),
                true,
            )
        }
        state if state.is_final() => {
            return (json!({ "progress": 100, "failed": true, "message": format!("Spawn failed: {}", session.reason) }), true)
        }
        SessionState::Queued => (10, "Waiting for a free slice"),
        _ => (50, "Starting the container"),
    };
    (json!({ "progress": over.0, "message": over.1 }), false)
}

/// The start of `name`'s notebook as JupyterHub's progress events, until it is ready or
/// fails.
pub async fn progress(State(state): State<AppState>, HubCaller(mut caller): HubCaller, Path(name): Path<String>) -> Result<Response, ApiError> {
    caller.needs(Scope::Read)?;
    let user = visible(&state, &caller.auth.caller, &name).await?;
    let Some(session) = live_notebook(&state, &caller.auth.caller, &user).await? else {
        return Err(ApiError::new(StatusCode::NOT_FOUND, format!("{} has no server starting or running.", user.username)));
    };
    let (store, shutdown, id) = (state.services.store.clone(), state.shutdown.clone(), session.id.clone());
    // A revoke, a disabled account or a role change ends the stream: the caller is asked
    // again when they reconnect.
    let access = store.access_changes();
    let until = tokio::time::Instant::now() + FOLLOW_AT_MOST;
    let events = stream::unfold(false, move |over| {
        let (store, shutdown, id) = (store.clone(), shutdown.clone(), id.clone());
        async move {
            let changed = store.access_changes() != access;
            if over || changed || tokio::time::Instant::now() >= until || shutdown.is_cancelled() {
                return None;
            }
            let (data, done) = match store.gpu_session(&id).await {
                Ok(Some(session)) => progress_of(&session),
                _ => (json!({ "progress": 100, "failed": true, "message": "The session cannot be read now." }), true),
            };
            if !done {
                tokio::select! {
                    () = tokio::time::sleep(Duration::from_secs(1)) => {}
                    () = shutdown.cancelled() => {}
                }
            }
            Some((Ok::<_, Infallible>(Event::default().data(data.to_string())), done))
        }
    });
    let Caller::User { id: person, .. } = caller.auth.caller else {
        return Err(ApiError::new(StatusCode::FORBIDDEN, "Send a personal access token."));
    };
    state.api_streams.counted(person, Sse::new(events).keep_alive(KeepAlive::default()).into_response())
}
