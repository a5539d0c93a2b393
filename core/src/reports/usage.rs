//! One pass over the ledger for a period: a row per group with its compute-slice-hours,
//! GPU-memory-hours, sessions, queue waits and end causes, the same for all rows together,
//! and the use over time by course and by GPU for the charts. An interval counts only
//! for its part inside the period; one still open runs until now.

use std::collections::HashMap;

use super::query::{GroupBy, ReportQuery};
use crate::quotas::compute_slices;
use crate::store::{Store, UsageSpan};
use crate::CoreError;

const HOUR_MS: i64 = 3_600_000;
const DAY_MS: i64 = 24 * HOUR_MS;

/// The numbers of one group (or of the whole report).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReportRow {
    /// What the rows are grouped by: a course code, username, profile, GPU UUID or image.
    pub key: String,
    /// Compute-slice-milliseconds inside the period (a `3g` for an hour is 3 hours' worth).
    pub slice_ms: i64,
    /// GPU memory (GB of the profile) times milliseconds, divided by 1000 (GB-seconds).
    pub memory_gb_s: i64,
    /// Sessions whose slice was held at some time in the period.
    pub sessions: i64,
    /// Median and 95th percentile (nearest rank) of the queue wait, from claim to slice,
    /// of the sessions that got their slice in the period.
    pub wait_p50_ms: Option<i64>,
    pub wait_p95_ms: Option<i64>,
    /// Sessions that ended in the period at the time limit, with the quota used up, or idle.
    pub ended_time_limit: i64,
    pub ended_quota: i64,
    pub ended_idle: i64,
}

/// Use per time bucket of one course or one GPU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Series {
    pub name: String,
    /// Compute-slice-milliseconds in each bucket.
    pub values: Vec<i64>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageReport {
    pub query: ReportQuery,
    /// Largest use first.
    pub rows: Vec<ReportRow>,
    pub total: ReportRow,
    /// Bucket starts; each bucket lasts `bucket_ms` (the last one may end at the period's end).
    pub buckets: Vec<i64>,
    pub bucket_ms: i64,
    /// Use over time by course, largest first.
    pub by_course: Vec<Series>,
    /// Compute slices held on each GPU over time (of the 7 a GPU has).
    pub by_gpu: Vec<Series>,
}

enum EndCause {
    TimeLimit,
    Quota,
    Idle,
}

/// Why a session ended, for the report's three counted causes. The words are the
/// reasons the reconciler and the quota stop write (`sessions::reconcile`, `quota_stop`).
fn end_cause(reason: &str) -> Option<EndCause> {
    if reason.starts_with("stopped at the course's time limit") {
        Some(EndCause::TimeLimit)
    } else if reason.starts_with("quota used up") {
        Some(EndCause::Quota)
    } else if reason.starts_with("idle") {
        Some(EndCause::Idle)
    } else {
        None
    }
}

