//! `GET|POST /hub/api/users/{name}/tokens`: one's own tokens, as JupyterHub lists and
//! makes them. A token made here never has a scope its maker's token lacks.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;
use serde_json::{json, Value};
use slicehub_core::store::ApiTokenRow;
use slicehub_core::auth::{Scope, TokenRequest, API_TOKEN_DAYS};

use super::model::iso;
use super::users::{only_own, visible};
use super::HubCaller;
use crate::api_v1::answer::ApiError;
use crate::serve::AppState;

#[derive(Debug, Default, Deserialize)]
pub struct NewToken {
    note: Option<String>,
    /// Seconds; rounded up to the portal's lifetimes (7, 30, 90 or 365 days; longer is
    /// 365, none is 30), and never past the expiry of the token that asks.
    expires_in: Option<u64>,
    /// The portal's scope names (`read`, `sessions`, …); others are refused.
    scopes: Option<Vec<String>>,
}

fn model(t: &ApiTokenRow) -> Value {
    json!({
        "kind": "api_token",
        "id": format!("a{}", t.id),
        "note": t.name,
        "scopes": t.scopes.split_whitespace().collect::<Vec<_>>(),
        "created": iso(t.created_at),
        "expires_at": iso(t.expires_at),
        "last_activity": iso(t.last_used_at),
    })
}

/// The caller's own account, when `name` is theirs.
async fn own(state: &AppState, caller: &crate::api_v1::answer::ApiCaller, name: &str) -> Result<slicehub_core::UserId, ApiError> {
    let user = visible(state, &caller.auth.caller, name).await?;
    only_own(&caller.auth.caller, &user, "Tokens are their owner's only.")?;
    Ok(user.id)
}

pub async fn list(State(state): State<AppState>, HubCaller(mut caller): HubCaller, Path(name): Path<String>) -> Result<Json<Value>, ApiError> {
    caller.needs(Scope::Read)?;
    let user = own(&state, &caller, &name).await?;
    let rows = state.services.auth.api_tokens_of(user).await?;
    Ok(Json(json!({ "api_tokens": rows.iter().map(model).collect::<Vec<_>>() })))
}

pub async fn create(
    State(state): State<AppState>,
    HubCaller(mut caller): HubCaller,
    Path(name): Path<String>,
    body: axum::body::Bytes,
) -> Result<Response, ApiError> {
    caller.needs(Scope::Read)?;
    own(&state, &caller, &name).await?;
    // No body, of whatever type, or `null` asks for the defaults, as in JupyterHub.
    let new: NewToken = match body.iter().all(u8::is_ascii_whitespace) {
        true => NewToken::default(),
        false => serde_json::from_slice::<Option<NewToken>>(&body)
            .map_err(|_| ApiError::new(StatusCode::BAD_REQUEST, "The body is {\"note\", \"expires_in\", \"scopes\"}, each optional."))?
            .unwrap_or_default(),
    };
    let scopes = new.scopes.unwrap_or_else(|| caller.token.scopes.iter().map(|s| s.name().to_string()).collect());
    for scope in &scopes {
        if !Scope::parse(scope).is_some_and(|s| caller.token.allows(s)) {
            return Err(ApiError::new(
                StatusCode::FORBIDDEN,
                format!("This token cannot give the {} scope.", slicehub_core::auth::validate::excerpt(scope)),
            ));
        }
    }
    let days = match new.expires_in {
        None => 30,
        Some(seconds) => API_TOKEN_DAYS.into_iter().find(|d| u64::from(*d) * 86_400 >= seconds).unwrap_or(365),
    };
    let request = TokenRequest {
        name: new.note.unwrap_or_else(|| "made through the hub API".into()),
        scopes,
        days,
        made_by: Some(caller.token.clone()),
    };
    let made = state.services.auth.create_api_token(&caller.auth.caller, &request).await?;
    let mut answer = model(&made.row);
    answer["token"] = Value::String(made.secret);
    Ok((StatusCode::CREATED, Json(answer)).into_response())
}
