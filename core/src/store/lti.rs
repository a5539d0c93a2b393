//! LMS platforms (LTI 1.3), the LMS courses linked to SliceHub courses, the portal's tool
//! key, and the tickets that carry a framed launch into a window of its own.

use super::{now_ms, Store};
use crate::{CoreError, CourseId, UserId};

/// A platform an administrator registered.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, sqlx::FromRow)]
pub struct LtiPlatform {
    pub id: i64,
    pub name: String,
    pub issuer: String,
    pub client_id: String,
    /// Separated by commas.
    pub deployment_ids: String,
    pub auth_login_url: String,
    pub auth_token_url: String,
    pub jwks_url: String,
}

impl LtiPlatform {
    pub fn deployments(&self) -> impl Iterator<Item = &str> {
        self.deployment_ids.split(',').map(str::trim).filter(|d| !d.is_empty())
    }

    /// How identities and grants of this platform are named: by its id, which is never
    /// given again (a platform registered later under a removed one's name is not it).
    pub fn key(&self) -> String {
        format!("lti:{}", self.id)
    }
}

/// An LMS course linked to a SliceHub course.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct LtiContext {
    pub platform_id: i64,
    pub context_id: String,
    pub course_id: CourseId,
    pub memberships_url: Option<String>,
    pub synced_at: Option<i64>,
}

const PLATFORM_COLUMNS: &str = "id, name, issuer, client_id, deployment_ids, auth_login_url, auth_token_url, jwks_url";

impl Store {
    /// `Conflict` when the name or the issuer and client id are registered already.
    pub async fn insert_lti_platform(&self, p: &LtiPlatform) -> Result<LtiPlatform, CoreError> {
        let inserted: Result<(i64,), sqlx::Error> = sqlx::query_as(
            "INSERT INTO lti_platforms (name, issuer, client_id, deployment_ids, auth_login_url, auth_token_url, jwks_url, created_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id",
        )
        .bind(&p.name)
        .bind(&p.issuer)
        .bind(&p.client_id)
        .bind(&p.deployment_ids)
        .bind(&p.auth_login_url)
        .bind(&p.auth_token_url)
        .bind(&p.jwks_url)
        .bind(now_ms())
        .fetch_one(self.pool())
        .await;
        match inserted {
            Ok((id,)) => Ok(LtiPlatform { id, ..p.clone() }),
            Err(e) if super::users::is_unique_violation(&e) => Err(CoreError::Conflict(
                "A platform with that name, or that issuer and client id, is registered already.".to_string(),
            )),
            Err(e) => Err(e.into()),
        }
    }

    pub async fn lti_platforms(&self) -> Result<Vec<LtiPlatform>, CoreError> {
        Ok(sqlx::query_as(&format!("SELECT {PLATFORM_COLUMNS} FROM lti_platforms ORDER BY name"))
            .fetch_all(self.pool())
            .await?)
    }

    pub async fn lti_platform(&self, id: i64) -> Result<Option<LtiPlatform>, CoreError> {
        Ok(sqlx::query_as(&format!("SELECT {PLATFORM_COLUMNS} FROM lti_platforms WHERE id = $1"))
            .bind(id)
            .fetch_optional(self.pool())
            .await?)
    }

    /// The platforms of an issuer (one per client id it gave the portal).
    pub async fn lti_platforms_of_issuer(&self, issuer: &str) -> Result<Vec<LtiPlatform>, CoreError> {
        if !crate::auth::validate::plausible_key(issuer) {
            return Ok(Vec::new());
        }
        Ok(sqlx::query_as(&format!("SELECT {PLATFORM_COLUMNS} FROM lti_platforms WHERE issuer = $1 ORDER BY id"))
            .bind(issuer)
            .fetch_all(self.pool())
            .await?)
    }

    /// Returns whether one was removed (its linked courses stay; the links go).
    pub async fn delete_lti_platform(&self, name: &str) -> Result<bool, CoreError> {
        let done = sqlx::query("DELETE FROM lti_platforms WHERE name = $1").bind(name).execute(self.pool()).await?;
        Ok(done.rows_affected() > 0)
    }

    pub async fn lti_context(&self, platform_id: i64, context_id: &str) -> Result<Option<LtiContext>, CoreError> {
        Ok(sqlx::query_as(
            "SELECT platform_id, context_id, course_id, memberships_url, synced_at FROM lti_contexts
             WHERE platform_id = $1 AND context_id = $2",
        )
        .bind(platform_id)
        .bind(context_id)
        .fetch_optional(self.pool())
        .await?)
    }

