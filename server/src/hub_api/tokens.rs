//! `GET|POST /hub/api/users/{name}/tokens`: one's own tokens, as JupyterHub lists and
//! makes them. A token made here never has a scope its maker's token lacks.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;
use serde_json::{json, Value};
use slicehub_app::api::tokens::TokenView;
use slicehub_core::auth::{Scope, TokenRequest, API_TOKEN_DAYS};

use super::users::visible;
use super::HubCaller;
use crate::api_v1::answer::ApiError;
use crate::serve::AppState;

#[derive(Debug, Default, Deserialize)]
pub struct NewToken {
    note: Option<String>,
    /// Seconds; rounded up to the portal's lifetimes (7, 30, 90 or 365 days).
    expires_in: Option<u64>,
    /// The portal's scope names (`read`, `sessions`, …); others are refused.
    scopes: Option<Vec<String>>,
}

fn model(t: &TokenView) -> Value {
    json!({
        "kind": "api_token",
        "id": format!("a{}", t.id),
        "note": t.name,
        "scopes": t.scopes,
        "created": t.created,
        "expires_at": t.expires,
        "last_activity": t.last_used,
    })
}

async fn own(state: &AppState, caller: &super::super::api_v1::answer::ApiCaller, name: &str) -> Result<(), ApiError> {
    let user = visible(state, &caller.auth.caller, name).await?;
    match &caller.auth.caller {
        slicehub_core::auth::Caller::User { id, .. } if *id == user.id => Ok(()),
        _ => Err(ApiError::new(StatusCode::FORBIDDEN, "Tokens are their owner's only.")),
    }
}

pub async fn list(State(state): State<AppState>, HubCaller(caller): HubCaller, Path(name): Path<String>) -> Result<Json<Value>, ApiError> {
    caller.needs(Scope::Read)?;
    own(&state, &caller, &name).await?;
    let Json(overview) = caller.run(&state, slicehub_app::api::tokens::my_tokens()).await?;
    Ok(Json(json!({ "api_tokens": overview.tokens.iter().map(model).collect::<Vec<_>>() })))
}

pub async fn create(
    State(state): State<AppState>,
    HubCaller(caller): HubCaller,
    Path(name): Path<String>,
    body: Option<Json<NewToken>>,
) -> Result<Response, ApiError> {
    caller.needs(Scope::Read)?;
    own(&state, &caller, &name).await?;
    let new = body.map(|Json(b)| b).unwrap_or_default();
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
    let request = TokenRequest { name: new.note.unwrap_or_else(|| "made through the hub API".into()), scopes, days };
    let made = state.services.auth.create_api_token(&caller.auth.caller, &request).await?;
    let view = slicehub_app::api::tokens::ssr::token_view(made.row);
    let mut answer = model(&view);
    answer["token"] = Value::String(made.secret);
    Ok((StatusCode::CREATED, Json(answer)).into_response())
}
