//! `GET /reports/usage.csv?period=…&from=…&to=…&group=…&course=…`: the usage report as a
//! download, the numbers its page shows. Same fields, same scope and same messages.

use std::collections::HashMap;

use axum::extract::{Query, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::Extension;
use slicehub_app::api::ssr::{answer_for, RequestAuth};
use slicehub_core::reports::{report_csv, report_for, ReportForm};

use crate::serve::AppState;

pub const PATH: &str = "/reports/usage.csv";

pub async fn download(
    State(state): State<AppState>,
    Extension(auth): Extension<RequestAuth>,
    Query(fields): Query<HashMap<String, String>>,
) -> Response {
    let field = |name: &str| fields.get(name).cloned().unwrap_or_default();
    let form = ReportForm {
        period: field("period"),
        from: field("from"),
        to: field("to"),
        group: field("group"),
        course: field("course").trim().to_string(),
    };
    let now = slicehub_app::api::ssr::now_ms();
    match report_for(&state.services.store, &auth.caller, &form, now).await {
        Ok(report) => {
            let (from, to) = report.query.dates();
            let name = match form.course.as_str() {
                "" => format!("slicehub-usage-{from}-{to}.csv"),
                course => format!("{}-usage-{from}-{to}.csv", course.replace(|c: char| !c.is_ascii_alphanumeric() && c != '-', "_")),
            };
            (
                [
                    (header::CONTENT_TYPE, "text/csv; charset=utf-8".to_string()),
                    (header::CONTENT_DISPOSITION, format!("attachment; filename=\"{name}\"")),
                ],
                report_csv(&report),
            )
                .into_response()
        }
        Err(e) => answer_for(e).into_response(),
    }
}
