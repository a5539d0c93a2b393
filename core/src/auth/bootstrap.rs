use super::password::{check_new_password, PasswordHasher};
use super::tokens::one_time_password;
use crate::store::{NewUserRow, Store};
use crate::CoreError;

pub const FIRST_ADMIN_USERNAME: &str = "admin";

/// The first administrator, made on a database without users. The caller shows the
/// password once (it is not stored anywhere in clear).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bootstrap {
    pub username: String,
    pub password: String,
    /// True when no password was given: it is a one-time password, to be replaced at
    /// first login.
    pub generated: bool,
}

/// On a database with no users, creates `admin` with `password_from_env` (which must
/// follow the password rule; empty counts as absent) or a generated one-time password.
/// On any later start, and when another process created the first account meanwhile,
/// returns None.
pub async fn ensure_first_admin(
    store: &Store,
    hasher: &PasswordHasher,
    password_from_env: Option<String>,
) -> Result<Option<Bootstrap>, CoreError> {
    if store.count_users().await? > 0 {
        return Ok(None);
    }
    let (password, generated) = match password_from_env.filter(|p| !p.trim().is_empty()) {
        Some(password) => {
            check_new_password(&password).map_err(|rule| {
                CoreError::InvalidRequest(format!("the first administrator's password: {rule}"))
            })?;
            (password, false)
        }
        None => (one_time_password()?, true),
    };
    let password_hash = hasher.hash(&password).await?;
    let created = store
        .insert_user(&NewUserRow {
            username: FIRST_ADMIN_USERNAME,
            display_name: "Administrator",
            email: None,
            password_hash: &password_hash,
            is_admin: true,
            must_change_password: generated,
        })
        .await;
    match created {
        Ok(_) => {}
        Err(CoreError::Conflict(_)) => return Ok(None),
        Err(e) => return Err(e),
    }
    let detail = if generated {
        "first administrator, generated one-time password"
    } else {
        "first administrator, password from the environment"
    };
    store
        .audit("system", "user.create", FIRST_ADMIN_USERNAME, detail)
        .await?;
    Ok(Some(Bootstrap {
        username: FIRST_ADMIN_USERNAME.to_string(),
        password,
        generated,
    }))
}
