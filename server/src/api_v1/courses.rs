//! Courses: the list, one course, its roster, policy, extra hours, class view and bookings.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use base64::Engine as _;
use serde::Deserialize;
use slicehub_app::api::{bookings, class, courses, policy};
use slicehub_app::error::AppError;
use slicehub_app::views::{
    BookingsPageView, ClassPageView, CourseDetail, CourseSummary, OneTimePassword, PolicyPageView, RosterAppliedView,
    RosterPreviewView,
};
use slicehub_core::auth::Scope;
use utoipa::ToSchema;

use super::answer::{done, Answer, ApiCaller, ApiError};
use crate::serve::AppState;

#[derive(Debug, Deserialize, ToSchema)]
pub struct NewCourse {
    code: String,
    title: String,
}

#[derive(Debug, Deserialize, ToSchema)]
pub struct Username {
    username: String,
}

/// A course's policy, each field as the policy page's form takes it (text).
#[derive(Debug, Deserialize, ToSchema)]
pub struct PolicyFields {
    /// Allowed images, separated by commas.
    images: String,
    /// Allowed profiles, separated by commas; empty allows every profile.
    profiles: String,
    max_minutes: String,
    max_sessions: String,
    max_slices: String,
    /// `on` lets sessions reach the internet.
    #[serde(default)]
    internet: String,
    /// Slice-hours per person per period; empty for no quota.
    #[serde(default)]
    quota_hours: String,
    /// `week`, `month` or `term`.
    #[serde(default)]
    period: String,
    #[serde(default)]
    reset_day: String,
    #[serde(default)]
    reset_time: String,
    #[serde(default)]
    term_starts: String,
    #[serde(default)]
    term_ends: String,
    #[serde(default)]
    time_zone: String,
    booked_time: Option<String>,
    idle_minutes: Option<String>,
    idle_waiting_minutes: Option<String>,
    idle_gpu_percent: Option<String>,
    idle_warning_minutes: Option<String>,
    job_idle_minutes: Option<String>,
    job_idle: Option<String>,
}

#[derive(Debug, Deserialize, ToSchema)]
pub struct ExtraHours {
    username: String,
    hours: String,
    reason: String,
}

/// A booked lab, as the bookings page's form takes it.
#[derive(Debug, Deserialize, ToSchema)]
pub struct NewBooking {
    profile: String,
    slices: String,
    /// `YYYY-MM-DD`, in the course's time zone.
    date: String,
    /// `HH:MM`.
    start: String,
    /// `HH:MM`.
    end: String,
    /// How many weeks in a row, `1` for once.
    weeks: String,
    /// `on` to book even where sessions already run.
    override_running: Option<String>,
}

#[derive(Debug, serde::Serialize, ToSchema)]
pub struct Booked {
    id: i64,
}

/// The courses you belong to (every course, for administrators).
#[utoipa::path(get, path = "/courses", tag = "courses", security(("token" = ["read"])),
    responses((status = 200, body = Vec<CourseSummary>), (status = "4XX", body = AppError)))]
pub async fn list(State(state): State<AppState>, mut caller: ApiCaller) -> Answer<Vec<CourseSummary>> {
    caller.needs(Scope::Read)?;
    caller.run(&state, courses::list_courses()).await
}

/// Makes a course (administrators).
#[utoipa::path(post, path = "/courses", tag = "courses", security(("token" = ["admin"])), request_body = NewCourse,
    responses((status = 204, description = "Made"), (status = "4XX", body = AppError)))]
pub async fn create(State(state): State<AppState>, mut caller: ApiCaller, Json(new): Json<NewCourse>) -> Result<StatusCode, ApiError> {
    caller.needs(Scope::Admin)?;
    done(caller.run(&state, courses::add_course(new.code, new.title)).await)
}

/// One course with its members (members see who teaches; instructors see the roster).
#[utoipa::path(get, path = "/courses/{code}", tag = "courses", security(("token" = ["read"])),
    params(("code" = String, Path)),
    responses((status = 200, body = CourseDetail), (status = "4XX", body = AppError)))]
pub async fn one(State(state): State<AppState>, mut caller: ApiCaller, Path(code): Path<String>) -> Answer<CourseDetail> {
    caller.needs(Scope::Read)?;
    caller.run(&state, courses::open_course(code)).await
}

fn csv_base64(csv: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(csv.as_bytes())
}

