//! GPU sessions: claim, list, follow, keep, stop, logs.

use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::{Deserialize, Serialize};
use slicehub_app::api::sessions as pages;
use slicehub_app::error::AppError;
use slicehub_app::views::{ActivityPoint, LaunchCourse, SessionView};
use slicehub_core::auth::{authorize, Action, Caller, Scope};
use utoipa::{IntoParams, ToSchema};

use super::answer::{done, Answer, ApiCaller, ApiError};
use crate::serve::AppState;

/// A new session: a notebook, or with `command` a training job.
#[derive(Debug, Deserialize, ToSchema)]
pub struct NewSession {
    /// The course's code, e.g. `CS-101`.
    course: String,
    /// A profile the course allows, e.g. `1g.10gb`.
    profile: String,
    /// An image the course allows.
    image: String,
    /// A command line to run as a job instead of JupyterLab.
    #[serde(default)]
    command: Option<String>,
}

/// One page of ended sessions, newest first.
#[derive(Debug, Serialize, ToSchema)]
pub struct SessionPage {
    items: Vec<SessionView>,
    /// Pass as `cursor` for the next (older) page; absent on the last.
    next_cursor: Option<String>,
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct PageQuery {
    /// From `next_cursor` of the page before; absent for the newest.
    cursor: Option<String>,
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct StopQuery {
    /// Why, for the audit log and the owner.
    reason: Option<String>,
}

/// Your sessions (an administrator's or instructor's own), newest first: queued, starting,
/// running and the 50 most recent ended ones, each with its steps, queue place and
/// "at the latest" estimate.
#[utoipa::path(get, path = "/sessions", tag = "sessions", security(("token" = ["read"])),
    responses((status = 200, body = Vec<SessionView>), (status = "4XX", body = AppError)))]
pub async fn list(State(state): State<AppState>, mut caller: ApiCaller) -> Answer<Vec<SessionView>> {
    caller.needs(Scope::Read)?;
    caller.run(&state, pages::my_sessions()).await
}

/// Ended and failed sessions, newest first, a page at a time. A session that ends while
/// you page moves the pages by one: a session may be listed twice, never left out.
#[utoipa::path(get, path = "/sessions/history", tag = "sessions", security(("token" = ["read"])), params(PageQuery),
    responses((status = 200, body = SessionPage), (status = "4XX", body = AppError)))]
pub async fn history(State(state): State<AppState>, mut caller: ApiCaller, Query(q): Query<PageQuery>) -> Answer<SessionPage> {
    caller.needs(Scope::Read)?;
    let page = match q.cursor.as_deref().map(str::parse::<u32>) {
        None => 0,
        Some(Ok(page)) => page,
        Some(Err(_)) => return Err(ApiError::new(StatusCode::BAD_REQUEST, "The cursor is not one this API gave.")),
    };
    let Json(found) = caller.run(&state, pages::session_history(page)).await?;
    // The pages answer the last page for one past the end; the API answers nothing there.
    if found.page != page {
        return Ok(Json(SessionPage { items: Vec::new(), next_cursor: None }));
    }
    let next = (found.page + 1 < found.pages).then(|| (page + 1).to_string());
    Ok(Json(SessionPage { items: found.sessions, next_cursor: next }))
}

/// One of your own sessions.
#[utoipa::path(get, path = "/sessions/{id}", tag = "sessions", security(("token" = ["read"])),
    params(("id" = String, Path, description = "The session's id, e.g. `s-…`")),
    responses((status = 200, body = SessionView), (status = "4XX", body = AppError)))]
pub async fn one(State(state): State<AppState>, mut caller: ApiCaller, Path(id): Path<String>) -> Answer<SessionView> {
    caller.needs(Scope::Read)?;
    let Json(mine) = caller.run(&state, pages::my_sessions()).await?;
    mine.into_iter()
        .find(|s| s.id == id)
        .map(Json)
        .ok_or_else(|| ApiError::new(StatusCode::NOT_FOUND, "You have no such session."))
}

/// Claims a slice in a course and starts the notebook or job: queued when none is free.
#[utoipa::path(post, path = "/sessions", tag = "sessions", security(("token" = ["sessions"])), request_body = NewSession,
    responses((status = 201, body = SessionView), (status = "4XX", body = AppError)))]
pub async fn start(State(state): State<AppState>, mut caller: ApiCaller, Json(new): Json<NewSession>) -> Result<Response, ApiError> {
    caller.needs(Scope::Sessions)?;
    let course = launchable_course(&state, &caller.auth.caller, &new.course).await?;
    let Json(view) = caller
        .run(&state, pages::start_session(course, new.profile, new.image, new.command))
        .await?;
    Ok((StatusCode::CREATED, Json(view)).into_response())
}

