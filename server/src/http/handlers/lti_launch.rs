//! LTI 1.3 launches: `/lti/login` (the LMS's login initiation, GET or POST), `POST
//! /lti/launch` (its signed answer), `/lti/continue` (a framed launch going on in a window
//! of its own) and `GET /lti/jwks` (the portal's public key as a tool).
//!
//! An LMS usually shows the tool in a frame, where a browser that blocks third-party
//! cookies keeps no cookie: there the launch ends on a page whose button opens a new
//! window with a one-use ticket (two minutes). That window's `GET /lti/continue` only asks
//! "Continue as NAME?" and signs nobody in (a link another site gives would otherwise
//! sign its visitor in as someone else); its button POSTs the ticket, which the portal's
//! same-origin check covers, and that signs in. A launch in a window of its own, with this
//! browser's cookie back, signs in at once.

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

const TICKET_MS: i64 = 2 * 60_000;

/// The launch cookie's name: over HTTPS with the `__Host-` prefix (Path=/, no Domain), so
/// a notebook host of the same site cannot plant one of its own on a narrower path.
fn browser_cookie(secure: bool) -> &'static str {
    if secure {
        "__Host-slicehub_lti"
    } else {
        "slicehub_lti"
    }
}

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
                "{}={}; Path=/; Max-Age={}; HttpOnly; SameSite=None; Secure",
                browser_cookie(auth.secure_cookies),
                redirect.browser_secret,
                slicehub_sign_in::lti::LAUNCH_MS / 1000
            );
            if let Ok(value) = HeaderValue::from_str(&cookie) {
                answer.headers_mut().append(header::SET_COOKIE, value);
            }
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
    let browser = cookies::values(&headers, browser_cookie(auth.secure_cookies)).into_iter().next();
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
    let frame_origin = Some(launch.frame_origins.join(" ")).filter(|o| !o.is_empty());
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
            crate::lms_roster::sync_in_background(&state, launch.platform.clone(), course.clone()).await;
        }
    }
    let next = format!("/courses/{}", course.code);
    let framed = headers.get("sec-fetch-dest").and_then(|v| v.to_str().ok()).is_some_and(|d| d != "document");
    if launch.same_browser && !framed {
        return sign_in_and_go(&state, &auth, user, &next).await;
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
         <p><a class=\"btn btn-primary\" id=\"open-slicehub\" href=\"/lti/continue?ticket={ticket}\" target=\"_blank\" rel=\"noopener\">Open SliceHub in a new window</a></p>\
         <p class=\"muted\">The button works once, for two minutes. Launch again from the LMS if it has expired.</p>",
        escape(&user.display_name),
        escape(&course.code),
        escape(&course.title),
    );
    html_page(StatusCode::OK, "SliceHub", &body, frame_origin.as_deref())
}

#[derive(Deserialize)]
pub struct Ticket {
    ticket: Option<String>,
}

fn expired() -> Response {
    plain_page(StatusCode::FORBIDDEN, "This link has expired", "It works once, for two minutes. Open SliceHub again from your course in the LMS.", None)
}

fn our_side() -> Response {
    plain_page(StatusCode::SERVICE_UNAVAILABLE, "SliceHub cannot start", "Something went wrong on our side. Try again in a minute.", None)
}

fn ticket_sha256(ticket: Option<&str>) -> Option<String> {
    ticket.filter(|t| t.len() == slicehub_core::auth::SESSION_TOKEN_LEN).map(token_sha256)
}

