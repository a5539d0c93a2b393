//! The personal access tokens table (`api_tokens`): one row per token, by its SHA-256.

use super::users::{UserColumns, USER_COLUMNS};
use super::{Store, User};
use crate::{CoreError, UserId};

/// A token as its owner's list shows it. Times are epoch milliseconds.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct ApiTokenRow {
    #[sqlx(rename = "token_id")]
    pub id: i64,
    pub user_id: UserId,
    pub name: String,
    /// Scope names separated by spaces.
    pub scopes: String,
    #[sqlx(rename = "token_created_at")]
    pub created_at: i64,
    pub expires_at: Option<i64>,
    pub last_used_at: Option<i64>,
    pub last_used_from: Option<String>,
    pub revoked_at: Option<i64>,
    /// The token that made this one, if a token did.
    pub parent_id: Option<i64>,
}

/// A token with the account it acts for, as a request presents it.
#[derive(Debug, Clone)]
pub struct PresentedToken {
    pub token: ApiTokenRow,
    pub user: User,
}

#[derive(sqlx::FromRow)]
struct PresentedColumns {
    #[sqlx(flatten)]
    token: ApiTokenRow,
    #[sqlx(flatten)]
    user: UserColumns,
}

const TOKEN_COLUMNS: &str = "t.id AS token_id, t.user_id, t.name, t.scopes, t.created_at AS token_created_at, t.expires_at, t.last_used_at, t.last_used_from, t.revoked_at, t.parent_id";

/// What a new token row holds.
pub struct NewApiToken<'a> {
    pub user_id: UserId,
    pub name: &'a str,
    pub token_sha256: &'a str,
    pub scopes: &'a str,
    pub now_ms: i64,
    pub expires_at_ms: Option<i64>,
    pub parent_id: Option<i64>,
}

impl Store {
    pub async fn insert_api_token(&self, new: &NewApiToken<'_>) -> Result<i64, CoreError> {
        let id: i64 = sqlx::query_scalar(
            "INSERT INTO api_tokens (user_id, name, token_sha256, scopes, created_at, expires_at, parent_id)
             VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id",
        )
        .bind(new.user_id)
        .bind(new.name)
        .bind(new.token_sha256)
        .bind(new.scopes)
        .bind(new.now_ms)
        .bind(new.expires_at_ms)
        .bind(new.parent_id)
        .fetch_one(self.pool())
        .await?;
        Ok(id)
    }

    /// A user's tokens that are not revoked, newest first.
    pub async fn api_tokens_of_user(&self, user_id: UserId) -> Result<Vec<ApiTokenRow>, CoreError> {
        Ok(sqlx::query_as(&format!(
            "SELECT {TOKEN_COLUMNS} FROM api_tokens t
             WHERE t.user_id = $1 AND t.revoked_at IS NULL
             ORDER BY t.id DESC"
        ))
        .bind(user_id)
        .fetch_all(self.pool())
        .await?)
    }

    /// How many tokens a user holds now (not revoked, not expired).
    pub async fn count_live_api_tokens(&self, user_id: UserId, now_ms: i64) -> Result<i64, CoreError> {
        Ok(sqlx::query_scalar(
            "SELECT COUNT(*) FROM api_tokens
             WHERE user_id = $1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > $2)",
        )
        .bind(user_id)
        .bind(now_ms)
        .fetch_one(self.pool())
        .await?)
    }

    pub async fn api_token_by_sha256(&self, token_sha256: &str) -> Result<Option<PresentedToken>, CoreError> {
        let row: Option<PresentedColumns> = sqlx::query_as(&format!(
            "SELECT {TOKEN_COLUMNS}, {USER_COLUMNS}
             FROM api_tokens t JOIN users u ON u.id = t.user_id
             WHERE t.token_sha256 = $1"
        ))
        .bind(token_sha256)
        .fetch_optional(self.pool())
        .await?;
        Ok(row.map(|r| PresentedToken { token: r.token, user: User::from(r.user) }))
    }

    /// Marks one of the user's tokens revoked, and the tokens it made: its name, or None
    /// when the user has no such live token. Cached callers of them are forgotten and
    /// open event streams end at their next event (an access change).
    pub async fn revoke_api_token(&self, user_id: UserId, id: i64, now_ms: i64) -> Result<Option<String>, CoreError> {
        sqlx::query("UPDATE api_tokens SET revoked_at = $3 WHERE parent_id = $1 AND user_id = $2 AND revoked_at IS NULL")
            .bind(id)
            .bind(user_id)
            .bind(now_ms)
            .execute(self.pool())
            .await?;
        let name: Option<String> = sqlx::query_scalar(
            "UPDATE api_tokens SET revoked_at = $3
             WHERE id = $1 AND user_id = $2 AND revoked_at IS NULL
             RETURNING name",
        )
        .bind(id)
        .bind(user_id)
        .bind(now_ms)
        .fetch_optional(self.pool())
        .await?;
        if name.is_some() {
            self.access_changed();
        }
        Ok(name)
    }

    /// Revokes every live token of the user; how many.
    pub async fn revoke_all_api_tokens(&self, user_id: UserId, now_ms: i64) -> Result<u64, CoreError> {
        let revoked = sqlx::query("UPDATE api_tokens SET revoked_at = $2 WHERE user_id = $1 AND revoked_at IS NULL")
            .bind(user_id)
            .bind(now_ms)
            .execute(self.pool())
            .await?
            .rows_affected();
        if revoked > 0 {
            self.access_changed();
        }
        Ok(revoked)
    }

    pub async fn touch_api_token(&self, id: i64, now_ms: i64, from: &str) -> Result<(), CoreError> {
        sqlx::query("UPDATE api_tokens SET last_used_at = $2, last_used_from = $3 WHERE id = $1")
            .bind(id)
            .bind(now_ms)
            .bind(from)
            .execute(self.pool())
            .await?;
        Ok(())
    }
}
