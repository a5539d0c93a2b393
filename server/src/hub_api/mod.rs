//! The part of JupyterHub's REST API (`/hub/api/…`) that classroom tooling speaks:
//! nbgrader's JupyterHub plugin reads a person's courses from their groups, admin scripts
//! list users and start and stop servers, and a JupyterLab Hub menu links to `/hub/home`.
//! Courses are the groups: `nbgrader-CODE` holds a course's students, `formgrade-CODE` its
//! instructors, and the roster stays the one source of truth (a group change is a roster
//! change, by the same rules as the course page). Tokens are the portal's personal access
//! tokens, sent as `Authorization: token …`; as JupyterHub does, a missing or unknown token
//! is answered 403. README "JupyterHub compatibility" lists what is answered.

mod groups;
mod model;
mod servers;
mod tokens;
mod users;

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum::Router;

use crate::api_v1::answer::{ApiCaller, ApiError};
use crate::serve::AppState;

/// The JupyterHub version whose REST API this subset follows.
pub const HUB_VERSION: &str = "6.1.1";

/// A hub request's caller: as the REST API's, but a missing token is 403, which is what
/// JupyterHub's clients take for "not signed in".
pub struct HubCaller(pub ApiCaller);

impl<S: Send + Sync> FromRequestParts<S> for HubCaller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        match ApiCaller::from_request_parts(parts, state).await {
            Ok(caller) => Ok(HubCaller(caller)),
            Err(_) => Err(ApiError::new(StatusCode::FORBIDDEN, "Send a personal access token as `Authorization: token …`.")),
        }
    }
}

/// Every route below, for `slicehub routes` (the authorization matrix decides each).
pub const ROUTES: &[&str] = &[
    "GET /hub/api",
    "GET /hub/api/",
    "GET /hub/api/user",
    "GET /hub/api/users",
    "GET /hub/api/users/{name}",
    "POST /hub/api/users/{name}/server",
    "DELETE /hub/api/users/{name}/server",
    "GET /hub/api/users/{name}/server/progress",
    "GET /hub/api/users/{name}/tokens",
    "POST /hub/api/users/{name}/tokens",
    "GET /hub/api/services",
    "GET /hub/api/groups",
    "GET /hub/api/groups/{name}",
    "POST /hub/api/groups/{name}",
    "POST /hub/api/groups/{name}/users",
    "DELETE /hub/api/groups/{name}/users",
    "GET /hub/home",
    "GET /hub/spawn",
    "GET /hub/spawn/{*rest}",
    "GET /hub/logout",
    "ANY /hub/api/{*rest}",
];

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/hub/api", get(version))
        .route("/hub/api/", get(version))
        .route("/hub/api/user", get(users::me))
        .route("/hub/api/users", get(users::list))
        .route("/hub/api/users/{name}", get(users::one))
        .route("/hub/api/users/{name}/server", post(servers::start).delete(servers::stop))
        .route("/hub/api/users/{name}/server/progress", get(servers::progress))
        .route("/hub/api/users/{name}/tokens", get(tokens::list).post(tokens::create))
        .route("/hub/api/services", get(|| async { axum::Json(serde_json::json!({})) }))
        .route("/hub/api/groups", get(groups::list))
        .route("/hub/api/groups/{name}", get(groups::one).post(groups::create))
        .route("/hub/api/groups/{name}/users", post(groups::add_users).delete(groups::remove_users))
        .route("/hub/home", get(|| async { Redirect::to("/sessions") }))
        .route("/hub/spawn", get(|| async { Redirect::to("/sessions") }))
        .route("/hub/spawn/{*rest}", get(|| async { Redirect::to("/sessions") }))
        .route("/hub/logout", get(|| async { Redirect::to("/account") }))
        .route("/hub/api/{*rest}", axum::routing::any(|| async { ApiError::new(StatusCode::NOT_FOUND, "SliceHub does not answer this JupyterHub route; see the README's compatibility table.") }))
}

/// `GET /hub/api/`: the version, in the body and the header clients check.
async fn version() -> Response {
    let mut answer = axum::Json(serde_json::json!({ "version": HUB_VERSION })).into_response();
    answer
        .headers_mut()
        .insert(header::HeaderName::from_static("x-jupyterhub-version"), HeaderValue::from_static(HUB_VERSION));
    answer
}
