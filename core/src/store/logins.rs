//! The login sessions table (`sessions`): one row per signed-in browser, by token hash.

use super::users::{UserColumns, USER_COLUMNS};
use super::{Store, User};
use crate::CoreError;
use crate::UserId;

/// A stored login session with its account. Times are epoch milliseconds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredLogin {
    pub id: i64,
    pub user: User,
    pub created_at_ms: i64,
    pub last_seen_at_ms: i64,
    pub expires_at_ms: i64,
}

/// A login with its account, as the join reads them.
#[derive(sqlx::FromRow)]
struct LoginColumns {
    login_id: i64,
    login_created_at: i64,
    last_seen_at: i64,
    expires_at: i64,
    #[sqlx(flatten)]
    user: UserColumns,
}

impl Store {
    pub async fn insert_login(
        &self,
        user_id: UserId,
        token_sha256: &str,
        now_ms: i64,
        expires_at_ms: i64,
        remote_addr: &str,
    ) -> Result<(), CoreError> {
        sqlx::query(
            "INSERT INTO user_sessions
                 (token_sha256, user_id, created_at, last_seen_at, expires_at, remote_addr)
             VALUES ($1, $2, $3, $3, $4, $5)",
        )
        .bind(token_sha256)
        .bind(user_id)
        .bind(now_ms)
        .bind(expires_at_ms)
        .bind(remote_addr)
        .execute(self.pool())
        .await?;
        Ok(())
    }

    pub async fn login_by_token_sha256(
        &self,
        token_sha256: &str,
    ) -> Result<Option<StoredLogin>, CoreError> {
        let row: Option<LoginColumns> = sqlx::query_as(&format!(
            "SELECT s.id AS login_id, s.created_at AS login_created_at, s.last_seen_at, s.expires_at, {USER_COLUMNS}
             FROM user_sessions s JOIN users u ON u.id = s.user_id
             WHERE s.token_sha256 = $1"
        ))
        .bind(token_sha256)
        .fetch_optional(self.pool())
        .await?;
        Ok(row.map(|row| StoredLogin {
            id: row.login_id,
            user: User::from(row.user),
            created_at_ms: row.login_created_at,
            last_seen_at_ms: row.last_seen_at,
            expires_at_ms: row.expires_at,
        }))
    }

    pub async fn touch_login(&self, session_id: i64, now_ms: i64) -> Result<(), CoreError> {
        sqlx::query("UPDATE user_sessions SET last_seen_at = $1 WHERE id = $2")
            .bind(now_ms)
            .bind(session_id)
            .execute(self.pool())
            .await?;
        Ok(())
    }

    pub async fn delete_login(&self, session_id: i64) -> Result<(), CoreError> {
        sqlx::query("DELETE FROM user_sessions WHERE id = $1")
            .bind(session_id)
            .execute(self.pool())
            .await?;
        self.access_changed();
        Ok(())
    }

    /// Ends every session of the user; returns how many there were.
    pub async fn delete_logins_of_user(&self, user_id: UserId) -> Result<u64, CoreError> {
        let done = sqlx::query("DELETE FROM user_sessions WHERE user_id = $1")
            .bind(user_id)
            .execute(self.pool())
            .await?;
        self.access_changed();
        Ok(done.rows_affected())
    }

    /// Removes sessions past their absolute expiry or idle since before `idle_cutoff_ms`.
    pub async fn delete_expired_logins(
        &self,
        now_ms: i64,
        idle_cutoff_ms: i64,
    ) -> Result<u64, CoreError> {
        let done =
            sqlx::query("DELETE FROM user_sessions WHERE expires_at <= $1 OR last_seen_at <= $2")
                .bind(now_ms)
                .bind(idle_cutoff_ms)
                .execute(self.pool())
                .await?;
        // Only an ended login changes who a caller is (every sign-in sweeps, mostly nothing).
        if done.rows_affected() > 0 {
            self.access_changed();
        }
        Ok(done.rows_affected())
    }

    pub async fn count_logins_of_user(&self, user_id: UserId) -> Result<i64, CoreError> {
        let (n,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM user_sessions WHERE user_id = $1")
            .bind(user_id)
            .fetch_one(self.pool())
            .await?;
        Ok(n)
    }
}
