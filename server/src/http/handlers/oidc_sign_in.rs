//! `GET /login/oidc/NAME`: off to the provider; `GET /login/oidc/NAME/callback`: back from
//! it, signed in; `POST /login/oidc/NAME/link`: a signed-in account attaches that provider's
//! identity to itself; `GET /logout/oidc/NAME`: on to the provider's own sign-out.
//! Problems end on the sign-in page with `?problem=WORD` (`slicehub_app::api::sign_in`).

use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Extension;
use serde::Deserialize;
use slicehub_app::api::auth::{after_login, is_local_path};
use slicehub_app::api::ssr::{cookie_header, session_cookie, Caller, RequestAuth};
use slicehub_core::auth::ExternalSignInError;
use slicehub_sign_in::SignInError;

use crate::http::cookies;
use crate::serve::AppState;

/// The cookie that binds an answer to the browser that began the sign-in. Over HTTPS it
/// carries the `__Host-` prefix (as the session cookie does): no other host of the domain
/// (a notebook host) can then set one of that name, on a more specific path that the
/// browser would send first, to have a victim finish the planter's sign-in.
fn browser_cookie(secure: bool) -> &'static str {
    if secure {
        "__Host-slicehub_sign_in"
    } else {
        "slicehub_sign_in"
    }
}

/// The secrets of the attempts begun in this browser (its sign-in cookie holds those of
/// the last few, so that tabs signing in at once do not undo each other). None when the
/// browser sent more than one cookie of the name: one was set by someone else, and which
/// is which cannot be told.
fn held_secrets(headers: &HeaderMap, secure: bool) -> Vec<String> {
    match cookies::values(headers, browser_cookie(secure)).as_slice() {
        [one] => slicehub_sign_in::oidc::browser_secrets(one).into_iter().map(str::to_string).collect(),
        _ => Vec::new(),
    }
}

/// `Set-Cookie` for the sign-in cookie holding `secrets` (removing it when there are none).
fn browser_cookie_header(secrets: &[&str], secure: bool) -> String {
    match secrets.split_first() {
        Some((newest, others)) => cookie_header(
            browser_cookie(secure),
            &slicehub_sign_in::oidc::browser_cookie_value(newest, others),
            slicehub_sign_in::oidc::ATTEMPT_MS / 1000,
            secure,
        ),
        None => cookie_header(browser_cookie(secure), "", 0, secure),
    }
}

#[derive(Deserialize)]
pub struct BeginQuery {
    next: Option<String>,
}

pub async fn begin(
    State(state): State<AppState>,
    Extension(auth): Extension<RequestAuth>,
    Path(name): Path<String>,
    Query(query): Query<BeginQuery>,
    headers: HeaderMap,
) -> Response {
    let next = query.next.filter(|p| is_local_path(p));
    start(&state, &auth, &headers, &name, next, None).await
}

pub async fn link(
    State(state): State<AppState>,
    Extension(auth): Extension<RequestAuth>,
    Path(name): Path<String>,
    headers: HeaderMap,
) -> Response {
    match &auth.caller {
        Caller::User { id, .. } => start(&state, &auth, &headers, &name, Some("/account".to_string()), Some(*id)).await,
        Caller::Anonymous => see_other("/login?next=/account"),
    }
}

async fn start(
    state: &AppState,
    auth: &RequestAuth,
    headers: &HeaderMap,
    name: &str,
    next: Option<String>,
    link_user: Option<slicehub_core::UserId>,
) -> Response {
    let Some(provider) = state.oidc.get(name) else {
        return (StatusCode::NOT_FOUND, "There is no such sign-in provider.").into_response();
    };
    match provider.begin(&state.services.store, next, link_user).await {
        Ok(begun) => {
            let held = held_secrets(headers, auth.secure_cookies);
            let mut secrets = vec![begun.browser_secret.as_str()];
            secrets.extend(held.iter().map(String::as_str));
            let cookie = browser_cookie_header(&secrets, auth.secure_cookies);
            redirect_with_cookies(&begun.authorize_url, &[cookie])
        }
        Err(e) => problem(name, &e),
    }
}

#[derive(Deserialize)]
pub struct CallbackQuery {
    code: Option<String>,
    state: Option<String>,
    error: Option<String>,
}

