//! The usage ledger summed up for reports inside the database: a few grouped queries per
//! report, whatever the number of rows, so a term of a large class is never streamed
//! through the portal. Each interval counts only for its part inside the period; one still
//! open runs until `until_ms`.

use super::usage_rollups::{IDLE, QUOTA, TIME_LIMIT};
use super::{DbKind, Store};
use crate::CoreError;
use crate::CourseId;

/// The reads of one report, in one read-only transaction, so the ledger's open
/// intervals and the per-day totals are seen at one moment (an interval closing between
/// two reads would otherwise count in both, or in neither).
pub struct ReportSnapshot {
    pub(super) tx: sqlx::Transaction<'static, sqlx::Any>,
}

impl Store {
    pub async fn report_snapshot(&self) -> Result<ReportSnapshot, CoreError> {
        let mut tx = self.pool().begin().await?;
        if self.kind == DbKind::Postgres {
            sqlx::query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY").execute(&mut *tx).await?;
        }
        Ok(ReportSnapshot { tx })
    }
}

impl ReportSnapshot {
    /// Ends the transaction (it wrote nothing).
    pub async fn finish(self) -> Result<(), CoreError> {
        Ok(self.tx.rollback().await?)
    }
}

/// The period a report reads, and whose rows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageWindow<'a> {
    pub from_ms: i64,
    pub to_ms: i64,
    /// Where open intervals end: now, or the period's end if that is earlier.
    pub until_ms: i64,
    /// Only these courses' rows when given (an empty list matches nothing).
    pub courses: Option<&'a [CourseId]>,
    /// Only the intervals still open (what the per-day totals do not hold yet).
    pub open_only: bool,
}

impl UsageWindow<'_> {
    /// Whether no row can match (an instructor of no course).
    pub(super) fn matches_nothing(&self) -> bool {
        self.courses.is_some_and(|c| c.is_empty())
    }
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

/// How many intervals of a group waited `wait_s` whole seconds from claim to slice.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct WaitCount {
    pub key: String,
    pub wait_s: i64,
    pub intervals: i64,
}

/// The ledger, joined to users or courses only where the group names them (a join costs
/// a lookup per row).
fn from(key: UsageKey) -> &'static str {
    match key {
        UsageKey::User => "FROM usage_ledger u JOIN users us ON us.id = u.user_id",
        UsageKey::Course => "FROM usage_ledger u JOIN courses c ON c.id = u.course_id",
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
        "WHERE u.started_at < $2 AND COALESCE(u.ended_at, {OPEN}) >= $1{}{}",
        open_only(window),
        course_filter(window, "u", first)
    )
}

fn open_only(window: &UsageWindow) -> &'static str {
    match window.open_only {
        true => " AND u.ended_at IS NULL",
        false => "",
    }
}

/// ` AND {table}.course_id IN ($first, …)` when the window names courses.
pub(super) fn course_filter(window: &UsageWindow, table: &str, first: usize) -> String {
    match window.courses {
        Some(ids) => {
            let marks: Vec<String> = (0..ids.len()).map(|i| format!("${}", i + first)).collect();
            format!(" AND {table}.course_id IN ({})", marks.join(", "))
        }
        None => String::new(),
    }
}

/// Ended in the period with a reason that begins with `prefix` (the words the reconciler
/// and the quota stop write), as 1 or 0.
fn ended_with(prefix: &str) -> String {
    format!("CASE WHEN u.ended_at >= $1 AND u.ended_at < $2 AND u.end_reason LIKE '{prefix}%' THEN 1 ELSE 0 END")
}

/// Binds the values, then the window's courses.
macro_rules! bind_all {
    ($query:expr, $window:expr, $($value:expr),*) => {{
        let mut query = $query$(.bind($value))*;
        for id in $window.courses.unwrap_or_default() {
            query = query.bind(*id);
        }
        query
    }};
}
pub(super) use bind_all;

impl ReportSnapshot {
    /// Per group and profile: sessions, time held and end causes in the period.
    pub async fn usage_totals(&mut self, window: &UsageWindow<'_>, key: UsageKey) -> Result<Vec<UsageTotals>, CoreError> {
        if window.matches_nothing() {
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
            ended_with(TIME_LIMIT),
            ended_with(QUOTA),
            ended_with(IDLE),
            from(key),
            overlapping(window, 4),
            key = key.sql(),
        );
        let query = sqlx::query_as::<_, UsageTotals>(&sql);
        Ok(bind_all!(query, window, window.from_ms, window.to_ms, window.until_ms).fetch_all(&mut *self.tx).await?)
    }

    /// Per group and profile, the intervals' parts inside the period by the buckets of
    /// `bucket_ms` (from the period's start) they begin and end in.
    pub async fn usage_buckets(&mut self, window: &UsageWindow<'_>, key: UsageKey, bucket_ms: i64) -> Result<Vec<BucketSums>, CoreError> {
        if window.matches_nothing() {
            return Ok(Vec::new());
        }
        let end = end();
        let sql = format!(
            "SELECT {key} AS key, u.profile AS profile, ({START} - $1) / $4 AS first, ({end} - 1 - $1) / $4 AS last,
                    COUNT(*) AS intervals, CAST(SUM({START}) AS BIGINT) AS start_sum, CAST(SUM({end}) AS BIGINT) AS end_sum
             {} {} AND {end} > {START} GROUP BY 1, 2, 3, 4",
            from(key),
            overlapping(window, 5),
            key = key.sql(),
        );
        let query = sqlx::query_as::<_, BucketSums>(&sql);
        Ok(bind_all!(query, window, window.from_ms, window.to_ms, window.until_ms, bucket_ms).fetch_all(&mut *self.tx).await?)
    }

    /// Per group, how many intervals that got their slice in the period waited how many
    /// whole seconds for it.
    pub async fn wait_counts(&mut self, window: &UsageWindow<'_>, key: UsageKey) -> Result<Vec<WaitCount>, CoreError> {
        if window.matches_nothing() {
            return Ok(Vec::new());
        }
        let sql = format!(
            "SELECT {key} AS key, (CASE WHEN u.started_at > s.requested_at THEN u.started_at - s.requested_at ELSE 0 END) / 1000 AS wait_s,
                    COUNT(*) AS intervals
             {} JOIN gpu_sessions s ON s.id = u.session_id
             WHERE u.started_at >= $1 AND u.started_at < $2{}{}
             GROUP BY 1, 2",
            from(key),
            open_only(window),
            course_filter(window, "u", 3),
            key = key.sql(),
        );
        let query = sqlx::query_as::<_, WaitCount>(&sql);
        Ok(bind_all!(query, window, window.from_ms, window.to_ms).fetch_all(&mut *self.tx).await?)
    }
}
