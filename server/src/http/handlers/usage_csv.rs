//! `GET /courses/CODE/usage.csv`: the class dashboard's usage table as a download. The
//! page guard checks the path first; this handler asks the one guard again with the course
//! it actually looked up (axum decodes the code, so `%43S-101` is `CS-101` here whatever
//! the guard made of the path).

use axum::extract::{Path, State};
use axum::http::{header, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::Extension;
use slicehub_app::api::ssr::{Action, RequestAuth};
use slicehub_core::auth::validate::excerpt;

use crate::http::page_guard;
use crate::serve::AppState;

pub const PATH: &str = "/courses/{code}/usage.csv";

pub async fn download(
    State(state): State<AppState>,
    Extension(auth): Extension<RequestAuth>,
    uri: Uri,
    Path(code): Path<String>,
) -> Response {
    let services = &state.services;
    let course = match services.store.course_by_code(&code).await {
        Ok(Some(course)) => course,
        Ok(None) => {
            // Whether a course exists is for signed-in callers, as on its page.
            if let Some(refusal) = page_guard::answer(&auth.caller, &Action::ListOwnCourses, &uri) {
                return refusal;
            }
            return (StatusCode::NOT_FOUND, format!("There is no course {}.", excerpt(&code))).into_response();
        }
        Err(e) => return unavailable(&e),
    };
    if let Some(refusal) = page_guard::answer(&auth.caller, &Action::WatchClass(course.id), &uri) {
        return refusal;
    }
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
