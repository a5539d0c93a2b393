use super::{now_ms, Store};
use crate::CoreError;

/// Instance-wide key/value facts (e.g. when this instance was first started).
impl Store {
    pub async fn setting(&self, key: &str) -> Result<Option<String>, CoreError> {
        let row: Option<(String,)> = sqlx::query_as("SELECT value FROM settings WHERE key = $1")
            .bind(key)
            .fetch_optional(self.pool())
            .await?;
        Ok(row.map(|(v,)| v))
    }

    pub async fn set_setting(&self, key: &str, value: &str) -> Result<(), CoreError> {
        sqlx::query(
            "INSERT INTO settings (key, value, updated_at) VALUES ($1, $2, $3)
             ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
        )
        .bind(key)
        .bind(value)
        .bind(now_ms())
        .execute(self.pool())
        .await?;
        Ok(())
    }

    /// Stores `value` only if the key has none yet; returns the value that is stored.
    pub async fn setting_or_insert(&self, key: &str, value: &str) -> Result<String, CoreError> {
        sqlx::query(
            "INSERT INTO settings (key, value, updated_at) VALUES ($1, $2, $3)
             ON CONFLICT (key) DO NOTHING",
        )
        .bind(key)
        .bind(value)
        .bind(now_ms())
        .execute(self.pool())
        .await?;
        Ok(self
            .setting(key)
            .await?
            .unwrap_or_else(|| value.to_string()))
    }
}
