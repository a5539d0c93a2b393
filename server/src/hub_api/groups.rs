//! Courses as JupyterHub groups: `nbgrader-CODE` (students), `formgrade-CODE`
//! (instructors). Only courses the caller manages are listed. Adding to a group is the
//! course page's roster import (an instructor invites an existing account; an
//! administrator enrols it) and making an instructor the course page's (administrators);
//! taking a student out is dropping them. Groups cannot be made or removed apart from
//! their course.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use base64::Engine as _;
use serde::Deserialize;
use serde_json::{json, Value};
use slicehub_app::api::courses;
use slicehub_core::auth::validate::{excerpt, normalize_username, plausible_key};
use slicehub_core::auth::Scope;
use slicehub_core::store::{Course, Role};

use super::model::{can_manage, group_name, group_parts};
use super::HubCaller;
use crate::api_v1::answer::{ApiCaller, ApiError};
use crate::serve::AppState;

/// The most users one group call names (a roster import's size, well above a class).
const MOST_AT_ONCE: usize = 2000;

#[derive(Debug, Deserialize)]
pub struct Members {
    #[serde(default)]
    users: Vec<String>,
}

fn no_group(name: &str) -> ApiError {
    ApiError::new(StatusCode::NOT_FOUND, format!("There is no group {}; groups are courses' nbgrader- and formgrade- groups.", excerpt(name)))
}

/// The course and role a group name stands for, when the caller manages that course.
async fn managed(state: &AppState, caller: &ApiCaller, name: &str) -> Result<(Course, Role), ApiError> {
    let (code, role) = group_parts(name).filter(|_| plausible_key(name)).ok_or_else(|| no_group(name))?;
    match state.services.store.course_by_code(code).await? {
        // The group's name must be the course's code as written (`nbgrader-CS-101`).
        Some(course) if course.code == code && can_manage(&caller.auth.caller, course.id) => Ok((course, role)),
        _ => Err(no_group(name)),
    }
}

async fn group_model(state: &AppState, course: &Course, role: Role) -> Result<Value, ApiError> {
    let members = state.services.store.course_members(course.id).await?;
    let users: Vec<String> = members.into_iter().filter(|m| m.role == role).map(|m| m.user.username).collect();
    Ok(json!({
        "kind": "group",
        "name": group_name(&course.code, role),
        "users": users,
        "properties": { "course": course.code, "title": course.title },
        "roles": [],
    }))
}

pub async fn list(State(state): State<AppState>, HubCaller(mut caller): HubCaller) -> Result<Json<Vec<Value>>, ApiError> {
    caller.needs(Scope::Read)?;
    let mut out = Vec::new();
    for course in state.services.store.list_courses().await? {
        if can_manage(&caller.auth.caller, course.id) {
            for role in [Role::Student, Role::Instructor] {
                out.push(group_model(&state, &course, role).await?);
            }
        }
    }
    Ok(Json(out))
}

pub async fn one(State(state): State<AppState>, HubCaller(mut caller): HubCaller, Path(name): Path<String>) -> Result<Json<Value>, ApiError> {
    caller.needs(Scope::Read)?;
    let (course, role) = managed(&state, &caller, &name).await?;
    Ok(Json(group_model(&state, &course, role).await?))
}

/// A course's group exists with the course: "making" it answers it as it is.
pub async fn create(State(state): State<AppState>, HubCaller(mut caller): HubCaller, Path(name): Path<String>) -> Result<Response, ApiError> {
    caller.needs(Scope::CourseManage)?;
    let (course, role) = managed(&state, &caller, &name).await?;
    Ok((StatusCode::CREATED, Json(group_model(&state, &course, role).await?)).into_response())
}

/// Usernames as given, each checked and existing: an unknown one refuses the whole call
/// (JupyterHub's answer), so a group call never makes an account.
async fn existing(state: &AppState, users: &[String]) -> Result<Vec<String>, ApiError> {
    if users.len() > MOST_AT_ONCE {
        return Err(ApiError::new(StatusCode::BAD_REQUEST, format!("Send at most {MOST_AT_ONCE} users at once.")));
    }
    let mut names = Vec::new();
    for raw in users {
        let name = normalize_username(raw).map_err(|m| ApiError::new(StatusCode::BAD_REQUEST, m))?;
        if state.services.store.user_by_username(&name).await?.is_none() {
            return Err(ApiError::new(StatusCode::BAD_REQUEST, format!("There is no user {}.", excerpt(&name))));
        }
        names.push(name);
    }
    Ok(names)
}

pub async fn add_users(
    State(state): State<AppState>,
    HubCaller(mut caller): HubCaller,
    Path(name): Path<String>,
    Json(members): Json<Members>,
) -> Result<Json<Value>, ApiError> {
    caller.needs(Scope::CourseManage)?;
    let (course, role) = managed(&state, &caller, &name).await?;
    let names = existing(&state, &members.users).await?;
    match role {
        Role::Student if !names.is_empty() => {
            // Usernames are `a-z0-9._-` here: nothing in them needs quoting.
            let csv = format!("username,display name\n{}\n", names.iter().map(|n| format!("{n},{n}")).collect::<Vec<_>>().join("\n"));
            let csv = base64::engine::general_purpose::STANDARD.encode(csv);
            let _applied = caller.run(&state, courses::import_roster(course.code.clone(), csv)).await?;
        }
        Role::Student => {}
        Role::Instructor => {
            for name in names {
                let Json(()) = caller.run(&state, courses::make_instructor(course.code.clone(), name)).await?;
            }
        }
    }
    Ok(Json(group_model(&state, &course, role).await?))
}

pub async fn remove_users(
    State(state): State<AppState>,
    HubCaller(mut caller): HubCaller,
    Path(name): Path<String>,
    Json(members): Json<Members>,
) -> Result<Json<Value>, ApiError> {
    caller.needs(Scope::CourseManage)?;
    let (course, role) = managed(&state, &caller, &name).await?;
    if role == Role::Instructor {
        return Err(ApiError::new(StatusCode::FORBIDDEN, "Instructors are not removed through groups."));
    }
    // Taking out someone who is not in the group is done already (JupyterHub's answer).
    let students = state.services.store.course_members(course.id).await?;
    for name in existing(&state, &members.users).await? {
        if students.iter().any(|m| m.role == Role::Student && m.user.username == name) {
            let Json(()) = caller.run(&state, courses::drop_student(course.code.clone(), name)).await?;
        }
    }
    Ok(Json(group_model(&state, &course, role).await?))
}
