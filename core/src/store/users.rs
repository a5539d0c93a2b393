use serde::Serialize;

use super::flag::Flag;
use super::{now_ms, Store};
use crate::{CoreError, UserId};

/// An account as the rest of the portal sees it; the password hash never leaves the store
/// except through [`Store::user_credentials`] and [`Store::password_hash_of`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct User {
    pub id: UserId,
    /// Lowercase `a-z0-9._-`, unique.
    pub username: String,
    pub display_name: String,
    pub email: Option<String>,
    pub is_admin: bool,
    /// Set for one-time passwords: the user must choose a new password before anything else.
    pub must_change_password: bool,
    pub disabled: bool,
    pub created_at_ms: i64,
}

/// What a new account is made of; the password is already hashed.
#[derive(Debug, Clone)]
pub struct NewUserRow<'a> {
    pub username: &'a str,
    pub display_name: &'a str,
    pub email: Option<&'a str>,
    pub password_hash: &'a str,
    pub is_admin: bool,
    pub must_change_password: bool,
}

pub(crate) const USER_COLUMNS: &str =
    "u.id, u.username, u.display_name, u.email, u.is_admin, u.must_change_password, u.disabled, u.created_at";

/// A [`User`] as [`USER_COLUMNS`] reads it: its flags as 0 or 1.
#[derive(sqlx::FromRow)]
pub(crate) struct UserColumns {
    id: UserId,
    username: String,
    display_name: String,
    email: Option<String>,
    #[sqlx(try_from = "i64")]
    is_admin: Flag,
    #[sqlx(try_from = "i64")]
    must_change_password: Flag,
    #[sqlx(try_from = "i64")]
    disabled: Flag,
    #[sqlx(rename = "created_at")]
    created_at_ms: i64,
}

impl From<UserColumns> for User {
    fn from(c: UserColumns) -> User {
        User {
            id: c.id,
            username: c.username,
            display_name: c.display_name,
            email: c.email,
            is_admin: c.is_admin.0,
            must_change_password: c.must_change_password.0,
            disabled: c.disabled.0,
            created_at_ms: c.created_at_ms,
        }
    }
}

/// An account with its password hash.
#[derive(sqlx::FromRow)]
struct CredentialColumns {
    #[sqlx(flatten)]
    user: UserColumns,
    password_hash: String,
}

pub(crate) fn is_unique_violation(e: &sqlx::Error) -> bool {
    matches!(e, sqlx::Error::Database(db) if db.is_unique_violation())
}

