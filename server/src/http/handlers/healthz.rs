use axum::extract::State;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::{Extension, Json};
use slicehub_app::api::ssr::{Action, RequestAuth};
use slicehub_core::auth::authorize;
use slicehub_core::health;

use crate::serve::AppState;

/// 200 while the database works (Docker or GPU problems show as `degraded`), else 503.
/// Anyone (a load balancer, a monitor) learns the status and which part works; what each
/// part is and where it lives (addresses, versions, the GPU backend) and `event_streams`,
/// the open `/api/sessions/events` connections, only an administrator's login sees.
/// `recovering` (read now, not cached) is true while the portal picks up the sessions of
/// its last run after a start; claims wait for it.
/// Both read the same report, at most `health::FRESH_FOR` old (`checked_at_ms` says when
/// it was taken), so a flood of anonymous calls does not probe Docker, the GPUs and Slurm
/// for each one.
pub async fn healthz(State(state): State<AppState>, Extension(auth): Extension<RequestAuth>) -> impl IntoResponse {
    let report = health::check(&state.services).await;
    let recovering = state.services.sessions.is_recovering();
    let code = if report.database.ok {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    if authorize(&auth.caller, &Action::ViewStatus).is_err() {
        let body = serde_json::json!({
            "status": report.status,
            "database": { "ok": report.database.ok },
            "docker": { "ok": report.docker.ok },
            "gpu": { "ok": report.gpu.ok },
            "background": { "ok": report.background.ok },
            "recovering": recovering,
        });
        return (code, Json(body));
    }
    let mut body = serde_json::to_value(&report).unwrap_or_default();
    body["event_streams"] = state.event_streams.open().into();
    body["recovering"] = recovering.into();
    (code, Json(body))
}
