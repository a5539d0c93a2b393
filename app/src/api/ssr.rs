//! What every server function shares on the server: the services, the caller, the one
//! authorization guard, and turning core errors into answers with the right HTTP status.

use http::StatusCode;
use leptos::prelude::*;
use leptos_axum::ResponseOptions;
use slicehub_core::{CoreError, Services};

use crate::error::AppError;

pub fn services() -> Result<Services, AppError> {
    use_context::<Services>().ok_or_else(|| AppError::internal("portal services missing"))
}

pub fn now_ms() -> i64 {
    slicehub_core::clock::Clock::now_ms(&slicehub_core::clock::SystemClock)
}

pub fn clock() -> String {
    chrono::Utc::now().format("%H:%M:%S UTC").to_string()
}

/// An error answer with `status` and a message meant for the person who clicked; the
/// response (a page's too, when a page's server call fails) carries the status.
pub fn fail(status: StatusCode, message: impl Into<String>) -> AppError {
    if let Some(response) = use_context::<ResponseOptions>() {
        response.set_status(status);
    }
    AppError::new(status.as_u16(), message)
}

/// Core's error as an answer: bad input 400, missing 404, conflicts 409, anything the
/// operator must fix 503. The words are core's, which never include secrets.
impl From<CoreError> for AppError {
    fn from(e: CoreError) -> AppError {
        let (status, text) = answer_for(e);
        fail(status, text)
    }
}

/// [`AppError::from`] for a `map_err`.
pub fn from_core(e: CoreError) -> AppError {
    AppError::from(e)
}

/// The status and the words a person gets for core's error, for server functions and plain
/// handlers alike. What the operator must fix goes to the log; the person who clicked gets
/// words without the database's, Docker's or NVML's own.
pub fn answer_for(e: CoreError) -> (StatusCode, String) {
    let status = match &e {
        CoreError::InvalidRequest(_) | CoreError::Config(_) => StatusCode::BAD_REQUEST,
        CoreError::NotFound(_) => StatusCode::NOT_FOUND,
        CoreError::InsufficientResources(_) | CoreError::Conflict(_) => StatusCode::CONFLICT,
        CoreError::Auth(_) => StatusCode::UNAUTHORIZED,
        CoreError::NoPermission(_) => StatusCode::FORBIDDEN,
        _ => StatusCode::SERVICE_UNAVAILABLE,
    };
    let text = match e {
        CoreError::InvalidRequest(m)
        | CoreError::NotFound(m)
        | CoreError::InsufficientResources(m)
        | CoreError::Conflict(m)
        | CoreError::Auth(m)
        | CoreError::NoPermission(m) => m,
        other => {
            tracing::warn!(error = %other, "a request failed on a part the portal depends on");
            match other {
                CoreError::DatabaseUnreachable { .. } | CoreError::Database(_) | CoreError::Migration(_) => {
                    "The portal's database is not answering right now; try again in a moment."
                }
                CoreError::Engine(_) => "The container engine is not answering right now; try again in a moment.",
                CoreError::Cluster(_) => "The Slurm cluster is not answering right now; try again in a moment.",
                CoreError::Gpu(_) | CoreError::GpuStateFile { .. } => {
                    "The GPUs cannot be read right now; try again in a moment."
                }
                _ => "The portal could not do that right now; try again in a moment.",
            }
            .to_string()
        }
    };
    (status, text)
}

pub use slicehub_core::auth::{Action, Caller};

/// The login cookie's name. Its value is a random token; the database keeps its SHA-256.
/// Over HTTPS it carries the `__Host-` prefix: the browser then refuses any cookie of that
/// name set with a Domain attribute (say, by a notebook host under the portal's domain),
/// so nothing but the portal itself can set or shadow it.
pub fn session_cookie(secure: bool) -> &'static str {
    if secure {
        "__Host-slicehub_session"
    } else {
        "slicehub_session"
    }
}

/// Who sent this request, resolved once by the server's session middleware.
#[derive(Debug, Clone)]
pub struct RequestAuth {
    pub caller: Caller,
    /// The session token from the cookie, when there was one.
    pub token: Option<String>,
    pub address: std::net::IpAddr,
    /// Whether cookies get the `Secure` attribute (the portal is served over HTTPS).
    pub secure_cookies: bool,
}

pub async fn request_auth() -> Result<RequestAuth, AppError> {
    let axum::Extension(auth) = leptos_axum::extract::<axum::Extension<RequestAuth>>()
        .await
        .map_err(|_| AppError::internal("the session middleware did not run"))?;
    Ok(auth)
}

/// The caller, if the one guard lets them do `action`; else 401/403 with its reason.
pub async fn require(action: Action) -> Result<Caller, AppError> {
    use slicehub_core::auth::{authorize, Denied};
    let auth = request_auth().await?;
    match authorize(&auth.caller, &action) {
        Ok(()) => Ok(auth.caller),
        Err(denied @ Denied::NotLoggedIn) => {
            Err(fail(StatusCode::UNAUTHORIZED, denied.to_string()))
        }
        Err(denied) => Err(fail(StatusCode::FORBIDDEN, denied.to_string())),
    }
}

/// A `Set-Cookie` value for every cookie the portal sets: the whole site, not for
/// scripts, sent on top-level navigation from elsewhere (Lax), `Secure` over https.
pub fn cookie_header(name: &str, value: &str, max_age_secs: i64, secure: bool) -> String {
    cookie::Cookie::build((name, value))
        .path("/")
        .http_only(true)
        .same_site(cookie::SameSite::Lax)
        .max_age(cookie::time::Duration::seconds(max_age_secs))
        .secure(secure)
        .build()
        .to_string()
}

/// `Set-Cookie` for a new login (or, with `None`, one that removes the cookie).
pub fn set_session_cookie(token: Option<&str>, max_age_secs: i64, secure: bool) {
    let value = match token {
        Some(token) => cookie_header(session_cookie(secure), token, max_age_secs, secure),
        None => cookie_header(session_cookie(secure), "", 0, secure),
    };
    if let (Some(response), Ok(header)) = (
        use_context::<ResponseOptions>(),
        http::HeaderValue::from_str(&value),
    ) {
        response.append_header(http::header::SET_COOKIE, header);
    }
}

/// The name audit rows give the caller.
pub fn actor(caller: &Caller) -> String {
    match caller {
        Caller::User { username, .. } => username.clone(),
        Caller::Anonymous => "anonymous".to_string(),
    }
}
