//! Administering accounts.

use leptos::prelude::*;
use crate::error::AppError;

use crate::views::{OneTimePassword, UserRow};
use crate::views::UserId;

#[server(endpoint = "list_users")]
pub async fn list_users() -> Result<Vec<UserRow>, AppError> {
    use super::ssr::{require, services, Action};
    require(Action::ListUsers).await?;
    let services = services()?;
    let users = services.store.list_users().await?;
    let with_password = services.store.users_with_password().await?;
    let platforms = services.store.lti_platforms().await?;
    let mut sources_of: std::collections::HashMap<_, Vec<String>> = std::collections::HashMap::new();
    for identity in services.store.all_identities().await? {
        let label = super::sign_in::source_label(&services.config, &platforms, &identity.provider);
        sources_of.entry(identity.user_id).or_default().push(label);
    }
    Ok(users
        .into_iter()
        .map(|u| UserRow {
            sources: with_password
                .contains(&u.id)
                .then(|| "Password".to_string())
                .into_iter()
                .chain(sources_of.remove(&u.id).unwrap_or_default())
                .collect(),
            id: u.id,
            username: u.username,
            display_name: u.display_name,
            email: u.email.unwrap_or_default(),
            is_admin: u.is_admin,
            disabled: u.disabled,
            must_change_password: u.must_change_password,
        })
        .collect())
}

/// A new account with a one-time password, shown once.
#[server(endpoint = "add_account")]
pub async fn add_account(
    username: String,
    display_name: String,
    email: String,
    admin: Option<String>,
) -> Result<OneTimePassword, AppError> {
    use super::ssr::{actor, require, services, Action};
    use slicehub_core::auth::{add_user, NewUser};
    let caller = require(Action::CreateUser).await?;
    let services = services()?;
    let created = add_user(
        &services.store,
        services.auth.hasher(),
        NewUser {
            username,
            display_name,
            email: Some(email),
            password: None,
            is_admin: admin.is_some(),
            must_change_password: true,
        },
        &actor(&caller),
    )
    .await?;
    Ok(OneTimePassword {
        username: created.user.username,
        password: created.one_time_password.unwrap_or_default(),
    })
}

#[server(endpoint = "reset_account_password")]
pub async fn reset_account_password(user_id: UserId) -> Result<OneTimePassword, AppError> {
    use super::ssr::{actor, require, services, Action};
    use slicehub_core::auth::reset_password;
    let caller = require(Action::ResetPassword(user_id)).await?;
    let services = services()?;
    let password = reset_password(
        &services.store,
        services.auth.hasher(),
        user_id,
        &actor(&caller),
    )
    .await?;
    let user = services
        .store
        .user_by_id(user_id)
        .await?;
    Ok(OneTimePassword {
        username: user.map(|u| u.username).unwrap_or_default(),
        password,
    })
}

#[server(endpoint = "set_account_disabled")]
pub async fn set_account_disabled(user_id: UserId, disabled: bool) -> Result<(), AppError> {
    use super::ssr::{actor, from_core, require, services, Action};
    use slicehub_core::auth::set_disabled;
    let caller = require(Action::DisableUser(user_id)).await?;
    set_disabled(&services()?.store, user_id, disabled, &actor(&caller))
        .await
        .map_err(from_core)
}