impl Store {
    pub async fn count_users(&self) -> Result<i64, CoreError> {
        let (n,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM users")
            .fetch_one(self.pool())
            .await?;
        Ok(n)
    }

    /// Fails with `Conflict` when the username is taken.
    pub async fn insert_user(&self, new: &NewUserRow<'_>) -> Result<User, CoreError> {
        let mut conn = self.pool().acquire().await?;
        insert_user_on(&mut conn, new, now_ms()).await
    }

    pub async fn user_by_id(&self, id: UserId) -> Result<Option<User>, CoreError> {
        let row: Option<UserColumns> = sqlx::query_as(&format!(
            "SELECT {USER_COLUMNS} FROM users u WHERE u.id = $1"
        ))
        .bind(id)
        .fetch_optional(self.pool())
        .await?;
        Ok(row.map(User::from))
    }

    /// `username` must already be normalized (lowercase).
    pub async fn user_by_username(&self, username: &str) -> Result<Option<User>, CoreError> {
        Ok(self.user_credentials(username).await?.map(|(user, _)| user))
    }

    /// The account and its password hash, for checking a login.
    pub async fn user_credentials(
        &self,
        username: &str,
    ) -> Result<Option<(User, String)>, CoreError> {
        // A name with a NUL would make PostgreSQL fail the query; no account has one.
        if !crate::auth::validate::plausible_key(username) {
            return Ok(None);
        }
        let row: Option<CredentialColumns> = sqlx::query_as(&format!(
            "SELECT {USER_COLUMNS}, u.password_hash FROM users u WHERE u.username = $1"
        ))
        .bind(username)
        .fetch_optional(self.pool())
        .await?;
        Ok(row.map(|row| (User::from(row.user), row.password_hash)))
    }

    pub async fn password_hash_of(&self, user_id: UserId) -> Result<Option<String>, CoreError> {
        let row: Option<(String,)> =
            sqlx::query_as("SELECT password_hash FROM users WHERE id = $1")
                .bind(user_id)
                .fetch_optional(self.pool())
                .await?;
        Ok(row.map(|(h,)| h))
    }

    /// Every account, ordered by username.
    pub async fn list_users(&self) -> Result<Vec<User>, CoreError> {
        let rows: Vec<UserColumns> = sqlx::query_as(&format!(
            "SELECT {USER_COLUMNS} FROM users u ORDER BY u.username"
        ))
        .fetch_all(self.pool())
        .await?;
        Ok(rows.into_iter().map(User::from).collect())
    }

    /// Replaces the password and ends every session of the user, in one transaction.
    pub async fn replace_password(
        &self,
        user_id: UserId,
        password_hash: &str,
        must_change_password: bool,
    ) -> Result<(), CoreError> {
        let mut tx = self.begin_write().await?;
        let updated = sqlx::query(
            "UPDATE users SET password_hash = $1, must_change_password = $2, updated_at = $3
             WHERE id = $4",
        )
        .bind(password_hash)
        .bind(i64::from(must_change_password))
        .bind(now_ms())
        .bind(user_id)
        .execute(&mut *tx)
        .await?;
        if updated.rows_affected() == 0 {
            return Err(CoreError::NotFound(format!("no user with id {user_id}")));
        }
        sqlx::query("DELETE FROM user_sessions WHERE user_id = $1")
            .bind(user_id)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        self.access_changed();
        Ok(())
    }

    /// Disabling also ends every session of the user. The last enabled administrator
    /// cannot be disabled: the call fails with `InvalidRequest` and changes nothing.
    pub async fn set_user_disabled(&self, user_id: UserId, disabled: bool) -> Result<(), CoreError> {
        let mut tx = self.begin_write().await?;
        let updated = sqlx::query(
            "UPDATE users SET disabled = $1, updated_at = $2
             WHERE id = $3
               AND ($1 = 0 OR is_admin = 0
                    OR (SELECT COUNT(*) FROM users o
                        WHERE o.is_admin = 1 AND o.disabled = 0 AND o.id <> $3) > 0)",
        )
        .bind(i64::from(disabled))
        .bind(now_ms())
        .bind(user_id)
        .execute(&mut *tx)
        .await?;
        if updated.rows_affected() == 0 {
            drop(tx);
            return Err(self.why_not_updated(user_id, "disable").await);
        }
        if disabled {
            sqlx::query("DELETE FROM user_sessions WHERE user_id = $1")
                .bind(user_id)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        self.access_changed();
        Ok(())
    }

    /// The last enabled administrator cannot lose the role (`InvalidRequest`). A right set
    /// by hand is the portal's own: no provider's groups take it back later.
    pub async fn set_user_admin(&self, user_id: UserId, is_admin: bool) -> Result<(), CoreError> {
        let updated = sqlx::query(
            "UPDATE users SET is_admin = $1, admin_granted_by = NULL, updated_at = $2
             WHERE id = $3
               AND ($1 = 1 OR disabled = 1
                    OR (SELECT COUNT(*) FROM users o
                        WHERE o.is_admin = 1 AND o.disabled = 0 AND o.id <> $3) > 0)",
        )
        .bind(i64::from(is_admin))
        .bind(now_ms())
        .bind(user_id)
        .execute(self.pool())
        .await?;
        if updated.rows_affected() == 0 {
            return Err(self
                .why_not_updated(user_id, "remove the administrator role of")
                .await);
        }
        self.access_changed();
        Ok(())
    }

    async fn why_not_updated(&self, user_id: UserId, verb: &str) -> CoreError {
        match self.user_by_id(user_id).await {
            Ok(Some(user)) => CoreError::InvalidRequest(format!(
                "cannot {verb} {}: it is the last enabled administrator account",
                user.username
            )),
            Ok(None) => CoreError::NotFound(format!("no user with id {user_id}")),
            Err(e) => e,
        }
    }
}

/// Writes a new account on `conn` (a transaction's, or the pool's); `Conflict` when the
/// username is taken.
pub(crate) async fn insert_user_on(
    conn: &mut sqlx::AnyConnection,
    new: &NewUserRow<'_>,
    now: i64,
) -> Result<User, CoreError> {
    let inserted: Result<(UserId,), sqlx::Error> = sqlx::query_as(
        "INSERT INTO users (username, display_name, email, password_hash, is_admin,
                            must_change_password, disabled, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, 0, $7, $7) RETURNING id",
    )
    .bind(new.username)
    .bind(new.display_name)
    .bind(new.email)
    .bind(new.password_hash)
    .bind(i64::from(new.is_admin))
    .bind(i64::from(new.must_change_password))
    .bind(now)
    .fetch_one(&mut *conn)
    .await;
    match inserted {
        Ok((id,)) => Ok(User {
            id,
            username: new.username.to_string(),
            display_name: new.display_name.to_string(),
            email: new.email.map(str::to_string),
            is_admin: new.is_admin,
            must_change_password: new.must_change_password,
            disabled: false,
            created_at_ms: now,
        }),
        Err(e) if is_unique_violation(&e) => Err(CoreError::Conflict(format!(
            "the username `{}` is already taken",
            new.username
        ))),
        Err(e) => Err(e.into()),
    }
}