/// The course a caller names by code, when they may launch in it; otherwise "no such
/// course", as the pages answer, so codes cannot be tried out.
async fn launchable_course(state: &AppState, caller: &Caller, code: &str) -> Result<slicehub_core::CourseId, ApiError> {
    let missing = || ApiError::new(StatusCode::NOT_FOUND, format!("There is no course {}.", slicehub_core::auth::validate::excerpt(code)));
    if !slicehub_core::auth::validate::plausible_key(code) {
        return Err(missing());
    }
    match state.services.store.course_by_code(code).await? {
        Some(course) if authorize(caller, &Action::LaunchIn(course.id)).is_ok() => Ok(course.id),
        _ => Err(missing()),
    }
}

/// Stops a session (yours, or as its course's instructor or an administrator).
#[utoipa::path(delete, path = "/sessions/{id}", tag = "sessions", security(("token" = ["sessions"])),
    params(("id" = String, Path), StopQuery),
    responses((status = 204, description = "Stopping"), (status = "4XX", body = AppError)))]
pub async fn stop(State(state): State<AppState>, mut caller: ApiCaller, Path(id): Path<String>, Query(q): Query<StopQuery>) -> Result<StatusCode, ApiError> {
    caller.needs(Scope::Sessions)?;
    done(caller.run(&state, pages::stop_session(id, q.reason)).await)
}

/// Asks for more time before an idle session is stopped.
#[utoipa::path(post, path = "/sessions/{id}/keep", tag = "sessions", security(("token" = ["sessions"])),
    params(("id" = String, Path)),
    responses((status = 204, description = "Kept"), (status = "4XX", body = AppError)))]
pub async fn keep(State(state): State<AppState>, mut caller: ApiCaller, Path(id): Path<String>) -> Result<StatusCode, ApiError> {
    caller.needs(Scope::Sessions)?;
    done(caller.run(&state, pages::keep_session_running(id)).await)
}

/// The container's output so far (its last lines).
#[utoipa::path(get, path = "/sessions/{id}/logs", tag = "sessions", security(("token" = ["read"])),
    params(("id" = String, Path)),
    responses((status = 200, content_type = "text/plain", body = String), (status = "4XX", body = AppError)))]
pub async fn logs(State(state): State<AppState>, mut caller: ApiCaller, Path(id): Path<String>) -> Result<Response, ApiError> {
    caller.needs(Scope::Read)?;
    let Json(text) = caller.run(&state, pages::session_logs(id)).await?;
    Ok(([(axum::http::header::CONTENT_TYPE, "text/plain; charset=utf-8")], text).into_response())
}

/// The slice's recent activity, as the sessions page charts it.
#[utoipa::path(get, path = "/sessions/{id}/activity", tag = "sessions", security(("token" = ["read"])),
    params(("id" = String, Path)),
    responses((status = 200, body = Vec<ActivityPoint>), (status = "4XX", body = AppError)))]
pub async fn activity(State(state): State<AppState>, mut caller: ApiCaller, Path(id): Path<String>) -> Answer<Vec<ActivityPoint>> {
    caller.needs(Scope::Read)?;
    caller.run(&state, pages::slice_activity(id)).await
}

/// Your sessions as server-sent events: every `sessions` event is the whole list again,
/// as `GET /sessions` answers it, sent when any of them changes (queue place, start,
/// stop).
#[utoipa::path(get, path = "/sessions/events", tag = "sessions", security(("token" = ["read"])),
    responses((status = 200, content_type = "text/event-stream", body = String), (status = "4XX", body = AppError)))]
pub async fn events(state: State<AppState>, mut caller: ApiCaller) -> Result<Response, ApiError> {
    caller.needs(Scope::Read)?;
    let Caller::User { id, .. } = caller.auth.caller else {
        return Err(ApiError::new(StatusCode::UNAUTHORIZED, "Please log in."));
    };
    let streams = state.api_streams.clone();
    let answer = crate::http::handlers::session_events::events(state, axum::Extension(caller.auth)).await;
    streams.counted(id, answer)
}

/// The courses you may launch in, with each allowed profile, how many are free now, and
/// the allowed images.
#[utoipa::path(get, path = "/launch-options", tag = "sessions", security(("token" = ["read"])),
    responses((status = 200, body = Vec<LaunchCourse>), (status = "4XX", body = AppError)))]
pub async fn launch_options(State(state): State<AppState>, mut caller: ApiCaller) -> Answer<Vec<LaunchCourse>> {
    caller.needs(Scope::Read)?;
    caller.run(&state, pages::launch_options()).await
}
