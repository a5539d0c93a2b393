use axum::extract::State;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::Json;
use slicehub_core::health;

use crate::serve::AppState;

/// 200 while the database works (Docker or GPU problems show as `degraded`), else 503.
/// `event_streams` counts the open `/api/sessions/events` connections (open session pages).
pub async fn healthz(State(state): State<AppState>) -> impl IntoResponse {
    let report = health::check(&state.services).await;
    let code = if report.database.ok {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    let mut body = serde_json::to_value(&report).unwrap_or_default();
    body["event_streams"] = state.event_streams.open().into();
    (code, Json(body))
}