pub async fn callback(
    State(state): State<AppState>,
    Extension(auth): Extension<RequestAuth>,
    Path(name): Path<String>,
    Query(query): Query<CallbackQuery>,
    headers: HeaderMap,
) -> Response {
    let Some(provider) = state.oidc.get(&name) else {
        return (StatusCode::NOT_FOUND, "There is no such sign-in provider.").into_response();
    };
    // The browser's sign-in cookie is left as it is when no attempt was used up: another
    // tab of it may be signing in still (its secrets expire with their attempts).
    let (Some(code), Some(answer_state)) = (query.code, query.state) else {
        let word = if query.error.as_deref() == Some("access_denied") { "denied" } else { "refused" };
        return see_other(&format!("/login?problem={word}"));
    };
    let held = held_secrets(&headers, auth.secure_cookies);
    let held: Vec<&str> = held.iter().map(String::as_str).collect();
    let store = &state.services.store;
    let finished = match provider.finish(store, &code, &answer_state, &held).await {
        Ok(finished) => finished,
        Err(e) => {
            if let SignInError::Refused(words) | SignInError::Unusable(words) = &e {
                let _ = store.audit("anonymous", "login.failure", &provider.config.key(), words).await;
            }
            return problem(&name, &e);
        }
    };
    // The used secret goes; those of the browser's other attempts stay.
    let rest: Vec<&str> = held.iter().copied().filter(|s| *s != finished.browser_secret).collect();
    let browser_after = browser_cookie_header(&rest, auth.secure_cookies);
    let signed_in = state
        .services
        .auth
        .sign_in_external(&finished.identity, &provider.config.roles, finished.link_user_id, auth.address)
        .await;
    let ok = match signed_in {
        Ok(ok) => ok,
        Err(e) => {
            let word = match &e {
                ExternalSignInError::NameTaken(_) => "name-taken",
                ExternalSignInError::AttachedElsewhere => "attached-elsewhere",
                ExternalSignInError::Unusable(_) => "unusable",
                ExternalSignInError::Disabled => "disabled",
                ExternalSignInError::Internal(inner) => {
                    tracing::error!(provider = %name, error = %inner, "sign-in through a provider failed");
                    "unavailable"
                }
            };
            return redirect_with_cookies(&format!("/login?problem={word}"), &[browser_after]);
        }
    };
    if let Some(old) = &auth.token {
        let _ = state.services.auth.logout(old).await;
    }
    let max_age = state.services.auth.policy().absolute_ms / 1000;
    let session = cookie_header(session_cookie(auth.secure_cookies), &ok.token, max_age, auth.secure_cookies);
    let next = after_login(finished.next_path.as_deref()).to_string();
    redirect_with_cookies(&next, &[browser_after, session])
}

/// On to the provider's own sign-out page, when it has one; the portal's login has ended
/// already (the sign-out button).
pub async fn end_session(State(state): State<AppState>, Path(name): Path<String>) -> Response {
    let Some(provider) = state.oidc.get(&name) else {
        return (StatusCode::NOT_FOUND, "There is no such sign-in provider.").into_response();
    };
    match provider.end_session_url().await {
        Some(url) => match url::Url::parse_with_params(&url, &[("client_id", provider.config.client_id.as_str())]) {
            Ok(url) => see_other(url.as_str()),
            Err(_) => see_other("/login?signed_out=1"),
        },
        None => see_other("/login?signed_out=1"),
    }
}

fn problem(name: &str, e: &SignInError) -> Response {
    let word = match e {
        SignInError::Refused(words) if words.contains("another browser") => "other-browser",
        SignInError::Refused(words) if words.contains("stale") => "stale",
        SignInError::Refused(_) => "refused",
        SignInError::Unusable(_) => "unusable",
        SignInError::Provider(detail) => {
            tracing::warn!(provider = name, detail, "sign-in provider unavailable");
            "unavailable"
        }
        SignInError::Core(inner) => {
            tracing::error!(provider = name, error = %inner, "sign-in failed");
            "unavailable"
        }
    };
    see_other(&format!("/login?problem={word}"))
}

fn see_other(location: &str) -> Response {
    redirect_with_cookies(location, &[])
}

fn redirect_with_cookies(location: &str, cookies: &[String]) -> Response {
    let mut answer = StatusCode::SEE_OTHER.into_response();
    if let Ok(value) = HeaderValue::from_str(location) {
        answer.headers_mut().insert(header::LOCATION, value);
    }
    for cookie in cookies {
        append_cookie(&mut answer, cookie);
    }
    answer
}

fn append_cookie(answer: &mut Response, cookie: &str) {
    if let Ok(value) = HeaderValue::from_str(cookie) {
        answer.headers_mut().append(header::SET_COOKIE, value);
    }
}
