//! The usage ledger summed up for reports inside the database: a few grouped queries per
//! report, whatever the number of rows, so a term of a large class is never streamed
//! through the portal. Each interval counts only for its part inside the period; one still
//! open runs until `until_ms`.

use super::Store;
use crate::CoreError;
use crate::CourseId;

/// The period a report reads, and whose rows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageWindow<'a> {
    pub from_ms: i64,
    pub to_ms: i64,
    /// Where open intervals end: now, or the period's end if that is earlier.
    pub until_ms: i64,
    /// Only these courses' rows when given (an empty list matches nothing).
    pub courses: Option<&'a [CourseId]>,
}

/// What a report groups by, as the SQL that names a row's group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UsageKey {
    Course,
    User,
    Profile,
    Gpu,
    Image,
}

impl UsageKey {
    fn sql(self) -> &'static str {
        match self {
            UsageKey::Course => "c.code",
            UsageKey::User => "us.username",
            UsageKey::Profile => "u.profile",
            UsageKey::Gpu => "u.gpu_uuid",
            UsageKey::Image => "u.image",
        }
    }
}

/// One group's intervals of one profile.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct UsageTotals {
    pub key: String,
    pub profile: String,
    /// Intervals that held their slice in the period (or began in it).
    pub sessions: i64,
    /// Milliseconds held inside the period, all intervals together.
    pub held_ms: i64,
    /// Intervals that ended in the period at the time limit, with the quota used up, idle.
    pub ended_time_limit: i64,
    pub ended_quota: i64,
    pub ended_idle: i64,
}

/// Intervals of one group and profile whose part inside the period begins in bucket
/// `first` and ends in bucket `last`, with the sums of those parts' starts and ends, which
/// is all it takes to share their time out among the buckets exactly.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct BucketSums {
    pub key: String,
    pub profile: String,
    pub first: i64,
    pub last: i64,
    pub intervals: i64,
    pub start_sum: i64,
    pub end_sum: i64,
}

/// The queue wait (claim to slice) at a nearest rank of a group, for the sessions that got
/// their slice in the period: `percent` 50 is the median.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WaitAtRank {
    /// `None` for all groups together.
    pub key: Option<String>,
    pub percent: i64,
    pub wait_ms: i64,
}

/// The ledger, joined to users or courses only where the group names them (a join costs
/// a lookup per row).
fn from(key: Option<UsageKey>) -> &'static str {
    match key {
        Some(UsageKey::User) => "FROM usage_ledger u JOIN users us ON us.id = u.user_id",
        Some(UsageKey::Course) => "FROM usage_ledger u JOIN courses c ON c.id = u.course_id",
        _ => "FROM usage_ledger u",
    }
}
/// An open interval's end as the reach index holds it: after every period.
const OPEN: i64 = i64::MAX;

/// The part of an interval inside the period: its start and its end ($1 = from,
/// $2 = to, $3 = until).
const START: &str = "(CASE WHEN u.started_at > $1 THEN u.started_at ELSE $1 END)";
const RAW_END: &str = "(CASE WHEN u.ended_at IS NULL THEN $3 WHEN u.ended_at < $2 THEN u.ended_at ELSE $2 END)";

fn end() -> String {
    format!("(CASE WHEN {RAW_END} < {START} THEN {START} ELSE {RAW_END} END)")
}

/// `WHERE` for intervals overlapping the period, and the course filter from `$first`.
/// "Ended after the start or still open" is one expression so it seeks its index
/// (`usage_ledger_reach`): said with OR, both databases walked every row started before
/// the period's end, a year of them for this week's report.
fn overlapping(window: &UsageWindow, first: usize) -> String {
    format!(
        "WHERE u.started_at < $2 AND COALESCE(u.ended_at, {OPEN}) >= $1{}",
        course_filter(window, first)
    )
}

fn course_filter(window: &UsageWindow, first: usize) -> String {
    match window.courses {
        Some(ids) => {
            let marks: Vec<String> = (0..ids.len()).map(|i| format!("${}", i + first)).collect();
            format!(" AND u.course_id IN ({})", marks.join(", "))
        }
        None => String::new(),
    }
}

/// Ended in the period with a reason that begins with `prefix` (the words the reconciler
/// and the quota stop write), as 1 or 0.
fn ended_with(prefix: &str) -> String {
    format!("CASE WHEN u.ended_at >= $1 AND u.ended_at < $2 AND u.end_reason LIKE '{prefix}%' THEN 1 ELSE 0 END")
}

macro_rules! bind_all {
    ($query:expr, $window:expr, $($value:expr),*) => {{
        let mut query = $query$(.bind($value))*;
        for id in $window.courses.unwrap_or_default() {
            query = query.bind(*id);
        }
        query
    }};
}

/// A wait with its rank in its group (`rn` of `n`) and among all (`rn_all` of `n_all`).
#[derive(sqlx::FromRow)]
struct RankedWait {
    k: String,
    w: i64,
    rn: i64,
    n: i64,
    rn_all: i64,
    n_all: i64,
}

