//! `GET /admin/audit.csv?who=…&what=…&from=…&to=…`: the filtered audit log as CSV, oldest
//! first, streamed as the database hands the rows over (a year of sign-ins never sits in
//! memory). The page guard checks the path first; this handler asks the one guard again.
//! Every line is written by core's one CSV writer, which neutralises formulas (an attempted
//! username is whatever someone typed).

use std::collections::HashMap;
use std::convert::Infallible;

use axum::body::Body;
use axum::extract::{Query, State};
use axum::http::{header, Uri};
use axum::response::{IntoResponse, Response};
use axum::Extension;
use slicehub_app::api::ssr::{Action, RequestAuth};
use slicehub_core::audit_log::{audit_csv_line, AuditForm, AUDIT_CSV_HEADER};

use crate::http::page_guard;
use crate::serve::AppState;

pub const PATH: &str = "/admin/audit.csv";

pub async fn download(
    State(state): State<AppState>,
    Extension(auth): Extension<RequestAuth>,
    uri: Uri,
    Query(fields): Query<HashMap<String, String>>,
) -> Response {
    if let Some(refusal) = page_guard::answer(&auth.caller, &Action::ReadAuditLog, &uri) {
        return refusal;
    }
    let field = |name: &str| fields.get(name).cloned().unwrap_or_default();
    let form = AuditForm { who: field("who"), what: field("what"), from: field("from"), to: field("to") };
    let query = match form.query() {
        Ok(query) => query,
        Err(e) => return slicehub_app::api::ssr::answer_for(e).into_response(),
    };
    let (lines, mut received) = tokio::sync::mpsc::channel::<String>(64);
    let store = state.services.store.clone();
    tokio::spawn(async move {
        use futures_util::StreamExt;
        if lines.send(AUDIT_CSV_HEADER.to_string()).await.is_err() {
            return;
        }
        let mut rows = std::pin::pin!(store.audit_stream(&query));
        while let Some(row) = rows.next().await {
            let (line, last) = match row {
                Ok(entry) => (audit_csv_line(&entry), false),
                Err(e) => {
                    tracing::warn!(error = %e, "audit CSV stopped early");
                    ("# the log could not be read to the end; try again\n".to_string(), true)
                }
            };
            // A reader that went away ends the download.
            if lines.send(line).await.is_err() || last {
                return;
            }
        }
    });
    let body = futures_util::stream::poll_fn(move |cx| received.poll_recv(cx).map(|line| line.map(Ok::<_, Infallible>)));
    (
        [
            (header::CONTENT_TYPE, "text/csv; charset=utf-8"),
            (header::CONTENT_DISPOSITION, "attachment; filename=\"slicehub-audit.csv\""),
        ],
        Body::from_stream(body),
    )
        .into_response()
}
