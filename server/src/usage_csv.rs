//! `GET /courses/CODE/usage.csv`: the class dashboard's usage table as a download. The
//! page guard has already checked that the caller may watch the class.

use axum::extract::{Path, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};

use crate::serve::AppState;

pub const PATH: &str = "/courses/{code}/usage.csv";

pub async fn download(State(state): State<AppState>, Path(code): Path<String>) -> Response {
    let services = &state.services;
    let course = match services.store.course_by_code(&code).await {
        Ok(Some(course)) => course,
        Ok(None) => return (StatusCode::NOT_FOUND, format!("There is no course {code}.")).into_response(),
        Err(e) => return unavailable(&e),
    };
    let now = slicehub_app::api::ssr::now_ms();
    match slicehub_core::courses::class_view(&services.store, &services.config, course.id, now).await {
        Ok(view) => (
            [
                (header::CONTENT_TYPE, "text/csv; charset=utf-8".to_string()),
                (
                    header::CONTENT_DISPOSITION,
                    format!("attachment; filename=\"{}-usage.csv\"", course.code),
                ),
            ],
            slicehub_core::courses::usage_csv(&course.code, &view),
        )
            .into_response(),
        Err(e) => unavailable(&e),
    }
}

fn unavailable(e: &slicehub_core::CoreError) -> Response {
    tracing::warn!(error = %e, "usage CSV failed");
    (StatusCode::SERVICE_UNAVAILABLE, "The usage could not be read now; try again in a moment.").into_response()
}
