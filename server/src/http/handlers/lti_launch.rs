//! LTI 1.3 launches: `/lti/login` (the LMS's login initiation, GET or POST), `POST
//! /lti/launch` (its signed answer), `GET /lti/continue` (a framed launch going on in a
//! window of its own) and `GET /lti/jwks` (the portal's public key as a tool).
//!
//! An LMS usually shows the tool in a frame, where a browser that blocks third-party
//! cookies keeps no cookie: there the launch ends on a page whose button opens the course
//! in a new window with a one-use ticket (two minutes). A launch in a window of its own,
//! with this browser's cookie back, signs in at once.

use axum::extract::{Form, Query, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use axum::{Extension, Json};
use serde::Deserialize;
use slicehub_app::api::ssr::{cookie_header, session_cookie, RequestAuth};
use slicehub_core::auth::{new_session_token, token_sha256};
use slicehub_core::courses::lms::{place_launch, LaunchRefused};
use slicehub_sign_in::lti::{begin_login, verify_launch, LoginInitiation, ToolKey};
use slicehub_sign_in::SignInError;

use crate::http::cookies;
use crate::serve::AppState;

const BROWSER_COOKIE: &str = "slicehub_lti";
const TICKET_MS: i64 = 2 * 60_000;

pub async fn login_get(
    State(state): State<AppState>,
    Extension(auth): Extension<RequestAuth>,
    login: Result<Query<LoginInitiation>, axum::extract::rejection::QueryRejection>,
) -> Response {
    match login {
        Ok(Query(login)) => start_login(&state, &auth, &login).await,
        Err(_) => not_a_launch(),
    }
}

pub async fn login_post(
    State(state): State<AppState>,
    Extension(auth): Extension<RequestAuth>,
    login: Result<Form<LoginInitiation>, axum::extract::rejection::FormRejection>,
) -> Response {
    match login {
        Ok(Form(login)) => start_login(&state, &auth, &login).await,
        Err(_) => not_a_launch(),
    }
}

fn not_a_launch() -> Response {
    plain_page(
        StatusCode::BAD_REQUEST,
        "SliceHub cannot start",
        "This address is where an LMS starts a launch, with the fields LTI 1.3 names (iss, login_hint, target_link_uri). Open SliceHub from your course in the LMS.",
        None,
    )
}

async fn start_login(state: &AppState, auth: &RequestAuth, login: &LoginInitiation) -> Response {
    let tool_url = state.services.config.public_url();
    match begin_login(&state.services.store, &tool_url, login).await {
        Ok(redirect) => {
            let mut answer = StatusCode::FOUND.into_response();
            if let Ok(location) = HeaderValue::from_str(&redirect.url) {
                answer.headers_mut().insert(header::LOCATION, location);
            }
            // Sent back on the platform's cross-site POST only as SameSite=None (which
            // browsers allow only with Secure; on plain HTTP it is simply not kept).
            let cookie = format!(
                "{BROWSER_COOKIE}={}; Path=/lti; Max-Age={}; HttpOnly; SameSite=None; Secure",
                redirect.browser_secret,
                slicehub_sign_in::lti::LAUNCH_MS / 1000
            );
            if let Ok(value) = HeaderValue::from_str(&cookie) {
                answer.headers_mut().append(header::SET_COOKIE, value);
            }
            let _ = auth;
            answer
        }
        Err(e) => {
            let frames = registered_origins(state).await;
            plain_page(StatusCode::BAD_REQUEST, "SliceHub cannot start", &words(&e), frames.as_deref())
        }
    }
}

#[derive(Deserialize)]
pub struct LaunchForm {
    id_token: Option<String>,
    state: Option<String>,
    error: Option<String>,
}

pub async fn launch(
    State(state): State<AppState>,
    Extension(auth): Extension<RequestAuth>,
    headers: HeaderMap,
    form: Result<Form<LaunchForm>, axum::extract::rejection::FormRejection>,
) -> Response {
    let Ok(Form(form)) = form else {
        return not_a_launch();
    };
    let (Some(id_token), Some(answer_state)) = (form.id_token, form.state) else {
        let why = if form.error.is_some() { "The LMS did not complete the launch." } else { "The launch came without its token." };
        return plain_page(StatusCode::BAD_REQUEST, "SliceHub cannot start", why, None);
    };
    let services = &state.services;
    let browser = cookies::values(&headers, BROWSER_COOKIE).into_iter().next();
    let launch = match verify_launch(&services.store, &state.lti_keys, &state.lti_http, &id_token, &answer_state, browser.as_deref()).await {
        Ok(launch) => launch,
        Err(e) => {
            if let SignInError::Refused(words) = &e {
                let _ = services.store.audit("anonymous", "login.failure", "lti", words).await;
            }
            let frames = registered_origins(&state).await;
            return plain_page(StatusCode::FORBIDDEN, "SliceHub cannot start", &words(&e), frames.as_deref());
        }
    };
    let frame_origin = origin_of(&launch.platform.auth_login_url);
    let (user, course) = match place_launch(&services.store, &launch.platform, &launch.course, &launch.person).await {
        Ok(placed) => placed,
        Err(LaunchRefused::Internal(e)) => {
            tracing::error!(error = %e, "placing an LTI launch failed");
            return plain_page(StatusCode::SERVICE_UNAVAILABLE, "SliceHub cannot start", "Something went wrong on our side. Try again in a minute.", frame_origin.as_deref());
        }
        Err(refusal) => return plain_page(StatusCode::FORBIDDEN, "SliceHub cannot start", &refusal.to_string(), frame_origin.as_deref()),
    };
    if let Some(url) = &launch.memberships_url {
        let _ = services.store.set_lti_memberships_url(launch.platform.id, &launch.course.context_id, url).await;
        if launch.person.role == Some(slicehub_core::store::Role::Instructor) {
            crate::lms_roster::sync_in_background(&state, launch.platform.clone(), course.clone(), url.clone());
        }
    }
    let next = format!("/courses/{}", course.code);
    let framed = headers.get("sec-fetch-dest").and_then(|v| v.to_str().ok()).is_some_and(|d| d != "document");
    if launch.same_browser && !framed {
        return match services.auth.open_session_for(user, auth.address).await {
            Ok(ok) => {
                let max_age = services.auth.policy().absolute_ms / 1000;
                let cookie = cookie_header(session_cookie(auth.secure_cookies), &ok.token, max_age, auth.secure_cookies);
                see_other_with_cookie(&next, &cookie)
            }
            Err(e) => {
                tracing::error!(error = %e, "opening a login session after a launch failed");
                plain_page(StatusCode::SERVICE_UNAVAILABLE, "SliceHub cannot start", "Something went wrong on our side. Try again in a minute.", None)
            }
        };
    }
    let ticket = match new_session_token() {
        Ok(ticket) => ticket,
        Err(e) => {
            tracing::error!(error = %e, "no random ticket");
            return plain_page(StatusCode::SERVICE_UNAVAILABLE, "SliceHub cannot start", "Something went wrong on our side. Try again in a minute.", None);
        }
    };
    let expires = slicehub_app::api::ssr::now_ms() + TICKET_MS;
    if let Err(e) = services.store.insert_lti_ticket(&token_sha256(&ticket), user.id, &next, expires).await {
        tracing::error!(error = %e, "storing a launch ticket failed");
        return plain_page(StatusCode::SERVICE_UNAVAILABLE, "SliceHub cannot start", "Something went wrong on our side. Try again in a minute.", None);
    }
    let body = format!(
        "<p>You are <b>{}</b> in <b>{}</b> ({}).</p>\
         <p>SliceHub opens in a window of its own, so your notebooks have the whole screen and your browser keeps you signed in.</p>\
         <p><a class=\"btn\" id=\"open-slicehub\" href=\"/lti/continue?ticket={ticket}\" target=\"_blank\" rel=\"opener\">Open SliceHub in a new window</a></p>\
         <p class=\"muted\">The button works once, for two minutes. Launch again from the LMS if it has expired.</p>",
        escape(&user.display_name),
        escape(&course.code),
        escape(&course.title),
    );
    html_page(StatusCode::OK, "SliceHub", &body, frame_origin.as_deref())
}

#[derive(Deserialize)]
pub struct TicketQuery {
    ticket: Option<String>,
}

pub async fn continue_launch(
    State(state): State<AppState>,
    Extension(auth): Extension<RequestAuth>,
    query: Result<Query<TicketQuery>, axum::extract::rejection::QueryRejection>,
) -> Response {
    let query = query.map(|Query(q)| q).unwrap_or(TicketQuery { ticket: None });
    let services = &state.services;
    let taken = match query.ticket.as_deref() {
        Some(ticket) if ticket.len() == slicehub_core::auth::SESSION_TOKEN_LEN => services.store.take_lti_ticket(&token_sha256(ticket)).await,
        _ => Ok(None),
    };
    let (user_id, next) = match taken {
        Ok(Some(found)) => found,
        Ok(None) => return plain_page(StatusCode::FORBIDDEN, "This link has expired", "It works once, for two minutes. Open SliceHub again from your course in the LMS.", None),
        Err(e) => {
            tracing::error!(error = %e, "reading a launch ticket failed");
            return plain_page(StatusCode::SERVICE_UNAVAILABLE, "SliceHub cannot start", "Something went wrong on our side. Try again in a minute.", None);
        }
    };
    let user = match services.store.user_by_id(user_id).await {
        Ok(Some(user)) if !user.disabled => user,
        _ => return plain_page(StatusCode::FORBIDDEN, "SliceHub cannot start", "This account is disabled. Ask an administrator.", None),
    };
    match services.auth.open_session_for(user, auth.address).await {
        Ok(ok) => {
            if let Some(old) = &auth.token {
                let _ = services.auth.logout(old).await;
            }
            let max_age = services.auth.policy().absolute_ms / 1000;
            let cookie = cookie_header(session_cookie(auth.secure_cookies), &ok.token, max_age, auth.secure_cookies);
            see_other_with_cookie(&next, &cookie)
        }
        Err(e) => {
            tracing::error!(error = %e, "opening a login session after a launch failed");
            plain_page(StatusCode::SERVICE_UNAVAILABLE, "SliceHub cannot start", "Something went wrong on our side. Try again in a minute.", None)
        }
    }
}

pub async fn jwks(State(state): State<AppState>) -> Response {
    match ToolKey::load_or_make(&state.services.store).await {
        Ok(key) => Json(key.jwks()).into_response(),
        Err(e) => {
            tracing::error!(error = %e, "the LTI tool key is unavailable");
            (StatusCode::SERVICE_UNAVAILABLE, "The portal's key is unavailable; try again in a minute.").into_response()
        }
    }
}

fn words(e: &SignInError) -> String {
    if let SignInError::Provider(detail) = e {
        tracing::warn!(detail, "LTI platform problem");
    }
    e.plain()
}

/// Every registered platform's origin, so a refusal shows inside whichever LMS framed it.
async fn registered_origins(state: &AppState) -> Option<String> {
    let platforms = state.services.store.lti_platforms().await.ok()?;
    let mut origins: Vec<String> = platforms.iter().filter_map(|p| origin_of(&p.auth_login_url)).collect();
    origins.sort();
    origins.dedup();
    (!origins.is_empty()).then(|| origins.join(" "))
}

fn origin_of(url: &str) -> Option<String> {
    let url = url::Url::parse(url).ok()?;
    Some(url.origin().ascii_serialization()).filter(|o| o != "null")
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;").replace('\'', "&#39;")
}

fn plain_page(status: StatusCode, title: &str, words: &str, frame_origin: Option<&str>) -> Response {
    html_page(status, title, &format!("<p class=\"problem\">{}</p>", escape(words)), frame_origin)
}

/// A page of its own (no scripts): the launch happens before any portal page can load, and
/// only the platform may frame it.
fn html_page(status: StatusCode, title: &str, body: &str, frame_origin: Option<&str>) -> Response {
    let html = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{title}</title><link rel=\"stylesheet\" href=\"/pkg/slicehub.css\"></head>\
         <body><main class=\"main\"><section class=\"card auth-card lti-launch\"><h1>{title}</h1>{body}</section></main></body></html>",
        title = escape(title)
    );
    let mut answer = (status, Html(html)).into_response();
    let ancestors = frame_origin.map(|o| format!("'self' {o}")).unwrap_or_else(|| "'none'".to_string());
    let csp = format!("default-src 'self'; script-src 'none'; style-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors {ancestors}");
    if let Ok(value) = HeaderValue::from_str(&csp) {
        answer.headers_mut().insert(header::CONTENT_SECURITY_POLICY, value);
    }
    answer
}

fn see_other_with_cookie(location: &str, cookie: &str) -> Response {
    let mut answer = StatusCode::SEE_OTHER.into_response();
    if let Ok(value) = HeaderValue::from_str(location) {
        answer.headers_mut().insert(header::LOCATION, value);
    }
    if let Ok(value) = HeaderValue::from_str(cookie) {
        answer.headers_mut().append(header::SET_COOKIE, value);
    }
    answer
}
