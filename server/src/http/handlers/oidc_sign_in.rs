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

/// The cookie that binds an answer to the browser that began the sign-in.
const BROWSER_COOKIE: &str = "slicehub_sign_in";

#[derive(Deserialize)]
pub struct BeginQuery {
    next: Option<String>,
}

pub async fn begin(
    State(state): State<AppState>,
    Extension(auth): Extension<RequestAuth>,
    Path(name): Path<String>,
    Query(query): Query<BeginQuery>,
) -> Response {
    let next = query.next.filter(|p| is_local_path(p));
    start(&state, &auth, &name, next, None).await
}

pub async fn link(State(state): State<AppState>, Extension(auth): Extension<RequestAuth>, Path(name): Path<String>) -> Response {
    match &auth.caller {
        Caller::User { id, .. } => start(&state, &auth, &name, Some("/account".to_string()), Some(*id)).await,
        Caller::Anonymous => see_other("/login?next=/account"),
    }
}

async fn start(
    state: &AppState,
    auth: &RequestAuth,
    name: &str,
    next: Option<String>,
    link_user: Option<slicehub_core::UserId>,
) -> Response {
    let Some(provider) = state.oidc.get(name) else {
        return (StatusCode::NOT_FOUND, "There is no such sign-in provider.").into_response();
    };
    match provider.begin(&state.services.store, next, link_user).await {
        Ok(begun) => {
            let cookie = cookie_header(BROWSER_COOKIE, &begun.browser_secret, slicehub_sign_in::oidc::ATTEMPT_MS / 1000, auth.secure_cookies);
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
    let forget_browser = cookie_header(BROWSER_COOKIE, "", 0, auth.secure_cookies);
    let (Some(code), Some(answer_state)) = (query.code, query.state) else {
        let word = if query.error.as_deref() == Some("access_denied") { "denied" } else { "refused" };
        return redirect_with_cookies(&format!("/login?problem={word}"), &[forget_browser]);
    };
    let browser = cookies::values(&headers, BROWSER_COOKIE).into_iter().next();
    let store = &state.services.store;
    let finished = match provider.finish(store, &code, &answer_state, browser.as_deref()).await {
        Ok(finished) => finished,
        Err(e) => {
            if let SignInError::Refused(words) | SignInError::Unusable(words) = &e {
                let _ = store.audit("anonymous", "login.failure", &provider.config.key(), words).await;
            }
            let mut answer = problem(&name, &e);
            append_cookie(&mut answer, &forget_browser);
            return answer;
        }
    };
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
            return redirect_with_cookies(&format!("/login?problem={word}"), &[forget_browser]);
        }
    };
    if let Some(old) = &auth.token {
        let _ = state.services.auth.logout(old).await;
    }
    let max_age = state.services.auth.policy().absolute_ms / 1000;
    let session = cookie_header(session_cookie(auth.secure_cookies), &ok.token, max_age, auth.secure_cookies);
    let next = after_login(finished.next_path.as_deref()).to_string();
    redirect_with_cookies(&next, &[forget_browser, session])
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
