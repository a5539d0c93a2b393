//! Reports of whole days from the per-day totals (`usage_rollups.rs`): the same numbers as
//! the ledger's queries in `reports.rs` for the closed intervals, read from a few rows per
//! course and day. The open intervals are added from the ledger by the caller.

use super::reports::{bind_all, course_filter, BucketSums, UsageKey, UsageTotals, UsageWindow, WaitCount};
use super::Store;
use crate::CoreError;

/// Where a grouping's rows are: the grain of `usage_days`, that of `usage_waits`, the
/// group's name in each (alias `d`) and the join that names it.
struct Grain {
    days: &'static str,
    waits: &'static str,
    days_key: &'static str,
    waits_key: &'static str,
    join: &'static str,
}

fn grain(key: UsageKey) -> Grain {
    match key {
        UsageKey::Course => Grain {
            days: "course",
            waits: "course",
            days_key: "c.code",
            waits_key: "c.code",
            join: "JOIN courses c ON c.id = d.course_id",
        },
        UsageKey::User => Grain {
            days: "user",
            waits: "user",
            days_key: "us.username",
            waits_key: "us.username",
            join: "JOIN users us ON us.id = d.user_id",
        },
        UsageKey::Profile => Grain { days: "course", waits: "profile", days_key: "d.profile", waits_key: "d.detail", join: "" },
        UsageKey::Gpu => Grain { days: "gpu", waits: "gpu", days_key: "d.detail", waits_key: "d.detail", join: "" },
        UsageKey::Image => Grain { days: "image", waits: "image", days_key: "d.detail", waits_key: "d.detail", join: "" },
    }
}

/// `WHERE` for the period's days of one grain ($1 = from, $2 = to), and the course filter.
fn days_of(window: &UsageWindow, grain: &str, first: usize) -> String {
    format!("WHERE d.grain = '{grain}' AND d.day >= $1 AND d.day < $2{}", course_filter(window, "d", first))
}

impl Store {
    /// [`Store::usage_totals`] of the closed intervals, for a period of whole UTC days.
    pub async fn rollup_totals(&self, window: &UsageWindow<'_>, key: UsageKey) -> Result<Vec<UsageTotals>, CoreError> {
        if window.matches_nothing() {
            return Ok(Vec::new());
        }
        let g = grain(key);
        // The first day counts every interval held in it; later days only those begun.
        let sql = format!(
            "SELECT {key} AS key, d.profile AS profile,
                    CAST(SUM(CASE WHEN d.day = $1 THEN d.sessions ELSE d.started END) AS BIGINT) AS sessions,
                    CAST(SUM(d.held_ms) AS BIGINT) AS held_ms,
                    CAST(SUM(d.ended_time_limit) AS BIGINT) AS ended_time_limit,
                    CAST(SUM(d.ended_quota) AS BIGINT) AS ended_quota,
                    CAST(SUM(d.ended_idle) AS BIGINT) AS ended_idle
             FROM usage_days d {join} {where_} GROUP BY 1, 2",
            key = g.days_key,
            join = g.join,
            where_ = days_of(window, g.days, 3),
        );
        let query = sqlx::query_as::<_, UsageTotals>(&sql);
        Ok(bind_all!(query, window, window.from_ms, window.to_ms).fetch_all(self.pool()).await?)
    }

    /// [`Store::usage_buckets`] of the closed intervals, for buckets of whole days: each
    /// bucket's time as one part that begins and ends in it.
    pub async fn rollup_buckets(&self, window: &UsageWindow<'_>, key: UsageKey, bucket_ms: i64) -> Result<Vec<BucketSums>, CoreError> {
        if window.matches_nothing() {
            return Ok(Vec::new());
        }
        let g = grain(key);
        let sql = format!(
            "SELECT {key} AS key, d.profile AS profile, (d.day - $1) / $3 AS first, (d.day - $1) / $3 AS last,
                    COUNT(*) AS intervals, CAST(0 AS BIGINT) AS start_sum, CAST(SUM(d.held_ms) AS BIGINT) AS end_sum
             FROM usage_days d {join} {where_} GROUP BY 1, 2, 3, 4 HAVING SUM(d.held_ms) > 0",
            key = g.days_key,
            join = g.join,
            where_ = days_of(window, g.days, 4),
        );
        let query = sqlx::query_as::<_, BucketSums>(&sql);
        Ok(bind_all!(query, window, window.from_ms, window.to_ms, bucket_ms).fetch_all(self.pool()).await?)
    }

    /// [`Store::wait_counts`] of the closed intervals that began in the period's days.
    pub async fn rollup_wait_counts(&self, window: &UsageWindow<'_>, key: UsageKey) -> Result<Vec<WaitCount>, CoreError> {
        if window.matches_nothing() {
            return Ok(Vec::new());
        }
        let g = grain(key);
        let sql = format!(
            "SELECT {key} AS key, d.wait_s AS wait_s, CAST(SUM(d.intervals) AS BIGINT) AS intervals
             FROM usage_waits d {join} {where_} GROUP BY 1, 2",
            key = g.waits_key,
            join = g.join,
            where_ = days_of(window, g.waits, 3),
        );
        let query = sqlx::query_as::<_, WaitCount>(&sql);
        Ok(bind_all!(query, window, window.from_ms, window.to_ms).fetch_all(self.pool()).await?)
    }
}