    /// The LMS courses linked to a SliceHub course.
    pub async fn lti_contexts_of_course(&self, course_id: CourseId) -> Result<Vec<LtiContext>, CoreError> {
        Ok(sqlx::query_as(
            "SELECT platform_id, context_id, course_id, memberships_url, synced_at FROM lti_contexts WHERE course_id = $1",
        )
        .bind(course_id)
        .fetch_all(self.pool())
        .await?)
    }

    /// Links an LMS course to a SliceHub course; a link made already stays as it is.
    pub async fn link_lti_context(&self, platform_id: i64, context_id: &str, course_id: CourseId) -> Result<LtiContext, CoreError> {
        sqlx::query(
            "INSERT INTO lti_contexts (platform_id, context_id, course_id) VALUES ($1, $2, $3)
             ON CONFLICT (platform_id, context_id) DO NOTHING",
        )
        .bind(platform_id)
        .bind(context_id)
        .bind(course_id)
        .execute(self.pool())
        .await?;
        self.lti_context(platform_id, context_id)
            .await?
            .ok_or_else(|| CoreError::Database("an LTI context link vanished".to_string()))
    }

    pub async fn set_lti_memberships_url(&self, platform_id: i64, context_id: &str, url: &str) -> Result<(), CoreError> {
        sqlx::query("UPDATE lti_contexts SET memberships_url = $3 WHERE platform_id = $1 AND context_id = $2")
            .bind(platform_id)
            .bind(context_id)
            .bind(url)
            .execute(self.pool())
            .await?;
        Ok(())
    }

    pub async fn mark_lti_synced(&self, platform_id: i64, context_id: &str) -> Result<(), CoreError> {
        sqlx::query("UPDATE lti_contexts SET synced_at = $3 WHERE platform_id = $1 AND context_id = $2")
            .bind(platform_id)
            .bind(context_id)
            .bind(now_ms())
            .execute(self.pool())
            .await?;
        Ok(())
    }

    /// The portal's signing key (kid, private key DER as base64), the newest first.
    pub async fn lti_tool_key(&self) -> Result<Option<(String, String)>, CoreError> {
        Ok(sqlx::query_as("SELECT kid, private_der FROM lti_tool_keys ORDER BY created_at DESC, kid LIMIT 1")
            .fetch_optional(self.pool())
            .await?)
    }

    /// Keeps a new key unless another portal process stored one first.
    pub async fn insert_lti_tool_key(&self, kid: &str, private_der: &str) -> Result<(), CoreError> {
        sqlx::query("INSERT INTO lti_tool_keys (kid, private_der, created_at) VALUES ($1, $2, $3) ON CONFLICT (kid) DO NOTHING")
            .bind(kid)
            .bind(private_der)
            .bind(now_ms())
            .execute(self.pool())
            .await?;
        Ok(())
    }

    pub async fn insert_lti_ticket(&self, ticket_sha256: &str, user_id: UserId, next_path: &str, expires_at_ms: i64) -> Result<(), CoreError> {
        sqlx::query("DELETE FROM lti_tickets WHERE expires_at < $1").bind(now_ms()).execute(self.pool()).await?;
        sqlx::query("INSERT INTO lti_tickets (ticket_sha256, user_id, next_path, expires_at) VALUES ($1, $2, $3, $4)")
            .bind(ticket_sha256)
            .bind(user_id)
            .bind(next_path)
            .bind(expires_at_ms)
            .execute(self.pool())
            .await?;
        Ok(())
    }

    /// The ticket's account and page while it is fresh, leaving it unused.
    pub async fn lti_ticket(&self, ticket_sha256: &str) -> Result<Option<(UserId, String)>, CoreError> {
        let row: Option<(UserId, String, i64)> =
            sqlx::query_as("SELECT user_id, next_path, expires_at FROM lti_tickets WHERE ticket_sha256 = $1")
                .bind(ticket_sha256)
                .fetch_optional(self.pool())
                .await?;
        Ok(row.filter(|(_, _, expires)| *expires > now_ms()).map(|(user, next, _)| (user, next)))
    }

    /// The ticket's account and page, once, while it is fresh.
    pub async fn take_lti_ticket(&self, ticket_sha256: &str) -> Result<Option<(UserId, String)>, CoreError> {
        let row: Option<(UserId, String, i64)> = sqlx::query_as(
            "DELETE FROM lti_tickets WHERE ticket_sha256 = $1 RETURNING user_id, next_path, expires_at",
        )
        .bind(ticket_sha256)
        .fetch_optional(self.pool())
        .await?;
        Ok(row.filter(|(_, _, expires)| *expires > now_ms()).map(|(user, next, _)| (user, next)))
    }
}
