//! Signing in and out, who is signed in, and changing one's own password.

use leptos::prelude::*;

use crate::views::Me;

/// The signed-in user, or `None` for an anonymous visitor.
#[server(endpoint = "current_user")]
pub async fn current_user() -> Result<Option<Me>, ServerFnError> {
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
        .await
        .map_err(super::ssr::from_core)?;
    let Some(user) = user else { return Ok(None) };
    let courses = services
        .store
        .courses_of_user(id)
        .await
        .map_err(super::ssr::from_core)?;
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
                role: role.as_str().to_string(),
            })
            .collect(),
    }))
}

/// Checks the password, opens a session (a fresh token each time) and goes home, or to
/// the account page when a one-time password must be replaced first.
#[server(endpoint = "login")]
pub async fn login(username: String, password: String) -> Result<(), ServerFnError> {
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
                "/"
            });
            Ok(())
        }
        Err(e @ LoginError::WrongCredentials) => Err(fail(StatusCode::UNAUTHORIZED, e.to_string())),
        Err(e @ LoginError::RateLimited { .. }) => {
            Err(fail(StatusCode::TOO_MANY_REQUESTS, e.to_string()))
        }
        Err(LoginError::Internal(e)) => Err(super::ssr::from_core(e)),
    }
}

#[server(endpoint = "logout")]
pub async fn logout() -> Result<(), ServerFnError> {
    use super::ssr::{request_auth, services, set_session_cookie};

    let auth = request_auth().await?;
    if let Some(token) = &auth.token {
        services()?
            .auth
            .logout(token)
            .await
            .map_err(super::ssr::from_core)?;
    }
    set_session_cookie(None, 0, auth.secure_cookies);
    leptos_axum::redirect("/login");
    Ok(())
}

/// Every session of the user ends; this browser gets a new one.
#[server(endpoint = "change_password")]
pub async fn change_password(
    current: String,
    new_password: String,
    confirm: String,
) -> Result<(), ServerFnError> {
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
        .await
        .map_err(super::ssr::from_core)?;
    let max_age = services.auth.policy().absolute_ms / 1000;
    set_session_cookie(Some(&ok.token), max_age, auth.secure_cookies);
    Ok(())
}
