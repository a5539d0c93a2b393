//! Identities from campus providers attached to accounts, and the course memberships and
//! administrator rights a provider's groups gave.

use super::users::{insert_user_on, is_unique_violation, NewUserRow, UserColumns, USER_COLUMNS};
use super::{now_ms, Store, User};
use crate::{CoreError, CourseId, UserId};
use slicehub_types::Role;

/// One identity of an account: which provider, and the subject it names the person by.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, sqlx::FromRow)]
pub struct IdentityRow {
    pub provider: String,
    pub subject: String,
    pub user_id: UserId,
    #[sqlx(rename = "last_sign_in_at")]
    pub last_sign_in_at_ms: i64,
}

const IDENTITY_COLUMNS: &str = "provider, subject, user_id, last_sign_in_at";

impl Store {
    /// The account an identity is attached to.
    pub async fn user_of_identity(&self, provider: &str, subject: &str) -> Result<Option<User>, CoreError> {
        let row: Option<UserColumns> = sqlx::query_as(&format!(
            "SELECT {USER_COLUMNS} FROM users u JOIN external_identities i ON i.user_id = u.id
             WHERE i.provider = $1 AND i.subject = $2"
        ))
        .bind(provider)
        .bind(subject)
        .fetch_optional(self.pool())
        .await?;
        Ok(row.map(User::from))
    }

    /// Attaches the identity; `Conflict` when it is attached already (to anyone).
    pub async fn attach_identity(&self, provider: &str, subject: &str, user_id: UserId) -> Result<(), CoreError> {
        let mut conn = self.pool().acquire().await?;
        attach_on(&mut conn, provider, subject, user_id, now_ms()).await
    }

    /// A new account and its first identity, both or neither; `Conflict` when the name is
    /// taken or the identity attached.
    pub async fn insert_user_with_identity(&self, new: &NewUserRow<'_>, provider: &str, subject: &str) -> Result<User, CoreError> {
        let now = now_ms();
        let mut tx = self.begin_write().await?;
        let user = insert_user_on(&mut tx, new, now).await?;
        attach_on(&mut tx, provider, subject, user.id, now).await?;
        tx.commit().await?;
        Ok(user)
    }

    pub async fn touch_identity(&self, provider: &str, subject: &str) -> Result<(), CoreError> {
        sqlx::query("UPDATE external_identities SET last_sign_in_at = $3 WHERE provider = $1 AND subject = $2")
            .bind(provider)
            .bind(subject)
            .bind(now_ms())
            .execute(self.pool())
            .await?;
        Ok(())
    }

    /// Returns whether one was detached.
    pub async fn detach_identity(&self, provider: &str, subject: &str) -> Result<bool, CoreError> {
        let done = sqlx::query("DELETE FROM external_identities WHERE provider = $1 AND subject = $2")
            .bind(provider)
            .bind(subject)
            .execute(self.pool())
            .await?;
        self.access_changed();
        Ok(done.rows_affected() > 0)
    }

    /// Every identity of every account, by account then provider (the users page).
    pub async fn all_identities(&self) -> Result<Vec<IdentityRow>, CoreError> {
        Ok(sqlx::query_as(&format!("SELECT {IDENTITY_COLUMNS} FROM external_identities ORDER BY user_id, provider, subject"))
            .fetch_all(self.pool())
            .await?)
    }

    /// The account's identities, by provider.
    pub async fn identities_of_user(&self, user_id: UserId) -> Result<Vec<IdentityRow>, CoreError> {
        Ok(sqlx::query_as(&format!(
            "SELECT {IDENTITY_COLUMNS} FROM external_identities WHERE user_id = $1 ORDER BY provider, subject"
        ))
        .bind(user_id)
        .fetch_all(self.pool())
        .await?)
    }