/// GB of GPU memory of a profile name: `3g.40gb` → 40, `1g.10gb+me` → 10.
pub fn memory_gb(profile: &str) -> i64 {
    profile
        .split_once('.')
        .and_then(|(_, rest)| rest.split("gb").next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

#[derive(Default)]
struct Tally {
    row: ReportRow,
    waits: Vec<i64>,
}

impl Tally {
    fn add(&mut self, span: &UsageSpan, inside_ms: i64, query: &ReportQuery) {
        let row = &mut self.row;
        row.slice_ms += inside_ms * compute_slices(&span.profile);
        row.memory_gb_s += inside_ms * memory_gb(&span.profile) / 1000;
        let started_inside = (query.from_ms..query.to_ms).contains(&span.started_at_ms);
        if inside_ms > 0 || started_inside {
            row.sessions += 1;
        }
        if started_inside {
            self.waits.push((span.started_at_ms - span.requested_at_ms).max(0));
        }
        if let (Some(end), Some(reason)) = (span.ended_at_ms, &span.end_reason) {
            if (query.from_ms..query.to_ms).contains(&end) {
                match end_cause(reason) {
                    Some(EndCause::TimeLimit) => row.ended_time_limit += 1,
                    Some(EndCause::Quota) => row.ended_quota += 1,
                    Some(EndCause::Idle) => row.ended_idle += 1,
                    None => {}
                }
            }
        }
    }

    fn finish(mut self, key: String) -> ReportRow {
        self.waits.sort_unstable();
        self.row.wait_p50_ms = nearest_rank(&self.waits, 50);
        self.row.wait_p95_ms = nearest_rank(&self.waits, 95);
        self.row.key = key;
        self.row
    }
}

fn nearest_rank(sorted: &[i64], percent: usize) -> Option<i64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = (sorted.len() * percent).div_ceil(100).max(1);
    sorted.get(rank - 1).copied()
}

/// Hours for a day, days up to two months, weeks beyond.
fn bucket_ms(query: &ReportQuery) -> i64 {
    match query.to_ms - query.from_ms {
        span if span <= 2 * DAY_MS => HOUR_MS,
        span if span <= 62 * DAY_MS => DAY_MS,
        _ => 7 * DAY_MS,
    }
}

/// The report of `query` at `now_ms`, limited to `courses` when given.
pub async fn usage_report(
    store: &Store,
    query: &ReportQuery,
    courses: Option<&[i64]>,
    now_ms: i64,
) -> Result<UsageReport, CoreError> {
    let step = bucket_ms(query);
    let buckets: Vec<i64> = (query.from_ms..query.to_ms).step_by(step as usize).collect();
    let mut groups: HashMap<String, Tally> = HashMap::new();
    let mut total = Tally::default();
    let mut by_course: HashMap<String, Vec<i64>> = HashMap::new();
    let mut by_gpu: HashMap<String, Vec<i64>> = HashMap::new();
    let until = query.to_ms.min(now_ms);
    store
        .each_usage_span(query.from_ms, query.to_ms, courses, |span| {
            let start = span.started_at_ms.max(query.from_ms);
            let end = span.ended_at_ms.unwrap_or(until).min(query.to_ms).max(start);
            let key = match query.group {
                GroupBy::Course => span.course_code.clone(),
                GroupBy::User => span.username.clone(),
                GroupBy::Profile => span.profile.clone(),
                GroupBy::Gpu => span.gpu_uuid.clone(),
                GroupBy::Image => span.image.clone(),
            };
            groups.entry(key).or_default().add(&span, end - start, query);
            total.add(&span, end - start, query);
            let slices = compute_slices(&span.profile);
            let course = by_course.entry(span.course_code.clone()).or_insert_with(|| vec![0; buckets.len()]);
            let gpu = by_gpu.entry(span.gpu_uuid.clone()).or_insert_with(|| vec![0; buckets.len()]);
            let first = ((start - query.from_ms) / step) as usize;
            for (i, bucket) in buckets.iter().enumerate().skip(first) {
                let inside = end.min(bucket + step) - start.max(*bucket);
                if inside <= 0 {
                    break;
                }
                course[i] += inside * slices;
                gpu[i] += inside * slices;
            }
        })
        .await?;
    let mut rows: Vec<ReportRow> = groups.into_iter().map(|(key, tally)| tally.finish(key)).collect();
    rows.sort_by(|a, b| b.slice_ms.cmp(&a.slice_ms).then_with(|| a.key.cmp(&b.key)));
    Ok(UsageReport {
        query: *query,
        rows,
        total: total.finish("total".into()),
        buckets,
        bucket_ms: step,
        by_course: series(by_course),
        by_gpu: series(by_gpu),
    })
}

/// Largest first, then by name.
fn series(map: HashMap<String, Vec<i64>>) -> Vec<Series> {
    let mut out: Vec<Series> = map.into_iter().map(|(name, values)| Series { name, values }).collect();
    out.sort_by(|a, b| {
        let sum = |s: &Series| s.values.iter().sum::<i64>();
        sum(b).cmp(&sum(a)).then_with(|| a.name.cmp(&b.name))
    });
    out
}
