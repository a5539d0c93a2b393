//! What every REST handler shares: the token's caller with its scopes, running one of the
//! pages' own server functions for that caller (so the API and the pages ask the same
//! guard and call the same core services), and errors as JSON with the pages' words.

use std::future::Future;

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use leptos::prelude::provide_context;
use leptos::reactive::computed::ScopedFuture;
use leptos::reactive::owner::Owner;
use leptos_axum::ResponseOptions;
use slicehub_app::api::ssr::RequestAuth;
use slicehub_app::error::AppError;
use slicehub_core::auth::{Scope, TokenCaller};

use crate::serve::AppState;

/// An error answer: `{"status": 403, "message": "…"}` with that HTTP status.
#[derive(Debug)]
pub struct ApiError(pub AppError);

impl ApiError {
    pub fn new(status: StatusCode, message: impl Into<String>) -> ApiError {
        ApiError(AppError::new(status.as_u16(), message))
    }
}

impl From<AppError> for ApiError {
    fn from(e: AppError) -> ApiError {
        ApiError(e)
    }
}

impl From<slicehub_core::CoreError> for ApiError {
    fn from(e: slicehub_core::CoreError) -> ApiError {
        let (status, message) = slicehub_app::api::ssr::answer_for(e);
        ApiError::new(status, message)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = StatusCode::from_u16(self.0.status)
            .ok()
            .filter(|s| s.is_client_error() || s.is_server_error())
            .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        (status, Json(self.0)).into_response()
    }
}

pub type Answer<T> = Result<Json<T>, ApiError>;

/// The caller of a REST request: a valid token's owner. Without one the request is
/// answered 401 before any handler runs.
pub struct ApiCaller {
    pub token: TokenCaller,
    pub auth: RequestAuth,
}

impl<S: Send + Sync> FromRequestParts<S> for ApiCaller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        let token = parts.extensions.get::<TokenCaller>().cloned();
        let auth = parts.extensions.get::<RequestAuth>().cloned();
        match (token, auth) {
            (Some(token), Some(auth)) => Ok(ApiCaller { token, auth }),
            _ => Err(ApiError::new(
                StatusCode::UNAUTHORIZED,
                "Send a personal access token as `Authorization: Bearer shp_…`; make one on your account page.",
            )),
        }
    }
}

impl ApiCaller {
    /// Refuses unless the token has `scope` (the guard then decides as for the pages), and
    /// from here on acts as the token may for that scope (`TokenCaller::caller_for`).
    pub fn needs(&mut self, scope: Scope) -> Result<(), ApiError> {
        if !self.token.allows(scope) {
            return Err(ApiError::new(StatusCode::FORBIDDEN, format!("This token lacks the {} scope.", scope.name())));
        }
        self.auth.caller = self.token.caller_for(scope);
        Ok(())
    }

    /// Runs `call` (one of the pages' server functions) as this caller, with what the
    /// Leptos integration gives server functions, and answers its result.
    pub async fn run<T, F>(&self, state: &AppState, call: F) -> Answer<T>
    where
        F: Future<Output = Result<T, AppError>> + Send,
    {
        let (mut parts, ()) = axum::http::Request::new(()).into_parts();
        parts.extensions.insert(self.auth.clone());
        let services = state.services.clone();
        let reads = state.session_reads.clone();
        let oidc = state.oidc.clone();
        Owner::new()
            .with(move || {
                ScopedFuture::new(async move {
                    provide_context(parts);
                    provide_context(ResponseOptions::default());
                    provide_context(services);
                    provide_context(reads);
                    provide_context(oidc);
                    call.await
                })
            })
            .await
            .map(Json)
            .map_err(ApiError)
    }
}

/// A change that answers nothing: 204.
pub fn done(result: Answer<()>) -> Result<StatusCode, ApiError> {
    result.map(|_| StatusCode::NO_CONTENT)
}
