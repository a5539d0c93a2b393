//! Redirects to an identity provider under way (OpenID Connect, LTI): what the answer must
//! match, kept until it comes back once.

use super::{now_ms, Store};
use crate::{CoreError, UserId};

/// What the portal remembers of a redirect it sent a browser on.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct SignInAttempt {
    pub provider: String,
    /// SHA-256 of the value in the cookie of the browser that began it.
    pub browser_sha256: String,
    pub nonce: String,
    pub pkce_verifier: String,
    /// The page of this site to go to afterwards.
    pub next_path: Option<String>,
    /// Set when a signed-in account attaches this identity to itself.
    pub link_user_id: Option<UserId>,
    #[sqlx(rename = "created_at")]
    pub created_at_ms: i64,
}

impl Store {
    pub async fn insert_sign_in_attempt(&self, state_sha256: &str, attempt: &SignInAttempt) -> Result<(), CoreError> {
        sqlx::query(
            "INSERT INTO sign_in_attempts (state_sha256, provider, browser_sha256, nonce, pkce_verifier, next_path, link_user_id, created_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        )
        .bind(state_sha256)
        .bind(&attempt.provider)
        .bind(&attempt.browser_sha256)
        .bind(&attempt.nonce)
        .bind(&attempt.pkce_verifier)
        .bind(&attempt.next_path)
        .bind(attempt.link_user_id)
        .bind(attempt.created_at_ms)
        .execute(self.pool())
        .await?;
        Ok(())
    }

    /// The attempt of this state, removed as it is read: a state answers once.
    pub async fn take_sign_in_attempt(&self, state_sha256: &str) -> Result<Option<SignInAttempt>, CoreError> {
        Ok(sqlx::query_as(
            "DELETE FROM sign_in_attempts WHERE state_sha256 = $1
             RETURNING provider, browser_sha256, nonce, pkce_verifier, next_path, link_user_id, created_at",
        )
        .bind(state_sha256)
        .fetch_optional(self.pool())
        .await?)
    }

    /// Forgets attempts begun before `before_ms` (never answered).
    pub async fn delete_stale_sign_in_attempts(&self, before_ms: i64) -> Result<(), CoreError> {
        sqlx::query("DELETE FROM sign_in_attempts WHERE created_at < $1")
            .bind(before_ms.min(now_ms()))
            .execute(self.pool())
            .await?;
        Ok(())
    }
}
