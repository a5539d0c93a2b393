//! MIG instances the portal created ahead of a booked window (migration 0010).

use super::{now_ms, Store};
use crate::CoreError;

impl Store {
    /// Writes down, before creating it, that the portal makes this instance for a booking.
    pub async fn record_prepared_instance(&self, gpu_uuid: &str, profile_id: u32, start: u8) -> Result<(), CoreError> {
        sqlx::query(
            "INSERT INTO prepared_instances (gpu_uuid, profile_id, start_slice, created_at)
             VALUES ($1, $2, $3, $4) ON CONFLICT (gpu_uuid, profile_id, start_slice) DO NOTHING",
        )
        .bind(gpu_uuid)
        .bind(i64::from(profile_id))
        .bind(i64::from(start))
        .bind(now_ms())
        .execute(self.pool())
        .await?;
        Ok(())
    }

    /// Every instance recorded as prepared: (GPU UUID, profile id, start slice).
    pub async fn prepared_instances(&self) -> Result<Vec<(String, u32, u8)>, CoreError> {
        let rows: Vec<(String, i64, i64)> =
            sqlx::query_as("SELECT gpu_uuid, profile_id, start_slice FROM prepared_instances")
                .fetch_all(self.pool())
                .await?;
        Ok(rows.into_iter().map(|(uuid, profile, start)| (uuid, profile as u32, start as u8)).collect())
    }

    pub async fn forget_prepared_instance(&self, gpu_uuid: &str, profile_id: u32, start: u8) -> Result<(), CoreError> {
        sqlx::query("DELETE FROM prepared_instances WHERE gpu_uuid = $1 AND profile_id = $2 AND start_slice = $3")
            .bind(gpu_uuid)
            .bind(i64::from(profile_id))
            .bind(i64::from(start))
            .execute(self.pool())
            .await?;
        Ok(())
    }
}
