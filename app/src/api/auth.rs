//! Signing in and out, who is signed in, and changing one's own password.

use leptos::prelude::*;
use crate::error::AppError;

use crate::views::Me;

/// The signed-in user, or `None` for an anonymous visitor.
#[server(endpoint = "current_user")]
pub async fn current_user() -> Result<Option<Me>, AppError> {
    use super::ssr::{request_auth, services, Caller};
    use crate::views::CourseRef;

    let auth = request_auth().await?;
    let Caller::User { id, .. } = auth.caller else {
        return Ok(None);
    };
    let services = services()?;
    let user = services
        .store
        .user_by_id(id)
        .await?;
    let Some(user) = user else { return Ok(None) };
    let courses = services
        .store
        .courses_of_user(id)
        .await?;
    Ok(Some(Me {
        username: user.username,
        display_name: user.display_name,
        is_admin: user.is_admin,
        must_change_password: user.must_change_password,
        courses: courses
            .into_iter()
            .map(|(course, role)| CourseRef {
                code: course.code,
                title: course.title,
                role,
            })
            .collect(),
    }))
}

/// Where a sign-in goes next: `next` when it is a path on this site, otherwise `/`.
pub fn after_login(next: Option<&str>) -> &str {
    match next {
        Some(path) if is_local_path(path) && !is_login_path(path) => path,
        _ => "/",
    }
}

/// A path on this site: one leading `/` not followed by another `/` or a `\` (browsers
/// read both `//host` and `/\host` as another site), no backslash, space or control
/// character anywhere (browsers drop tabs and newlines, so `/\t/host` is `//host`), and
/// so no scheme either.
pub fn is_local_path(path: &str) -> bool {
    let mut chars = path.chars();
    chars.next() == Some('/')
        && !matches!(chars.next(), Some('/' | '\\'))
        && !path
            .chars()
            .any(|c| c == '\\' || c.is_whitespace() || c.is_control())
}

/// The sign-in page itself, where going back would only ask again.
fn is_login_path(path: &str) -> bool {
    let page = path
        .split(|c| c == '?' || c == '#')
        .next()
        .unwrap_or_default();
    page.trim_end_matches('/') == "/login"
}

/// The sign-in page's address that comes back to `here` (a path with its query) after.
pub fn login_path_for(here: &str) -> String {
    if !is_local_path(here) || here == "/" || is_login_path(here) {
        return "/login".to_string();
    }
    // Everything but unreserved characters and `/` is encoded: the query survives whole.
    const NEXT: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
        .remove(b'-')
        .remove(b'_')
        .remove(b'.')
        .remove(b'~')
        .remove(b'/');
    format!("/login?next={}", percent_encoding::utf8_percent_encode(here, NEXT))
}

/// Checks the password, opens a session (a fresh token each time) and goes to `next` (a
/// page of this site the visitor was sent here from, see [`after_login`]) or home, or to
/// the account page when a one-time password must be replaced first.
#[server(endpoint = "login")]
pub async fn login(
    username: String,
    password: String,
    next: Option<String>,
) -> Result<(), AppError> {
    use super::ssr::{fail, request_auth, services, set_session_cookie};
    use http::StatusCode;
    use slicehub_core::auth::LoginError;

    let auth = request_auth().await?;
    let services = services()?;
    match services
        .auth
        .login(&username, &password, auth.address)
        .await
    {
        Ok(ok) => {
            // The session this browser had before (if any) ends: a login always rotates.
            if let Some(old) = &auth.token {
                let _ = services.auth.logout(old).await;
            }
            let max_age = services.auth.policy().absolute_ms / 1000;
            set_session_cookie(Some(&ok.token), max_age, auth.secure_cookies);
            leptos_axum::redirect(if ok.user.must_change_password {
                "/account"
            } else {
                after_login(next.as_deref())
            });
            Ok(())
        }
        Err(e @ LoginError::WrongCredentials) => Err(fail(StatusCode::UNAUTHORIZED, e.to_string())),
        Err(e @ LoginError::RateLimited { .. }) => {
            Err(fail(StatusCode::TOO_MANY_REQUESTS, e.to_string()))
        }
        Err(LoginError::Refused(words)) => Err(fail(StatusCode::FORBIDDEN, words)),
        Err(LoginError::Internal(e)) => Err(super::ssr::from_core(e)),
    }
}

#[server(endpoint = "logout")]
pub async fn logout() -> Result<(), AppError> {
    use super::ssr::{request_auth, services, set_session_cookie};

    let auth = request_auth().await?;
    if let Some(token) = &auth.token {
        services()?
            .auth
            .logout(token)
            .await?;
    }
    set_session_cookie(None, 0, auth.secure_cookies);
    leptos_axum::redirect("/login?signed_out=1");
    Ok(())
}

/// Every session of the user ends; this browser gets a new one.
#[server(endpoint = "change_password")]
pub async fn change_password(
    current: String,
    new_password: String,
    confirm: String,
) -> Result<(), AppError> {
    use super::ssr::{fail, request_auth, require, services, set_session_cookie, Action, Caller};
    use http::StatusCode;

    let Caller::User { id, .. } = require(Action::ChangeOwnPassword).await? else {
        return Err(fail(StatusCode::UNAUTHORIZED, "Please log in."));
    };
    if new_password != confirm {
        return Err(fail(
            StatusCode::BAD_REQUEST,
            "The two new passwords differ.",
        ));
    }
    let auth = request_auth().await?;
    let services = services()?;
    let ok = services
        .auth
        .change_own_password(id, &current, &new_password, auth.address)
        .await?;
    let max_age = services.auth.policy().absolute_ms / 1000;
    set_session_cookie(Some(&ok.token), max_age, auth.secure_cookies);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{after_login, is_local_path, login_path_for};

    #[test]
    fn only_local_paths_are_followed() {
        assert_eq!(
            after_login(Some("/courses/CS-101/class")),
            "/courses/CS-101/class"
        );
        assert_eq!(
            after_login(Some("/admin/sessions?course=CS-101&user=ben")),
            "/admin/sessions?course=CS-101&user=ben"
        );
        for bad in [
            "",
            "courses",
            "//evil.example",
            "/\\evil.example",
            "/\\/evil.example",
            "\\\\evil.example",
            "https://evil.example",
            "javascript:alert(1)",
            "/\t/evil.example",
            "/\n/evil.example",
            "/ /evil.example",
            "/login",
            "/login?next=/login",
        ] {
            assert_eq!(after_login(Some(bad)), "/", "{bad:?}");
        }
        assert_eq!(after_login(None), "/");
        assert!(!is_local_path("/a\\b"));
    }

    #[test]
    fn the_way_back_is_encoded() {
        assert_eq!(
            login_path_for("/courses/CS-101/class"),
            "/login?next=/courses/CS-101/class"
        );
        assert_eq!(
            login_path_for("/admin/sessions?course=CS%20101&user=b"),
            "/login?next=/admin/sessions%3Fcourse%3DCS%2520101%26user%3Db"
        );
        assert_eq!(login_path_for("/"), "/login");
        assert_eq!(login_path_for("//evil.example"), "/login");
    }
}
