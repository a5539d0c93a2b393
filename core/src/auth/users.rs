//! Managing accounts: create, set or reset a password, disable or enable, grant or
//! revoke the administrator role. Each change is audited under `actor`. Listing and
//! lookups are plain store calls (`Store::list_users`, `user_by_username`, `user_by_id`).

use super::password::{check_new_password, PasswordHasher};
use super::tokens::one_time_password;
use super::validate::{check_display_name, check_email, normalize_username};
use crate::store::{NewUserRow, Store, User};
use crate::CoreError;
use crate::UserId;

#[derive(Debug, Clone, Default)]
pub struct NewUser {
    pub username: String,
    pub display_name: String,
    /// Empty or None: no address.
    pub email: Option<String>,
    /// None: a one-time password is generated and returned.
    pub password: Option<String>,
    pub is_admin: bool,
    /// For a given password: must the user replace it at first login? Generated
    /// passwords always must be replaced.
    pub must_change_password: bool,
}

#[derive(Debug, Clone)]
pub struct CreatedUser {
    pub user: User,
    /// The generated password, to show once; None when one was given.
    pub one_time_password: Option<String>,
}

pub async fn add_user(
    store: &Store,
    hasher: &PasswordHasher,
    new: NewUser,
    actor: &str,
) -> Result<CreatedUser, CoreError> {
    let username = normalize_username(&new.username).map_err(CoreError::InvalidRequest)?;
    let display_name = check_display_name(&new.display_name).map_err(CoreError::InvalidRequest)?;
    let email =
        check_email(new.email.as_deref().unwrap_or("")).map_err(CoreError::InvalidRequest)?;
    let (password, one_time) = match new.password {
        Some(password) => {
            check_new_password(&password).map_err(CoreError::InvalidRequest)?;
            (password, false)
        }
        None => (one_time_password()?, true),
    };
    let password_hash = hasher.hash(&password).await?;
    let user = store
        .insert_user(&NewUserRow {
            username: &username,
            display_name: &display_name,
            email: email.as_deref(),
            password_hash: &password_hash,
            is_admin: new.is_admin,
            must_change_password: one_time || new.must_change_password,
        })
        .await?;
    let detail = if user.is_admin { "administrator" } else { "" };
    store
        .audit(actor, "user.create", &user.username, detail)
        .await?;
    Ok(CreatedUser {
        user,
        one_time_password: one_time.then_some(password),
    })
}

/// Sets a password chosen by the user or an administrator; every session of the user ends.
pub async fn set_password(
    store: &Store,
    hasher: &PasswordHasher,
    user_id: UserId,
    password: &str,
    actor: &str,
) -> Result<(), CoreError> {
    check_new_password(password).map_err(CoreError::InvalidRequest)?;
    let user = existing(store, user_id).await?;
    let hash = hasher.hash(password).await?;
    store.replace_password(user_id, &hash, false).await?;
    store
        .audit(actor, "password.change", &user.username, "set")
        .await?;
    Ok(())
}

/// Replaces the password with a generated one-time password (returned, to hand over
/// once); the user must choose a new one at next login. Every session of the user ends.
pub async fn reset_password(
    store: &Store,
    hasher: &PasswordHasher,
    user_id: UserId,
    actor: &str,
) -> Result<String, CoreError> {
    let user = existing(store, user_id).await?;
    let password = one_time_password()?;
    let hash = hasher.hash(&password).await?;
    // A reset is a recovery: whoever held the account may hold its tokens too. They end
    // first, so a reset that fails half-way has still taken them.
    let revoked = store.revoke_all_api_tokens(user_id, crate::store::now_ms()).await?;
    store.replace_password(user_id, &hash, true).await?;
    let detail = match revoked {
        0 => "one-time password".to_string(),
        n => format!("one-time password; {n} API tokens revoked"),
    };
    store.audit(actor, "password.reset", &user.username, &detail).await?;
    Ok(password)
}

/// Disabling ends every session of the user; the last enabled administrator cannot be
/// disabled.
pub async fn set_disabled(
    store: &Store,
    user_id: UserId,
    disabled: bool,
    actor: &str,
) -> Result<(), CoreError> {
    let user = existing(store, user_id).await?;
    store.set_user_disabled(user_id, disabled).await?;
    let action = if disabled {
        "user.disable"
    } else {
        "user.enable"
    };
    store.audit(actor, action, &user.username, "").await?;
    Ok(())
}

/// The last enabled administrator cannot lose the role.
pub async fn set_admin(
    store: &Store,
    user_id: UserId,
    is_admin: bool,
    actor: &str,
) -> Result<(), CoreError> {
    let user = existing(store, user_id).await?;
    store.set_user_admin(user_id, is_admin).await?;
    let detail = if is_admin { "granted" } else { "revoked" };
    store
        .audit(actor, "user.admin", &user.username, detail)
        .await?;
    Ok(())
}

async fn existing(store: &Store, user_id: UserId) -> Result<User, CoreError> {
    store
        .user_by_id(user_id)
        .await?
        .ok_or_else(|| CoreError::NotFound(format!("no user with id {user_id}")))
}