    /// How many accounts can sign in with a password of their own.
    pub async fn count_users_with_password(&self) -> Result<i64, CoreError> {
        let (n,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM users WHERE password_hash <> '' AND disabled = 0")
            .fetch_one(self.pool())
            .await?;
        Ok(n)
    }

    /// The accounts that have a password of their own.
    pub async fn users_with_password(&self) -> Result<std::collections::HashSet<UserId>, CoreError> {
        let rows: Vec<(UserId,)> = sqlx::query_as("SELECT id FROM users WHERE password_hash <> ''")
            .fetch_all(self.pool())
            .await?;
        Ok(rows.into_iter().map(|(id,)| id).collect())
    }

    /// Whether the account has a password of its own (accounts made for a provider have none).
    pub async fn has_local_password(&self, user_id: UserId) -> Result<bool, CoreError> {
        Ok(self.password_hash_of(user_id).await?.is_some_and(|h| !h.is_empty()))
    }

    /// Sets the administrator flag as `provider`'s groups say. Granting records the
    /// provider; revoking touches only a right this provider gave, and never the last
    /// enabled administrator's (left, with a warning in the log, as `set_user_admin` would).
    pub async fn set_admin_by_groups(&self, user_id: UserId, provider: &str, admin: bool) -> Result<bool, CoreError> {
        let done = if admin {
            sqlx::query("UPDATE users SET is_admin = 1, admin_granted_by = $2, updated_at = $3 WHERE id = $1 AND is_admin = 0")
                .bind(user_id)
                .bind(provider)
                .bind(now_ms())
                .execute(self.pool())
                .await?
        } else {
            let done = sqlx::query(
                "UPDATE users SET is_admin = 0, admin_granted_by = NULL, updated_at = $3
                 WHERE id = $1 AND admin_granted_by = $2
                   AND (is_admin = 0 OR disabled = 1
                        OR (SELECT COUNT(*) FROM users o
                            WHERE o.is_admin = 1 AND o.disabled = 0 AND o.id <> $1) > 0)",
            )
            .bind(user_id)
            .bind(provider)
            .bind(now_ms())
            .execute(self.pool())
            .await?;
            if done.rows_affected() == 0 {
                let kept: Option<(String,)> =
                    sqlx::query_as("SELECT username FROM users WHERE id = $1 AND admin_granted_by = $2 AND is_admin = 1")
                        .bind(user_id)
                        .bind(provider)
                        .fetch_optional(self.pool())
                        .await?;
                if let Some((username,)) = kept {
                    tracing::warn!(
                        user = %username,
                        provider,
                        "the provider's groups no longer make this account an administrator, but it is the last enabled one: it stays one until another is made"
                    );
                }
            }
            done
        };
        Ok(self.access_changed_if(done.rows_affected()))
    }

    /// The user's memberships with who gave each (None: by hand).
    pub async fn memberships_with_grants(&self, user_id: UserId) -> Result<Vec<(CourseId, Role, Option<String>)>, CoreError> {
        let rows: Vec<(CourseId, String, Option<String>)> =
            sqlx::query_as("SELECT course_id, role, granted_by FROM course_members WHERE user_id = $1")
                .bind(user_id)
                .fetch_all(self.pool())
                .await?;
        rows.into_iter()
            .map(|(course, role, by)| {
                let role = Role::parse(&role).ok_or_else(|| CoreError::Database(format!("unknown course role {role:?}")))?;
                Ok((course, role, by))
            })
            .collect()
    }

    /// Gives (or changes) a membership on `provider`'s word; a membership given by hand is
    /// left as it is. Returns whether anything changed.
    pub async fn grant_membership(&self, course_id: CourseId, user_id: UserId, role: Role, provider: &str) -> Result<bool, CoreError> {
        let done = sqlx::query(
            "INSERT INTO course_members (course_id, user_id, role, added_at, granted_by) VALUES ($1, $2, $3, $4, $5)
             ON CONFLICT (course_id, user_id) DO UPDATE SET role = excluded.role
             WHERE course_members.granted_by = excluded.granted_by AND course_members.role <> excluded.role",
        )
        .bind(course_id)
        .bind(user_id)
        .bind(role.as_str())
        .bind(now_ms())
        .bind(provider)
        .execute(self.pool())
        .await?;
        Ok(self.access_changed_if(done.rows_affected()))
    }

    /// Whether rows changed; when they did, callers' cached access is stale.
    fn access_changed_if(&self, rows: u64) -> bool {
        if rows > 0 {
            self.access_changed();
        }
        rows > 0
    }

    /// Takes back a membership `provider` gave; returns whether there was one.
    pub async fn revoke_granted_membership(&self, course_id: CourseId, user_id: UserId, provider: &str) -> Result<bool, CoreError> {
        let done = sqlx::query("DELETE FROM course_members WHERE course_id = $1 AND user_id = $2 AND granted_by = $3")
            .bind(course_id)
            .bind(user_id)
            .bind(provider)
            .execute(self.pool())
            .await?;
        Ok(self.access_changed_if(done.rows_affected()))
    }
}

async fn attach_on(conn: &mut sqlx::AnyConnection, provider: &str, subject: &str, user_id: UserId, now: i64) -> Result<(), CoreError> {
    let done = sqlx::query(
        "INSERT INTO external_identities (provider, subject, user_id, created_at, last_sign_in_at)
         VALUES ($1, $2, $3, $4, $4)",
    )
    .bind(provider)
    .bind(subject)
    .bind(user_id)
    .bind(now)
    .execute(&mut *conn)
    .await;
    match done {
        Ok(_) => Ok(()),
        Err(e) if is_unique_violation(&e) => Err(CoreError::Conflict("That identity already belongs to an account.".to_string())),
        Err(e) => Err(e.into()),
    }
}