impl Store {
    /// Per group and profile: sessions, time held and end causes in the period.
    pub async fn usage_totals(&self, window: &UsageWindow<'_>, key: UsageKey) -> Result<Vec<UsageTotals>, CoreError> {
        if window.courses.is_some_and(|c| c.is_empty()) {
            return Ok(Vec::new());
        }
        let end = end();
        let sql = format!(
            "SELECT {key} AS key, u.profile AS profile,
                    CAST(SUM(CASE WHEN {end} > {START} OR u.started_at >= $1 THEN 1 ELSE 0 END) AS BIGINT) AS sessions,
                    CAST(SUM({end} - {START}) AS BIGINT) AS held_ms,
                    CAST(SUM({}) AS BIGINT) AS ended_time_limit, CAST(SUM({}) AS BIGINT) AS ended_quota,
                    CAST(SUM({}) AS BIGINT) AS ended_idle
             {} {} GROUP BY 1, 2",
            ended_with("stopped at the course''s time limit"),
            ended_with("quota used up"),
            ended_with("idle"),
            from(Some(key)),
            overlapping(window, 4),
            key = key.sql(),
        );
        let query = sqlx::query_as::<_, UsageTotals>(&sql);
        Ok(bind_all!(query, window, window.from_ms, window.to_ms, window.until_ms).fetch_all(self.pool()).await?)
    }

    /// Per group and profile, the intervals' parts inside the period by the buckets of
    /// `bucket_ms` (from the period's start) they begin and end in.
    pub async fn usage_buckets(&self, window: &UsageWindow<'_>, key: UsageKey, bucket_ms: i64) -> Result<Vec<BucketSums>, CoreError> {
        if window.courses.is_some_and(|c| c.is_empty()) {
            return Ok(Vec::new());
        }
        let end = end();
        let sql = format!(
            "SELECT {key} AS key, u.profile AS profile, ({START} - $1) / $4 AS first, ({end} - 1 - $1) / $4 AS last,
                    COUNT(*) AS intervals, CAST(SUM({START}) AS BIGINT) AS start_sum, CAST(SUM({end}) AS BIGINT) AS end_sum
             {} {} AND {end} > {START} GROUP BY 1, 2, 3, 4",
            from(Some(key)),
            overlapping(window, 5),
            key = key.sql(),
        );
        let query = sqlx::query_as::<_, BucketSums>(&sql);
        Ok(bind_all!(query, window, window.from_ms, window.to_ms, window.until_ms, bucket_ms).fetch_all(self.pool()).await?)
    }

    /// The queue waits at the nearest ranks of `percents`, of each group (`key` set) and
    /// of all groups together (`key` `None`), over the sessions that got their slice in
    /// the period; one sort of those sessions for both.
    pub async fn wait_ranks(&self, window: &UsageWindow<'_>, key: UsageKey, percents: &[i64]) -> Result<Vec<WaitAtRank>, CoreError> {
        if window.courses.is_some_and(|c| c.is_empty()) || percents.is_empty() {
            return Ok(Vec::new());
        }
        let wait = "(CASE WHEN u.started_at > s.requested_at THEN u.started_at - s.requested_at ELSE 0 END)";
        let ranks: Vec<String> = percents
            .iter()
            .map(|p| format!("rn = (n * {p} + 99) / 100 OR rn_all = (n_all * {p} + 99) / 100"))
            .collect();
        let sql = format!(
            "SELECT k, w, rn, n, rn_all, n_all FROM (
                SELECT {group} AS k, {wait} AS w,
                       ROW_NUMBER() OVER (PARTITION BY {group} ORDER BY {wait}) AS rn,
                       COUNT(*) OVER (PARTITION BY {group}) AS n,
                       ROW_NUMBER() OVER (ORDER BY {wait}) AS rn_all,
                       COUNT(*) OVER () AS n_all
                {} JOIN gpu_sessions s ON s.id = u.session_id
                WHERE u.started_at >= $1 AND u.started_at < $2{}
             ) ranked WHERE {}",
            from(Some(key)),
            course_filter(window, 3),
            ranks.join(" OR "),
            group = key.sql(),
        );
        let query = sqlx::query_as::<_, RankedWait>(&sql);
        let rows = bind_all!(query, window, window.from_ms, window.to_ms).fetch_all(self.pool()).await?;
        let mut out = Vec::new();
        for RankedWait { k, w: wait_ms, rn, n, rn_all, n_all } in rows {
            for p in percents {
                if rn == (n * p + 99) / 100 {
                    out.push(WaitAtRank { key: Some(k.clone()), percent: *p, wait_ms });
                }
                if rn_all == (n_all * p + 99) / 100 {
                    out.push(WaitAtRank { key: None, percent: *p, wait_ms });
                }
            }
        }
        Ok(out)
    }
}
