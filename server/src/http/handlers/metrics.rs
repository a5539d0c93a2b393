//! `GET /metrics` for Prometheus, with the bearer token of `metrics.token`; no token
//! configured, no metrics (404), so nothing about the class is public by default.

use axum::extract::State;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use slicehub_core::auth::token_sha256;
use slicehub_core::config::ExposeSecret;

use crate::serve::AppState;

pub const PATH: &str = "/metrics";

pub async fn scrape(State(state): State<AppState>, headers: HeaderMap) -> Response {
    let Some(wanted) = &state.services.config.metrics.token else {
        return (StatusCode::NOT_FOUND, "Metrics are off: set metrics.token to serve them.").into_response();
    };
    let given = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or("");
    // Digests compared: the answer's timing says nothing of the token.
    if token_sha256(given) != token_sha256(wanted.expose_secret()) {
        return (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, "Bearer")],
            "A valid bearer token is needed for the metrics.",
        )
            .into_response();
    }
    match slicehub_core::metrics::render(&state.services).await {
        Ok(text) => ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], text).into_response(),
        Err(e) => {
            tracing::warn!(error = %e, "metrics could not be read");
            (StatusCode::SERVICE_UNAVAILABLE, "The metrics cannot be read right now.").into_response()
        }
    }
}
