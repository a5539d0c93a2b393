//! The caller's own account and tokens.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::Json;
use slicehub_app::api::{auth, tokens};
use slicehub_app::api::tokens::TokenView;
use slicehub_app::error::AppError;
use slicehub_app::views::Me;
use slicehub_core::auth::Scope;

use super::answer::{done, Answer, ApiCaller, ApiError};
use crate::serve::AppState;

/// Who the token acts for, with their courses and roles.
#[utoipa::path(get, path = "/me", tag = "account", security(("token" = ["read"])),
    responses((status = 200, body = Me), (status = "4XX", body = AppError)))]
pub async fn me(State(state): State<AppState>, mut caller: ApiCaller) -> Answer<Me> {
    caller.needs(Scope::Read)?;
    let Json(me) = caller.run(&state, auth::current_user()).await?;
    me.map(Json).ok_or_else(|| ApiError::new(StatusCode::UNAUTHORIZED, "Please log in."))
}

/// Your tokens (not their secrets), newest first. Tokens are made on the account page.
#[utoipa::path(get, path = "/tokens", tag = "account", security(("token" = ["read"])),
    responses((status = 200, body = Vec<TokenView>), (status = "4XX", body = AppError)))]
pub async fn list_tokens(State(state): State<AppState>, mut caller: ApiCaller) -> Answer<Vec<TokenView>> {
    caller.needs(Scope::Read)?;
    let Json(overview) = caller.run(&state, tokens::my_tokens()).await?;
    Ok(Json(overview.tokens))
}

/// Revokes one of your tokens (any token may revoke its owner's tokens, itself included).
#[utoipa::path(delete, path = "/tokens/{id}", tag = "account", security(("token" = [])),
    params(("id" = i64, Path)),
    responses((status = 204, description = "Revoked"), (status = "4XX", body = AppError)))]
pub async fn revoke_token(State(state): State<AppState>, caller: ApiCaller, Path(id): Path<i64>) -> Result<StatusCode, ApiError> {
    done(caller.run(&state, tokens::revoke_token(id)).await)
}
