//! Usage reports, accounts, GPUs and draining, every course's sessions, the audit log.

use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use axum::Json;
use serde::{Deserialize, Serialize};
use slicehub_app::api::{admin, audit, instance, operations, reports};
use slicehub_app::error::AppError;
use slicehub_app::views::{AuditRowView, GpuBoard, InstanceStatus, OneTimePassword, OperationsRow, ReportPageView, UserRow, UserId};
use slicehub_core::auth::Scope;
use utoipa::{IntoParams, ToSchema};

use super::answer::{done, Answer, ApiCaller, ApiError};
use crate::serve::AppState;

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ReportQuery {
    /// `week`, `month`, `term` or `custom` (with `from` and `to`).
    #[serde(default)]
    period: String,
    /// `YYYY-MM-DD`.
    #[serde(default)]
    from: String,
    /// `YYYY-MM-DD`.
    #[serde(default)]
    to: String,
    /// `course`, `user`, `gpu` or `profile`.
    #[serde(default)]
    group: String,
    /// A course's code; empty for every course you may see.
    #[serde(default)]
    course: String,
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct SessionFilter {
    #[serde(default)]
    course: String,
    #[serde(default)]
    user: String,
    #[serde(default)]
    gpu: String,
    #[serde(default)]
    state: String,
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct AuditQuery {
    /// Whose actions (a username).
    #[serde(default)]
    who: String,
    /// Actions starting with this, e.g. `session.`.
    #[serde(default)]
    what: String,
    /// `YYYY-MM-DD`.
    #[serde(default)]
    from: String,
    /// `YYYY-MM-DD`.
    #[serde(default)]
    to: String,
    /// From `next_cursor` of the page before; absent for the newest.
    cursor: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct AuditPage {
    items: Vec<AuditRowView>,
    next_cursor: Option<String>,
}

#[derive(Debug, Deserialize, ToSchema)]
pub struct NewAccount {
    username: String,
    display_name: String,
    #[serde(default)]
    email: String,
    #[serde(default)]
    admin: bool,
}

#[derive(Debug, Deserialize, ToSchema)]
pub struct Disabled {
    disabled: bool,
}

#[derive(Debug, Deserialize, ToSchema)]
pub struct Drained {
    drained: bool,
}

/// The usage report the reports page shows, for the same choices.
#[utoipa::path(get, path = "/reports/usage", tag = "reports", security(("token" = ["read"])), params(ReportQuery),
    responses((status = 200, body = ReportPageView), (status = "4XX", body = AppError)))]
pub async fn usage(State(state): State<AppState>, mut caller: ApiCaller, Query(q): Query<ReportQuery>) -> Answer<ReportPageView> {
    caller.needs(Scope::Read)?;
    caller.run(&state, reports::usage_report(q.period, q.from, q.to, q.group, q.course)).await
}

/// The same report as CSV, as the page's download gives it.
#[utoipa::path(get, path = "/reports/usage.csv", tag = "reports", security(("token" = ["read"])), params(ReportQuery),
    responses((status = 200, content_type = "text/csv", body = String), (status = "4XX", body = AppError)))]
pub async fn usage_csv(
    state: State<AppState>,
    mut caller: ApiCaller,
    query: Query<std::collections::HashMap<String, String>>,
) -> Result<Response, ApiError> {
    caller.needs(Scope::Read)?;
    Ok(crate::http::handlers::report_csv::download(state, axum::Extension(caller.auth), query).await)
}

/// Every account (administrators).
#[utoipa::path(get, path = "/users", tag = "admin", security(("token" = ["read"])),
    responses((status = 200, body = Vec<UserRow>), (status = "4XX", body = AppError)))]
pub async fn users(State(state): State<AppState>, mut caller: ApiCaller) -> Answer<Vec<UserRow>> {
    caller.needs(Scope::Read)?;
    caller.run(&state, admin::list_users()).await
}

/// Makes an account with a one-time password (administrators).
#[utoipa::path(post, path = "/users", tag = "admin", security(("token" = ["admin"])), request_body = NewAccount,
    responses((status = 201, body = OneTimePassword), (status = "4XX", body = AppError)))]
pub async fn add_user(State(state): State<AppState>, mut caller: ApiCaller, Json(new): Json<NewAccount>) -> Result<(StatusCode, Json<OneTimePassword>), ApiError> {
    caller.needs(Scope::Admin)?;
    let admin_flag = new.admin.then(|| "on".to_string());
    let Json(made) = caller.run(&state, admin::add_account(new.username, new.display_name, new.email, admin_flag)).await?;
    Ok((StatusCode::CREATED, Json(made)))
}

/// Gives an account a one-time password (administrators).
#[utoipa::path(post, path = "/users/{id}/password-reset", tag = "admin", security(("token" = ["admin"])),
    params(("id" = i64, Path)),
    responses((status = 200, body = OneTimePassword), (status = "4XX", body = AppError)))]
