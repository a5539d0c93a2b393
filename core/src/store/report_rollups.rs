//! Reports of whole days from the per-day totals (`usage_rollups.rs`): the same numbers as
//! the ledger's queries in `reports.rs` for the closed intervals, read from a few rows per
//! course and day. The open intervals are added from the ledger by the caller.

use super::reports::{bind_all, course_filter, BucketSums, ReportSnapshot, UsageKey, UsageTotals, UsageWindow, WaitCount};
use crate::CoreError;

/// Where a grouping's rows are: the grain of `usage_days` and that of `usage_waits`, the
/// column that tells groups apart in each, and how a group's id becomes its name (a join
/// made after the rows are summed, so it costs a lookup per group, not per row).
struct Grain {
    days: &'static str,
    waits: &'static str,
    days_key: &'static str,
    waits_key: &'static str,
    name: Option<(&'static str, &'static str)>,
}

fn grain(key: UsageKey) -> Grain {
    match key {
        UsageKey::Course => Grain {
            days: "course",
            waits: "course",
            days_key: "d.course_id",
            waits_key: "d.course_id",
            name: Some(("courses", "code")),
        },
        UsageKey::User => Grain {
            days: "user",
            waits: "user",
            days_key: "d.user_id",
            waits_key: "d.user_id",
            name: Some(("users", "username")),
        },
        UsageKey::Profile => Grain { days: "course", waits: "profile", days_key: "d.profile", waits_key: "d.detail", name: None },
        UsageKey::Gpu => Grain { days: "gpu", waits: "gpu", days_key: "d.detail", waits_key: "d.detail", name: None },
        UsageKey::Image => Grain { days: "image", waits: "image", days_key: "d.detail", waits_key: "d.detail", name: None },
    }
}

/// `summed` (its first column `g`, the group) with the group named: `key` and the rest.
fn named(grain: &Grain, summed: &str, rest: &str) -> String {
    match grain.name {
        Some((table, column)) => format!("SELECT n.{column} AS key, {rest} FROM ({summed}) t JOIN {table} n ON n.id = t.g"),
        None => format!("SELECT t.g AS key, {rest} FROM ({summed}) t"),
    }
}

/// `WHERE` for the period's days of one grain ($1 = from, $2 = to), and the course filter.
fn days_of(window: &UsageWindow, grain: &str, first: usize) -> String {
    format!("WHERE d.grain = '{grain}' AND d.day >= $1 AND d.day < $2{}", course_filter(window, "d", first))
}

impl ReportSnapshot {
    /// [`Store::usage_totals`] of the closed intervals, for a period of whole UTC days.
    pub async fn rollup_totals(&mut self, window: &UsageWindow<'_>, key: UsageKey) -> Result<Vec<UsageTotals>, CoreError> {
        if window.matches_nothing() {
            return Ok(Vec::new());
        }
        let g = grain(key);
        // The first day counts every interval held in it; later days only those begun.
        let summed = format!(
            "SELECT {key} AS g, d.profile AS profile,
                    SUM(CASE WHEN d.day = $1 THEN d.sessions ELSE d.started END) AS sessions,
                    SUM(d.held_ms) AS held_ms, SUM(d.ended_time_limit) AS ended_time_limit,
                    SUM(d.ended_quota) AS ended_quota, SUM(d.ended_idle) AS ended_idle
             FROM usage_days d {where_} GROUP BY 1, 2",
            key = g.days_key,
            where_ = days_of(window, g.days, 3),
        );
        let sql = named(
            &g,
            &summed,
            "t.profile AS profile, CAST(t.sessions AS BIGINT) AS sessions, CAST(t.held_ms AS BIGINT) AS held_ms,
             CAST(t.ended_time_limit AS BIGINT) AS ended_time_limit, CAST(t.ended_quota AS BIGINT) AS ended_quota,
             CAST(t.ended_idle AS BIGINT) AS ended_idle",
        );
        let query = sqlx::query_as::<_, UsageTotals>(&sql);
        Ok(bind_all!(query, window, window.from_ms, window.to_ms).fetch_all(&mut *self.tx).await?)
    }

    /// [`Store::usage_buckets`] of the closed intervals, for buckets of whole days: each
    /// bucket's time as one part that begins and ends in it.
    pub async fn rollup_buckets(&mut self, window: &UsageWindow<'_>, key: UsageKey, bucket_ms: i64) -> Result<Vec<BucketSums>, CoreError> {
        if window.matches_nothing() {
            return Ok(Vec::new());
        }
        let g = grain(key);
        let summed = format!(
            "SELECT {key} AS g, d.profile AS profile, (d.day - $1) / $3 AS bucket, COUNT(*) AS intervals,
                    SUM(d.held_ms) AS held_ms
             FROM usage_days d {where_} GROUP BY 1, 2, 3 HAVING SUM(d.held_ms) > 0",
            key = g.days_key,
            where_ = days_of(window, g.days, 4),
        );
        let sql = named(
            &g,
            &summed,
            "t.profile AS profile, t.bucket AS first, t.bucket AS last, t.intervals AS intervals,
             CAST(0 AS BIGINT) AS start_sum, CAST(t.held_ms AS BIGINT) AS end_sum",
        );
        let query = sqlx::query_as::<_, BucketSums>(&sql);
        Ok(bind_all!(query, window, window.from_ms, window.to_ms, bucket_ms).fetch_all(&mut *self.tx).await?)
    }

    /// [`Store::wait_counts`] of the closed intervals that began in the period's days.
    pub async fn rollup_wait_counts(&mut self, window: &UsageWindow<'_>, key: UsageKey) -> Result<Vec<WaitCount>, CoreError> {
        if window.matches_nothing() {
            return Ok(Vec::new());
        }
        let g = grain(key);
        let summed = format!(
            "SELECT {key} AS g, d.wait_s AS wait_s, SUM(d.intervals) AS intervals
             FROM usage_waits d {where_} GROUP BY 1, 2",
            key = g.waits_key,
            where_ = days_of(window, g.waits, 3),
        );
        let sql = named(&g, &summed, "t.wait_s AS wait_s, CAST(t.intervals AS BIGINT) AS intervals");
        let query = sqlx::query_as::<_, WaitCount>(&sql);
        Ok(bind_all!(query, window, window.from_ms, window.to_ms).fetch_all(&mut *self.tx).await?)
    }
}
