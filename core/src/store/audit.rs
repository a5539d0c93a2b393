use serde::Serialize;

use super::{now_ms, Store};
use crate::CoreError;

/// One row of the audit log: who did what to what, and when.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, sqlx::FromRow)]
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
        Ok(sqlx::query_as(
            "SELECT id, at_ms, actor, action, subject, detail FROM audit_log
             WHERE ($1 = '' OR action = $1) ORDER BY id DESC LIMIT $2",
        )
        .bind(action.unwrap_or(""))
        .bind(limit)
        .fetch_all(self.pool())
        .await?)
    }
}

/// Which audit rows to read: one actor (any case), actions beginning with a prefix, and
/// `[from_ms, to_ms)`; empty text matches everything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AuditQuery {
    pub actor: String,
    pub action_prefix: String,
    pub from_ms: i64,
    pub to_ms: i64,
}

/// The filter both reads share, as a literal so the whole SQL text can be `'static`.
macro_rules! audit_rows {
    ($tail:literal) => {
        concat!(
            "SELECT id, at_ms, actor, action, subject, detail FROM audit_log
             WHERE ($1 = '' OR lower(actor) = lower($1)) AND action LIKE $2 AND at_ms >= $3 AND at_ms < $4 ",
            $tail
        )
    };
}

impl Store {
    /// At most `limit` matching rows older than row `before` (all when 0), newest first.
    pub async fn audit_page(&self, query: &AuditQuery, before: i64, limit: i64) -> Result<Vec<AuditEntry>, CoreError> {
        Ok(sqlx::query_as(audit_rows!("AND ($5 = 0 OR id < $5) ORDER BY id DESC LIMIT $6"))
            .bind(query.actor.clone())
            .bind(format!("{}%", query.action_prefix))
            .bind(query.from_ms)
            .bind(query.to_ms)
            .bind(before)
            .bind(limit)
            .fetch_all(self.pool())
            .await?)
    }

    /// Every matching row, oldest first, as the database hands them over.
    pub fn audit_stream(
        &self,
        query: &AuditQuery,
    ) -> impl futures_util::Stream<Item = Result<AuditEntry, CoreError>> + Send + '_ {
        use futures_util::StreamExt;
        sqlx::query_as::<_, AuditEntry>(audit_rows!("ORDER BY id"))
            .bind(query.actor.clone())
            .bind(format!("{}%", query.action_prefix))
            .bind(query.from_ms)
            .bind(query.to_ms)
            .fetch(self.pool())
            .map(|row| row.map_err(CoreError::from))
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
    // The log keeps whatever was tried (an attempted username, a reason), but PostgreSQL
    // refuses a NUL in text and other control characters only garble a reader's terminal:
    // they are stored as U+FFFD. Line breaks and tabs stay.
    let (actor, action, subject, detail) = (printable(actor), printable(action), printable(subject), printable(detail));
    let (id,): (i64,) = sqlx::query_as(
        "INSERT INTO audit_log (at_ms, actor, action, subject, detail)
         VALUES ($1, $2, $3, $4, $5) RETURNING id",
    )
    .bind(now_ms())
    .bind(&*actor)
    .bind(&*action)
    .bind(&*subject)
    .bind(&*detail)
    .fetch_one(conn)
    .await?;
    Ok(id)
}

/// `text` with every control character but line feed, carriage return and tab replaced
/// by U+FFFD; borrowed when there is none.
fn printable(text: &str) -> std::borrow::Cow<'_, str> {
    let refused = |c: char| c.is_control() && !matches!(c, '\n' | '\r' | '\t');
    if text.chars().any(refused) {
        std::borrow::Cow::Owned(text.chars().map(|c| if refused(c) { '\u{FFFD}' } else { c }).collect())
    } else {
        std::borrow::Cow::Borrowed(text)
    }
}
