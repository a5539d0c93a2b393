//! Launch tickets and notebook grants (see `crate::notebook_access`). Only SHA-256
//! digests of their tokens are stored.

use super::flag::Flag;
use super::{now_ms, Store};
use crate::CoreError;
use crate::UserId;

/// A redeemed ticket: who may enter which session, and where to go first.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct RedeemedTicket {
    pub session_id: String,
    pub user_id: UserId,
    pub path: String,
}

/// A valid grant, with what the proxy re-checks on every request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrantRow {
    pub session_id: String,
    pub user_id: UserId,
    pub user_is_admin: bool,
    pub user_disabled: bool,
}

/// A ticket as its DELETE returns it.
#[derive(sqlx::FromRow)]
struct TicketColumns {
    #[sqlx(flatten)]
    ticket: RedeemedTicket,
    expires_at: i64,
}

/// [`GrantRow`] as the join reads it: the user's flags as 0 or 1.
#[derive(sqlx::FromRow)]
struct GrantColumns {
    session_id: String,
    user_id: UserId,
    #[sqlx(try_from = "i64")]
    is_admin: Flag,
    #[sqlx(try_from = "i64")]
    disabled: Flag,
}

/// How long a grant outlives its session, for the ended notice alone.
pub const ENDED_NOTICE_MS: i64 = 15 * 60_000;

impl Store {
    pub async fn insert_notebook_ticket(
        &self,
        token_sha256: &str,
        session_id: &str,
        user_id: UserId,
        path: &str,
        expires_at_ms: i64,
    ) -> Result<(), CoreError> {
        let mut tx = self.begin_write().await?;
        // Expired tickets are swept on the way: they are few and short-lived.
        sqlx::query("DELETE FROM notebook_tickets WHERE expires_at <= $1")
            .bind(now_ms())
            .execute(&mut *tx)
            .await?;
        sqlx::query(
            "INSERT INTO notebook_tickets (token_sha256, session_id, user_id, path, expires_at)
             VALUES ($1, $2, $3, $4, $5)",
        )
        .bind(token_sha256)
        .bind(session_id)
        .bind(user_id)
        .bind(path)
        .bind(expires_at_ms)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(())
    }

    /// Deletes the ticket and returns it if it was still valid: a ticket works once, even
    /// when two requests race for it (only one DELETE sees the row).
    pub async fn redeem_notebook_ticket(
        &self,
        token_sha256: &str,
    ) -> Result<Option<RedeemedTicket>, CoreError> {
        let row: Option<TicketColumns> = sqlx::query_as(
            "DELETE FROM notebook_tickets WHERE token_sha256 = $1
             RETURNING session_id, user_id, path, expires_at",
        )
        .bind(token_sha256)
        .fetch_optional(self.pool())
        .await?;
        Ok(row.filter(|row| row.expires_at > now_ms()).map(|row| row.ticket))
    }

    pub async fn insert_notebook_grant(
        &self,
        token_sha256: &str,
        session_id: &str,
        user_id: UserId,
        expires_at_ms: i64,
    ) -> Result<(), CoreError> {
        // Expired grants are of no use to anyone (a session's outlive it by minutes at most).
        sqlx::query("DELETE FROM notebook_grants WHERE expires_at <= $1")
            .bind(now_ms())
            .execute(self.pool())
            .await?;
        sqlx::query(
            "INSERT INTO notebook_grants (token_sha256, session_id, user_id, created_at, expires_at)
             VALUES ($1, $2, $3, $4, $5)",
        )
        .bind(token_sha256)
        .bind(session_id)
        .bind(user_id)
        .bind(now_ms())
        .bind(expires_at_ms)
        .execute(self.pool())
        .await?;
        Ok(())
    }

    /// The unexpired grant with this digest for this session, with its user's flags.
    pub async fn notebook_grant(
        &self,
        token_sha256: &str,
        session_id: &str,
    ) -> Result<Option<GrantRow>, CoreError> {
        let row: Option<GrantColumns> = sqlx::query_as(
            "SELECT g.session_id, g.user_id, u.is_admin, u.disabled
             FROM notebook_grants g JOIN users u ON u.id = g.user_id
             WHERE g.token_sha256 = $1 AND g.session_id = $2 AND g.expires_at > $3
               AND u.must_change_password = 0",
        )
        .bind(token_sha256)
        .bind(session_id)
        .bind(now_ms())
        .fetch_optional(self.pool())
        .await?;
        Ok(row.map(|row| GrantRow {
            session_id: row.session_id,
            user_id: row.user_id,
            user_is_admin: row.is_admin.0,
            user_disabled: row.disabled.0,
        }))
    }

    /// Ends every way into a session's notebook, and forgets its JupyterLab token: called
    /// once the session is over. A grant already held lives on for at most
    /// [`ENDED_NOTICE_MS`], and only to be told the session ended and why (the notebook
    /// host answers nothing else for a session that is over): the tab still open in
    /// JupyterLab says so instead of "check your network".
    pub async fn revoke_notebook_access(&self, session_id: &str) -> Result<(), CoreError> {
        let mut tx = self.begin_write().await?;
        for sql in [
            "DELETE FROM notebook_tickets WHERE session_id = $1",
            "UPDATE gpu_sessions SET token = '' WHERE id = $1",
        ] {
            sqlx::query(sql).bind(session_id).execute(&mut *tx).await?;
        }
        sqlx::query(
            "UPDATE notebook_grants SET expires_at = CASE WHEN expires_at < $2 THEN expires_at ELSE $2 END
             WHERE session_id = $1",
        )
        .bind(session_id)
        .bind(now_ms() + ENDED_NOTICE_MS)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(())
    }
}
