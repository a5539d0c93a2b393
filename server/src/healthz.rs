use axum::extract::State;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::Json;
use slicehub_core::{health, Services};

/// 200 while the database works (Docker or GPU problems show as `degraded`), else 503.
pub async fn healthz(State(services): State<Services>) -> impl IntoResponse {
    let report = health::check(&services).await;
    let code = if report.database.ok {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    (code, Json(report))
}