/// `GET /lti/continue?ticket=…`: who continues where, and a button that POSTs the ticket.
/// Signs nobody in and leaves the ticket unused.
pub async fn continue_page(
    State(state): State<AppState>,
    Extension(auth): Extension<RequestAuth>,
    query: Result<Query<Ticket>, axum::extract::rejection::QueryRejection>,
) -> Response {
    let ticket = query.ok().and_then(|Query(q)| q.ticket);
    let store = &state.services.store;
    let found = match ticket_sha256(ticket.as_deref()) {
        Some(sha) => store.lti_ticket(&sha).await,
        None => Ok(None),
    };
    let (user_id, next) = match found {
        Ok(Some(found)) => found,
        Ok(None) => return expired(),
        Err(e) => {
            tracing::error!(error = %e, "reading a launch ticket failed");
            return our_side();
        }
    };
    let user = match store.user_by_id(user_id).await {
        Ok(Some(user)) if !user.disabled => user,
        _ => return plain_page(StatusCode::FORBIDDEN, "SliceHub cannot start", "This account is disabled. Ask an administrator.", None),
    };
    let code = next.strip_prefix("/courses/").unwrap_or(&next);
    let course = match store.course_by_code(code).await {
        Ok(Some(course)) => format!("<b>{}</b> ({})", escape(&course.code), escape(&course.title)),
        _ => format!("<b>{}</b>", escape(code)),
    };
    let mut body = format!(
        "<p>Continue as <b>{}</b> ({}) in {course}.</p>",
        escape(&user.display_name),
        escape(&user.username)
    );
    if let slicehub_core::auth::Caller::User { id, username, .. } = &auth.caller {
        if *id != user.id {
            body.push_str(&format!(
                "<p class=\"problem\" id=\"other-account\">You are signed in as <b>{}</b>; continuing signs you in as <b>{}</b> instead.</p>",
                escape(username),
                escape(&user.username)
            ));
        }
    }
    body.push_str(&format!(
        "<form method=\"post\" action=\"/lti/continue\"><input type=\"hidden\" name=\"ticket\" value=\"{}\">\
         <button class=\"btn btn-primary\" type=\"submit\" id=\"continue-slicehub\">Continue as {}</button></form>\
         <p class=\"muted\">Not you? Close this window.</p>",
        escape(ticket.as_deref().unwrap_or_default()),
        escape(&user.display_name)
    ));
    no_store(html_page(StatusCode::OK, "Open SliceHub", &body, None))
}

/// `POST /lti/continue` (from the page above; the portal's same-origin check refuses it
/// from anywhere else): takes the ticket and signs in, signing out whoever this browser
/// was signed in as.
pub async fn continue_launch(
    State(state): State<AppState>,
    Extension(auth): Extension<RequestAuth>,
    form: Result<Form<Ticket>, axum::extract::rejection::FormRejection>,
) -> Response {
    let ticket = form.ok().and_then(|Form(f)| f.ticket);
    let services = &state.services;
    let taken = match ticket_sha256(ticket.as_deref()) {
        Some(sha) => services.store.take_lti_ticket(&sha).await,
        None => Ok(None),
    };
    let (user_id, next) = match taken {
        Ok(Some(found)) => found,
        Ok(None) => return expired(),
        Err(e) => {
            tracing::error!(error = %e, "reading a launch ticket failed");
            return our_side();
        }
    };
    let user = match services.store.user_by_id(user_id).await {
        Ok(Some(user)) if !user.disabled => user,
        _ => return plain_page(StatusCode::FORBIDDEN, "SliceHub cannot start", "This account is disabled. Ask an administrator.", None),
    };
    sign_in_and_go(&state, &auth, user, &next).await
}

/// A new login session for `user` in this browser (whoever it was signed in as before is
/// signed out), then on to `next`.
async fn sign_in_and_go(state: &AppState, auth: &RequestAuth, user: slicehub_core::store::User, next: &str) -> Response {
    let services = &state.services;
    match services.auth.open_session_for(user, auth.address).await {
        Ok(ok) => {
            if let Some(old) = &auth.token {
                let _ = services.auth.logout(old).await;
            }
            let max_age = services.auth.policy().absolute_ms / 1000;
            let cookie = cookie_header(session_cookie(auth.secure_cookies), &ok.token, max_age, auth.secure_cookies);
            see_other_with_cookie(next, &cookie)
        }
        Err(e) => {
            tracing::error!(error = %e, "opening a login session after a launch failed");
            our_side()
        }
    }
}

fn no_store(mut answer: Response) -> Response {
    answer.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    answer
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

/// Every registered platform's origins (authentication URL and issuer), so a refusal shows
/// inside whichever LMS framed it.
async fn registered_origins(state: &AppState) -> Option<String> {
    let platforms = state.services.store.lti_platforms().await.ok()?;
    let mut origins: Vec<String> =
        platforms.iter().flat_map(|p| [origin_of(&p.auth_login_url), origin_of(&p.issuer)]).flatten().collect();
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
