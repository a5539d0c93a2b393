use serde::Serialize;

use super::{now_ms, Store};
use crate::CoreError;

/// One row of the audit log: who did what to what, and when.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AuditEntry {
    pub id: i64,
    pub at_ms: i64,
    pub actor: String,
    pub action: String,
    pub subject: String,
    pub detail: String,
}

impl Store {
    pub async fn audit(
        &self,
        actor: &str,
        action: &str,
        subject: &str,
        detail: &str,
    ) -> Result<i64, CoreError> {
        let mut conn = self.pool().acquire().await?;
        audit_on(&mut conn, actor, action, subject, detail).await
    }

    /// The newest entries first, at most `limit`, optionally only one action.
    pub async fn recent_audit(
        &self,
        action: Option<&str>,
        limit: i64,
    ) -> Result<Vec<AuditEntry>, CoreError> {
        let rows: Vec<(i64, i64, String, String, String, String)> = sqlx::query_as(
            "SELECT id, at_ms, actor, action, subject, detail FROM audit_log
             WHERE ($1 = '' OR action = $1) ORDER BY id DESC LIMIT $2",
        )
        .bind(action.unwrap_or(""))
        .bind(limit)
        .fetch_all(self.pool())
        .await?;
        Ok(rows
            .into_iter()
            .map(|(id, at_ms, actor, action, subject, detail)| AuditEntry {
                id,
                at_ms,
                actor,
                action,
                subject,
                detail,
            })
            .collect())
    }
}

/// Writes an audit row on a given connection, so it commits or rolls back with the
/// transaction the connection is in.
pub(crate) async fn audit_on(
    conn: &mut sqlx::AnyConnection,
    actor: &str,
    action: &str,
    subject: &str,
    detail: &str,
) -> Result<i64, CoreError> {
    let (id,): (i64,) = sqlx::query_as(
        "INSERT INTO audit_log (at_ms, actor, action, subject, detail)
         VALUES ($1, $2, $3, $4, $5) RETURNING id",
    )
    .bind(now_ms())
    .bind(actor)
    .bind(action)
    .bind(subject)
    .bind(detail)
    .fetch_one(conn)
    .await?;
    Ok(id)
}
