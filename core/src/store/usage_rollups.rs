//! Per-day totals of the usage ledger (migration 0017): a closed interval adds its part of
//! each UTC day it touched in the transaction that closes it, and the whole roll-up can be
//! computed again from the ledger (`slicehub usage rebuild`, and at start after the
//! migration). One SQL text does both: it splits the chosen closed intervals into days and
//! adds them, per grain, to what the tables hold.

use super::{DbKind, Store};
use crate::CoreError;

const DAY_MS: i64 = 86_400_000;
/// The setting that says whether the roll-up holds every closed interval.
const READY_KEY: &str = "usage_rollups";
const READY: &str = "built";

/// The end causes a report counts, by the words the reconciler and the quota stop begin
/// their reasons with.
pub(super) const TIME_LIMIT: &str = "stopped at the course''s time limit";
pub(super) const QUOTA: &str = "quota used up";
pub(super) const IDLE: &str = "idle";

/// The closed intervals `filter` picks (a condition on the ledger, alias `u`), one row per
/// UTC day each touched, from the day it began to the day it ended.
fn day_parts(filter: &str) -> String {
    let held = format!(
        "(CASE WHEN e < day + {DAY_MS} THEN e ELSE day + {DAY_MS} END - CASE WHEN s > day THEN s ELSE day END)"
    );
    let ended = |cause: &str| format!("CASE WHEN e < day + {DAY_MS} AND reason LIKE '{cause}%' THEN 1 ELSE 0 END");
    format!(
        "WITH RECURSIVE spans (course_id, user_id, gpu_uuid, image, profile, s, e, reason, day) AS (
             SELECT u.course_id, u.user_id, u.gpu_uuid, u.image, u.profile, u.started_at, u.ended_at,
                    COALESCE(u.end_reason, ''), u.started_at / {DAY_MS} * {DAY_MS}
             FROM usage_ledger u WHERE u.ended_at IS NOT NULL AND {filter}
             UNION ALL
             SELECT course_id, user_id, gpu_uuid, image, profile, s, e, reason, day + {DAY_MS}
             FROM spans WHERE day + {DAY_MS} <= e
         ),
         parts AS (
             SELECT course_id, user_id, gpu_uuid, image, profile, day,
                    CASE WHEN {held} > 0 OR s >= day THEN 1 ELSE 0 END AS sessions,
                    CASE WHEN s >= day THEN 1 ELSE 0 END AS started,
                    {held} AS held_ms,
                    {} AS ended_time_limit, {} AS ended_quota, {} AS ended_idle
             FROM spans
         )",
        ended(TIME_LIMIT),
        ended(QUOTA),
        ended(IDLE),
    )
}

/// Adds the day parts of the intervals `filter` picks to `usage_days`. Rows go in a fixed
/// order so two closes on PostgreSQL lock shared rows in the same order.
fn add_days(filter: &str) -> String {
    let grain = |name: &str, user: &str, detail: &str| {
        format!(
            "SELECT '{name}' AS grain, day, course_id, {user} AS user_id, {detail} AS detail, profile, sessions, started,
                    held_ms, ended_time_limit, ended_quota, ended_idle FROM parts"
        )
    };
    format!(
        "{} INSERT INTO usage_days (grain, day, course_id, user_id, detail, profile, sessions, started, held_ms,
                                    ended_time_limit, ended_quota, ended_idle)
         SELECT grain, day, course_id, user_id, detail, profile, SUM(sessions), SUM(started), SUM(held_ms),
                SUM(ended_time_limit), SUM(ended_quota), SUM(ended_idle)
         FROM ({} UNION ALL {} UNION ALL {} UNION ALL {}) g
         GROUP BY grain, day, course_id, user_id, detail, profile
         ORDER BY grain, day, course_id, user_id, detail, profile
         ON CONFLICT (grain, day, course_id, user_id, detail, profile) DO UPDATE SET
             sessions = usage_days.sessions + excluded.sessions,
             started = usage_days.started + excluded.started,
             held_ms = usage_days.held_ms + excluded.held_ms,
             ended_time_limit = usage_days.ended_time_limit + excluded.ended_time_limit,
             ended_quota = usage_days.ended_quota + excluded.ended_quota,
             ended_idle = usage_days.ended_idle + excluded.ended_idle",
        day_parts(filter),
        grain("course", "0", "''"),
        grain("user", "user_id", "''"),
        grain("gpu", "0", "gpu_uuid"),
        grain("image", "0", "image"),
    )
}