/// What importing this roster CSV would do, without doing it.
#[utoipa::path(post, path = "/courses/{code}/roster/check", tag = "courses", security(("token" = ["course:manage"])),
    params(("code" = String, Path)), request_body(content = String, content_type = "text/csv"),
    responses((status = 200, body = RosterPreviewView), (status = "4XX", body = AppError)))]
pub async fn check_roster(State(state): State<AppState>, mut caller: ApiCaller, Path(code): Path<String>, csv: String) -> Answer<RosterPreviewView> {
    caller.needs(Scope::CourseManage)?;
    caller.run(&state, courses::check_roster(code, csv_base64(&csv))).await
}

/// Enrols the students of a roster CSV (`username,display_name,email`), making the
/// accounts that do not exist yet.
#[utoipa::path(post, path = "/courses/{code}/roster", tag = "courses", security(("token" = ["course:manage"])),
    params(("code" = String, Path)), request_body(content = String, content_type = "text/csv"),
    responses((status = 200, body = RosterAppliedView), (status = "4XX", body = AppError)))]
pub async fn import_roster(State(state): State<AppState>, mut caller: ApiCaller, Path(code): Path<String>, csv: String) -> Answer<RosterAppliedView> {
    caller.needs(Scope::CourseManage)?;
    caller.run(&state, courses::import_roster(code, csv_base64(&csv))).await
}

/// Takes a student off the course; their running sessions of the course stop.
#[utoipa::path(delete, path = "/courses/{code}/students/{username}", tag = "courses", security(("token" = ["course:manage"])),
    params(("code" = String, Path), ("username" = String, Path)),
    responses((status = 204, description = "Dropped"), (status = "4XX", body = AppError)))]
pub async fn drop_student(State(state): State<AppState>, mut caller: ApiCaller, Path((code, username)): Path<(String, String)>) -> Result<StatusCode, ApiError> {
    caller.needs(Scope::CourseManage)?;
    done(caller.run(&state, courses::drop_student(code, username)).await)
}

/// Gives a student of the course a one-time password.
#[utoipa::path(post, path = "/courses/{code}/students/{username}/password-reset", tag = "courses", security(("token" = ["course:manage"])),
    params(("code" = String, Path), ("username" = String, Path)),
    responses((status = 200, body = OneTimePassword), (status = "4XX", body = AppError)))]
pub async fn reset_student_password(State(state): State<AppState>, mut caller: ApiCaller, Path((code, username)): Path<(String, String)>) -> Answer<OneTimePassword> {
    caller.needs(Scope::CourseManage)?;
    caller.run(&state, courses::reset_student_password(code, username)).await
}

/// Makes a person an instructor of the course (administrators).
#[utoipa::path(post, path = "/courses/{code}/instructors", tag = "courses", security(("token" = ["admin"])),
    params(("code" = String, Path)), request_body = Username,
    responses((status = 204, description = "Made instructor"), (status = "4XX", body = AppError)))]
pub async fn make_instructor(State(state): State<AppState>, mut caller: ApiCaller, Path(code): Path<String>, Json(who): Json<Username>) -> Result<StatusCode, ApiError> {
    caller.needs(Scope::Admin)?;
    done(caller.run(&state, courses::make_instructor(code, who.username)).await)
}

/// The course's policy with each student's slice-hour budget.
#[utoipa::path(get, path = "/courses/{code}/policy", tag = "courses", security(("token" = ["read"])),
    params(("code" = String, Path)),
    responses((status = 200, body = PolicyPageView), (status = "4XX", body = AppError)))]
pub async fn get_policy(State(state): State<AppState>, mut caller: ApiCaller, Path(code): Path<String>) -> Answer<PolicyPageView> {
    caller.needs(Scope::Read)?;
    caller.run(&state, policy::course_policy(code)).await
}

/// Saves the whole policy when every field is right; otherwise nothing is saved and the
/// answer (400) names each field's problem.
#[utoipa::path(put, path = "/courses/{code}/policy", tag = "courses", security(("token" = ["course:manage"])),
    params(("code" = String, Path)), request_body = PolicyFields,
    responses((status = 204, description = "Saved"), (status = "4XX", body = AppError)))]
