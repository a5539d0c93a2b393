//! `GET /hub/api/user`, `/hub/api/users`, `/hub/api/users/{name}`.

use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;
use serde_json::{json, Value};
use slicehub_core::auth::{authorize, Action, Caller, Scope};
use slicehub_core::store::User;

use super::model::{live_sessions, may_see, user_model};
use super::HubCaller;
use crate::api_v1::answer::ApiError;
use crate::serve::AppState;

/// The media type asking for `{items, _pagination}` instead of a bare list.
const PAGINATION: &str = "application/jupyterhub-pagination+json";
const DEFAULT_LIMIT: usize = 50;
const MOST_LIMIT: usize = 200;

/// The token's owner, with the scopes JupyterHub clients check (a notebook server lets in
/// the holder of `access:servers!user=NAME`).
pub async fn me(State(state): State<AppState>, HubCaller(mut caller): HubCaller) -> Result<Json<Value>, ApiError> {
    caller.needs(Scope::Read)?;
    let user = account(&state, &caller.auth.caller).await?;
    let live = live_sessions(&state.services).await?;
    let mut model = user_model(&state.services, &caller.auth.caller, &user, &live).await?;
    let name = &user.username;
    let mut scopes = vec![format!("read:users!user={name}"), format!("read:users:groups!user={name}")];
    if caller.token.allows(Scope::Sessions) {
        scopes.extend([format!("servers!user={name}"), format!("access:servers!user={name}")]);
    }
    model["scopes"] = json!(scopes);
    Ok(Json(model))
}

/// The caller's own account.
pub async fn account(state: &AppState, caller: &Caller) -> Result<User, ApiError> {
    let Caller::User { id, .. } = caller else {
        return Err(ApiError::new(StatusCode::FORBIDDEN, "Send a personal access token."));
    };
    state
        .services
        .store
        .user_by_id(*id)
        .await?
        .ok_or_else(|| ApiError::new(StatusCode::FORBIDDEN, "Send a personal access token."))
}

/// Refuses with `words` unless `user` is the caller.
pub fn only_own(caller: &Caller, user: &User, words: &str) -> Result<(), ApiError> {
    match caller {
        Caller::User { id, .. } if *id == user.id => Ok(()),
        _ => Err(ApiError::new(StatusCode::FORBIDDEN, words)),
    }
}

/// The account named `name`, when the caller may see it; otherwise 404 as for no such
/// account, so names cannot be tried out.
pub async fn visible(state: &AppState, caller: &Caller, name: &str) -> Result<User, ApiError> {
    let missing = || ApiError::new(StatusCode::NOT_FOUND, format!("There is no user {}.", slicehub_core::auth::validate::excerpt(name)));
    if !slicehub_core::auth::validate::plausible_key(name) {
        return Err(missing());
    }
    match state.services.store.user_by_username(name).await? {
        Some(user) if may_see(&state.services, caller, &user).await? => Ok(user),
        _ => Err(missing()),
    }
}

pub async fn one(State(state): State<AppState>, HubCaller(mut caller): HubCaller, Path(name): Path<String>) -> Result<Json<Value>, ApiError> {
    caller.needs(Scope::Read)?;
    let user = visible(&state, &caller.auth.caller, &name).await?;
    let live = live_sessions(&state.services).await?;
    Ok(Json(user_model(&state.services, &caller.auth.caller, &user, &live).await?))
}

#[derive(Debug, Deserialize)]
pub struct Paging {
    offset: Option<usize>,
    limit: Option<usize>,
}

/// Every account (administrators), a page at a time when asked for with the pagination
/// media type.
pub async fn list(
    State(state): State<AppState>,
    HubCaller(mut caller): HubCaller,
    headers: HeaderMap,
    Query(paging): Query<Paging>,
) -> Result<Response, ApiError> {
    caller.needs(Scope::Read)?;
    if authorize(&caller.auth.caller, &Action::ListUsers).is_err() {
        return Err(ApiError::new(StatusCode::FORBIDDEN, "Only administrators may list every user."));
    }
    let paged = headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.contains(PAGINATION));
    let offset = paging.offset.unwrap_or(0);
    let limit = paging.limit.unwrap_or(if paged { DEFAULT_LIMIT } else { MOST_LIMIT }).clamp(1, MOST_LIMIT);
    let users = state.services.store.list_users().await?;
    let total = users.len();
    let live = live_sessions(&state.services).await?;
    let mut items = Vec::new();
    for user in users.iter().skip(offset).take(limit) {
        items.push(user_model(&state.services, &caller.auth.caller, user, &live).await?);
    }
    if !paged {
        return Ok(Json(items).into_response());
    }
    // An absolute URL, as JupyterHub gives it: clients (jupyterhub-idle-culler) request it
    // as it is, and a bare path is no URL to them.
    let after = offset.saturating_add(limit);
    let next = (after < total).then(|| {
        let url = format!("{}/hub/api/users?offset={after}&limit={limit}", state.services.config.public_url());
        json!({ "offset": after, "limit": limit, "url": url })
    });
    let body = json!({ "items": items, "_pagination": { "offset": offset, "limit": limit, "total": total, "next": next } });
    Ok(Json(body).into_response())
}