/// Adds the queue waits (whole seconds, claim to slice) of the intervals `filter` picks to
/// `usage_waits`, on the day each began.
fn add_waits(filter: &str) -> String {
    let grain = |name: &str, user: &str, detail: &str| {
        format!("SELECT '{name}' AS grain, day, course_id, {user} AS user_id, {detail} AS detail, wait_s FROM waits")
    };
    format!(
        "WITH waits AS (
             SELECT u.course_id, u.user_id, u.gpu_uuid, u.image, u.profile, u.started_at / {DAY_MS} * {DAY_MS} AS day,
                    (CASE WHEN u.started_at > s.requested_at THEN u.started_at - s.requested_at ELSE 0 END) / 1000 AS wait_s
             FROM usage_ledger u JOIN gpu_sessions s ON s.id = u.session_id
             WHERE u.ended_at IS NOT NULL AND {filter}
         )
         INSERT INTO usage_waits (grain, day, course_id, user_id, detail, wait_s, intervals)
         SELECT grain, day, course_id, user_id, detail, wait_s, COUNT(*)
         FROM ({} UNION ALL {} UNION ALL {} UNION ALL {} UNION ALL {}) g
         GROUP BY grain, day, course_id, user_id, detail, wait_s
         ORDER BY grain, day, course_id, user_id, detail, wait_s
         ON CONFLICT (grain, day, course_id, user_id, detail, wait_s) DO UPDATE SET
             intervals = usage_waits.intervals + excluded.intervals",
        grain("course", "0", "''"),
        grain("profile", "0", "profile"),
        grain("user", "user_id", "''"),
        grain("gpu", "0", "gpu_uuid"),
        grain("image", "0", "image"),
    )
}

impl Store {
    /// Closes the interval if it is open and adds it to the per-day totals, in one
    /// transaction; returns whether this call closed it.
    pub async fn close_usage(&self, session_id: &str, ended_at_ms: i64, reason: &str) -> Result<bool, CoreError> {
        let mut tx = self.begin_write().await?;
        // Never before the interval began (an engine's clock may lag the portal's).
        let closed = sqlx::query(
            "UPDATE usage_ledger SET ended_at = CASE WHEN $1 < started_at THEN started_at ELSE $1 END, end_reason = $2
             WHERE session_id = $3 AND ended_at IS NULL",
        )
        .bind(ended_at_ms)
        .bind(reason)
        .bind(session_id)
        .execute(&mut *tx)
        .await?;
        if closed.rows_affected() != 1 {
            return Ok(false);
        }
        let this = "u.session_id = $1";
        sqlx::query(&add_days(this)).bind(session_id).execute(&mut *tx).await?;
        sqlx::query(&add_waits(this)).bind(session_id).execute(&mut *tx).await?;
        tx.commit().await?;
        Ok(true)
    }

    /// Computes the per-day totals again from every closed interval of the ledger.
    pub async fn rebuild_usage_rollups(&self) -> Result<(), CoreError> {
        let mut tx = self.begin_write().await?;
        if self.kind == DbKind::Postgres {
            // A close that commits meanwhile would be counted twice or not at all; it
            // waits for the rebuild instead, then adds its interval to it.
            sqlx::query("LOCK TABLE usage_days, usage_waits IN EXCLUSIVE MODE").execute(&mut *tx).await?;
        }
        sqlx::query("DELETE FROM usage_days").execute(&mut *tx).await?;
        sqlx::query("DELETE FROM usage_waits").execute(&mut *tx).await?;
        sqlx::query(&add_days("TRUE")).execute(&mut *tx).await?;
        sqlx::query(&add_waits("TRUE")).execute(&mut *tx).await?;
        sqlx::query(
            "INSERT INTO settings (key, value, updated_at) VALUES ($1, $2, $3)
             ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
        )
        .bind(READY_KEY)
        .bind(READY)
        .bind(super::now_ms())
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(())
    }

    /// Whether the per-day totals hold every closed interval (not yet after migration
    /// 0017 on a database with history, until the first start or `slicehub usage rebuild`).
    pub async fn usage_rollups_ready(&self) -> Result<bool, CoreError> {
        Ok(self.setting(READY_KEY).await?.as_deref() == Some(READY))
    }

    /// Builds the per-day totals if the migration asked for it.
    pub(super) async fn rebuild_usage_rollups_if_asked(&self) -> Result<(), CoreError> {
        if !self.usage_rollups_ready().await? {
            self.rebuild_usage_rollups().await?;
        }
        Ok(())
    }
}