pub async fn reset_password(State(state): State<AppState>, mut caller: ApiCaller, Path(id): Path<i64>) -> Answer<OneTimePassword> {
    caller.needs(Scope::Admin)?;
    caller.run(&state, admin::reset_account_password(UserId(id))).await
}

/// Disables or enables an account (administrators; never your own).
#[utoipa::path(put, path = "/users/{id}/disabled", tag = "admin", security(("token" = ["admin"])),
    params(("id" = i64, Path)), request_body = Disabled,
    responses((status = 204, description = "Done"), (status = "4XX", body = AppError)))]
pub async fn set_disabled(State(state): State<AppState>, mut caller: ApiCaller, Path(id): Path<i64>, Json(d): Json<Disabled>) -> Result<StatusCode, ApiError> {
    caller.needs(Scope::Admin)?;
    done(caller.run(&state, admin::set_account_disabled(UserId(id), d.disabled)).await)
}

/// The GPUs, their MIG layouts or shares, and who holds what (administrators).
#[utoipa::path(get, path = "/gpus", tag = "admin", security(("token" = ["read"])),
    responses((status = 200, body = GpuBoard), (status = "4XX", body = AppError)))]
pub async fn gpus(State(state): State<AppState>, mut caller: ApiCaller) -> Answer<GpuBoard> {
    caller.needs(Scope::Read)?;
    caller.run(&state, instance::read_gpus()).await
}

/// Drains a GPU (no new sessions; running ones go on) or returns it to service.
#[utoipa::path(put, path = "/gpus/{index}/drained", tag = "admin", security(("token" = ["admin"])),
    params(("index" = u32, Path)), request_body = Drained,
    responses((status = 204, description = "Done"), (status = "4XX", body = AppError)))]
pub async fn drain(State(state): State<AppState>, mut caller: ApiCaller, Path(index): Path<u32>, Json(d): Json<Drained>) -> Result<StatusCode, ApiError> {
    caller.needs(Scope::Admin)?;
    done(caller.run(&state, instance::set_gpu_drained(index, d.drained)).await)
}

/// Whether the portal and its parts work, and how many slices are free.
#[utoipa::path(get, path = "/status", tag = "admin", security(("token" = ["read"])),
    responses((status = 200, body = InstanceStatus), (status = "4XX", body = AppError)))]
pub async fn status(State(state): State<AppState>, mut caller: ApiCaller) -> Answer<InstanceStatus> {
    caller.needs(Scope::Read)?;
    caller.run(&state, instance::check_instance()).await
}

/// Every course's live and recent sessions (administrators).
#[utoipa::path(get, path = "/admin/sessions", tag = "admin", security(("token" = ["read"])), params(SessionFilter),
    responses((status = 200, body = Vec<OperationsRow>), (status = "4XX", body = AppError)))]
pub async fn all_sessions(State(state): State<AppState>, mut caller: ApiCaller, Query(f): Query<SessionFilter>) -> Answer<Vec<OperationsRow>> {
    caller.needs(Scope::Read)?;
    let Json(page) = caller.run(&state, operations::operations_sessions(f.course, f.user, f.gpu, f.state)).await?;
    match page.problem {
        Some(problem) => Err(ApiError::new(StatusCode::BAD_REQUEST, problem)),
        None => Ok(Json(page.sessions)),
    }
}

/// The audit log, newest first, a page at a time (administrators).
#[utoipa::path(get, path = "/audit", tag = "admin", security(("token" = ["read"])), params(AuditQuery),
    responses((status = 200, body = AuditPage), (status = "4XX", body = AppError)))]
pub async fn audit_log(State(state): State<AppState>, mut caller: ApiCaller, Query(q): Query<AuditQuery>) -> Answer<AuditPage> {
    caller.needs(Scope::Read)?;
    let Json(page) = caller
        .run(&state, audit::audit_log(q.who, q.what, q.from, q.to, q.cursor.unwrap_or_default()))
        .await?;
    if let Some(problem) = page.problem {
        return Err(ApiError::new(StatusCode::BAD_REQUEST, problem));
    }
    Ok(Json(AuditPage { items: page.entries, next_cursor: page.older.map(|o| o.to_string()) }))
}

/// The audit log as CSV, as the page's download gives it (administrators).
#[utoipa::path(get, path = "/audit.csv", tag = "admin", security(("token" = ["read"])), params(AuditQuery),
    responses((status = 200, content_type = "text/csv", body = String), (status = "4XX", body = AppError)))]
pub async fn audit_csv(
    state: State<AppState>,
    mut caller: ApiCaller,
    uri: axum::http::Uri,
    query: Query<std::collections::HashMap<String, String>>,
) -> Result<Response, ApiError> {
    caller.needs(Scope::Read)?;
    Ok(crate::http::handlers::audit_csv::download(state, axum::Extension(caller.auth), uri, query).await)
}