pub async fn put_policy(State(state): State<AppState>, mut caller: ApiCaller, Path(code): Path<String>, Json(p): Json<PolicyFields>) -> Result<StatusCode, ApiError> {
    caller.needs(Scope::CourseManage)?;
    let Json(problems) = caller
        .run(
            &state,
            policy::save_course_policy(
                code, p.images, p.profiles, p.max_minutes, p.max_sessions, p.max_slices, p.internet, p.quota_hours,
                p.period, p.reset_day, p.reset_time, p.term_starts, p.term_ends, p.time_zone, p.booked_time,
                p.idle_minutes, p.idle_waiting_minutes, p.idle_gpu_percent, p.idle_warning_minutes, p.job_idle_minutes,
                p.job_idle,
            ),
        )
        .await?;
    if problems.is_empty() {
        return Ok(StatusCode::NO_CONTENT);
    }
    let words: Vec<String> = problems.iter().map(|p| format!("{}: {}", p.field, p.message)).collect();
    Err(ApiError::new(StatusCode::BAD_REQUEST, format!("Nothing was saved. {}", words.join(" "))))
}

/// Gives a student extra slice-hours for the current period; answers the new budget in words.
#[utoipa::path(post, path = "/courses/{code}/extra-hours", tag = "courses", security(("token" = ["course:manage"])),
    params(("code" = String, Path)), request_body = ExtraHours,
    responses((status = 200, body = String), (status = "4XX", body = AppError)))]
pub async fn extra_hours(State(state): State<AppState>, mut caller: ApiCaller, Path(code): Path<String>, Json(e): Json<ExtraHours>) -> Answer<String> {
    caller.needs(Scope::CourseManage)?;
    caller.run(&state, policy::grant_extra_hours(code, e.username, e.hours, e.reason)).await
}

/// The class view: every student's sessions and use.
#[utoipa::path(get, path = "/courses/{code}/class", tag = "courses", security(("token" = ["read"])),
    params(("code" = String, Path)),
    responses((status = 200, body = ClassPageView), (status = "4XX", body = AppError)))]
pub async fn class_view(State(state): State<AppState>, mut caller: ApiCaller, Path(code): Path<String>) -> Answer<ClassPageView> {
    caller.needs(Scope::Read)?;
    caller.run(&state, class::class_dashboard(code)).await
}

/// The class view's usage table as CSV, as the page's download gives it.
#[utoipa::path(get, path = "/courses/{code}/usage.csv", tag = "courses", security(("token" = ["read"])),
    params(("code" = String, Path)),
    responses((status = 200, content_type = "text/csv", body = String), (status = "4XX", body = AppError)))]
pub async fn usage_csv(state: State<AppState>, mut caller: ApiCaller, uri: axum::http::Uri, code: Path<String>) -> Result<Response, ApiError> {
    caller.needs(Scope::Read)?;
    Ok(crate::http::handlers::usage_csv::download(state, axum::Extension(caller.auth), uri, code).await)
}

/// The course's booked labs.
#[utoipa::path(get, path = "/courses/{code}/bookings", tag = "courses", security(("token" = ["read"])),
    params(("code" = String, Path)),
    responses((status = 200, body = BookingsPageView), (status = "4XX", body = AppError)))]
pub async fn list_bookings(State(state): State<AppState>, mut caller: ApiCaller, Path(code): Path<String>) -> Answer<BookingsPageView> {
    caller.needs(Scope::Read)?;
    caller.run(&state, bookings::lab_bookings(code)).await
}

/// Books slices for a lab, once or weekly.
#[utoipa::path(post, path = "/courses/{code}/bookings", tag = "courses", security(("token" = ["course:manage"])),
    params(("code" = String, Path)), request_body = NewBooking,
    responses((status = 201, body = Booked), (status = "4XX", body = AppError)))]
pub async fn book(State(state): State<AppState>, mut caller: ApiCaller, Path(code): Path<String>, Json(b): Json<NewBooking>) -> Result<Response, ApiError> {
    caller.needs(Scope::CourseManage)?;
    let Json(id) = caller
        .run(&state, bookings::book_lab(code, b.profile, b.slices, b.date, b.start, b.end, b.weeks, b.override_running))
        .await?;
    Ok((StatusCode::CREATED, Json(Booked { id })).into_response())
}

/// Cancels a booked lab.
#[utoipa::path(delete, path = "/courses/{code}/bookings/{id}", tag = "courses", security(("token" = ["course:manage"])),
    params(("code" = String, Path), ("id" = i64, Path)),
    responses((status = 204, description = "Cancelled"), (status = "4XX", body = AppError)))]
pub async fn cancel_booking(State(state): State<AppState>, mut caller: ApiCaller, Path((code, id)): Path<(String, i64)>) -> Result<StatusCode, ApiError> {
    caller.needs(Scope::CourseManage)?;
    done(caller.run(&state, bookings::cancel_lab_booking(code, id)).await)
}
