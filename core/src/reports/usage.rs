//! A report for a period, summed up by the database: a row per group with its
//! compute-slice-hours, GPU-memory-hours, sessions, queue waits and end causes, the same
//! for all rows together, and the use over time by course and by GPU for the charts. An
//! interval counts only for its part inside the period; one still open runs until now.

use std::collections::{BTreeMap, HashMap};

use super::query::{GroupBy, ReportQuery};
use crate::quotas::{milli_slices, slice_ms, weights::charge};
use crate::store::{BucketSums, Store, UsageKey, UsageWindow, WaitCount};
use crate::CoreError;
use crate::CourseId;

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
    /// in whole seconds, of the sessions that got their slice in the period.
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

/// GB-seconds of GPU memory `held_ms` of `profile` hold; a share's part of its GPU's
/// memory is taken after multiplying, so a seventh of 24 GB is not rounded to 3.
fn memory_gb_s(profile: &str, held_ms: i64) -> i64 {
    match slicehub_mig::share_of(profile) {
        Some((whole, count)) => held_ms.saturating_mul(memory_gb(whole)) / i64::from(count) / 1000,
        None => held_ms.saturating_mul(memory_gb(profile)) / 1000,
    }
}

/// GB of GPU memory of a profile name: `3g.40gb` → 40, `1g.10gb+me` → 10; a share's
/// part of its GPU's, rounded down.
pub fn memory_gb(profile: &str) -> i64 {
    if let Some((whole, count)) = slicehub_mig::share_of(profile) {
        return memory_gb(whole) / i64::from(count);
    }
    profile
        .split_once('.')
        .and_then(|(_, rest)| rest.split("gb").next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// Hours for a day, days up to two months, weeks beyond.
fn bucket_ms(query: &ReportQuery) -> i64 {
    match query.to_ms - query.from_ms {
        span if span <= 2 * DAY_MS => HOUR_MS,
        span if span <= 62 * DAY_MS => DAY_MS,
        _ => 7 * DAY_MS,
    }
}

fn usage_key(group: GroupBy) -> UsageKey {
    match group {
        GroupBy::Course => UsageKey::Course,
        GroupBy::User => UsageKey::User,
        GroupBy::Profile => UsageKey::Profile,
        GroupBy::Gpu => UsageKey::Gpu,
        GroupBy::Image => UsageKey::Image,
    }
}

/// Where a report's numbers come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReportSource {
    /// Every interval, from the ledger.
    Ledger,
    /// Closed intervals from the per-day totals, open ones from the ledger.
    DayTotals,
}

/// The report of `query` at `now_ms`, limited to `courses` when given: a few grouped
/// queries, whatever the number of ledger rows, over the per-day totals when the period
/// is drawn in days or weeks and the totals are built.
pub async fn usage_report(
    store: &Store,
    query: &ReportQuery,
    courses: Option<&[CourseId]>,
    now_ms: i64,
) -> Result<UsageReport, CoreError> {
    let whole_days = query.from_ms % DAY_MS == 0 && query.to_ms % DAY_MS == 0 && bucket_ms(query) >= DAY_MS;
    let source = match whole_days && store.usage_rollups_ready().await? {
        true => ReportSource::DayTotals,
        false => ReportSource::Ledger,
    };
    usage_report_from(store, query, courses, now_ms, source).await
}

/// [`usage_report`] from the source given (the per-day totals only for whole days).
pub async fn usage_report_from(
    store: &Store,
    query: &ReportQuery,
    courses: Option<&[CourseId]>,
    now_ms: i64,
    source: ReportSource,
) -> Result<UsageReport, CoreError> {
    let step = bucket_ms(query);
    let buckets: Vec<i64> = (query.from_ms..query.to_ms).step_by(step as usize).collect();
    let open_only = source == ReportSource::DayTotals;
    let window = UsageWindow { from_ms: query.from_ms, to_ms: query.to_ms, until_ms: query.to_ms.min(now_ms), courses, open_only };
    let key = usage_key(query.group);

    let mut reads = store.report_snapshot().await?;
    let mut totals = reads.usage_totals(&window, key).await?;
    let mut waits = reads.wait_counts(&window, key).await?;
    let mut course_sums = reads.usage_buckets(&window, UsageKey::Course, step).await?;
    let mut gpu_sums = reads.usage_buckets(&window, UsageKey::Gpu, step).await?;
    if open_only {
        totals.extend(reads.rollup_totals(&window, key).await?);
        waits.extend(reads.rollup_wait_counts(&window, key).await?);
        course_sums.extend(reads.rollup_buckets(&window, UsageKey::Course, step).await?);
        gpu_sums.extend(reads.rollup_buckets(&window, UsageKey::Gpu, step).await?);
    }
    reads.finish().await?;

    let mut groups: HashMap<String, ReportRow> = HashMap::new();
    let mut total = ReportRow { key: "total".into(), ..ReportRow::default() };
    for t in totals {
        for row in [groups.entry(t.key.clone()).or_insert_with(|| ReportRow { key: t.key.clone(), ..ReportRow::default() }), &mut total] {
            row.slice_ms += slice_ms(&t.profile, t.held_ms);
            row.memory_gb_s += memory_gb_s(&t.profile, t.held_ms);
            row.sessions += t.sessions;
            row.ended_time_limit += t.ended_time_limit;
            row.ended_quota += t.ended_quota;
            row.ended_idle += t.ended_idle;
        }
    }
    let (by_group, all) = wait_histograms(waits);
    for (key, histogram) in &by_group {
        if let Some(row) = groups.get_mut(key) {
            set_waits(row, histogram);
        }
    }
    set_waits(&mut total, &all);
    let mut rows: Vec<ReportRow> = groups.into_values().collect();
    rows.sort_by(|a, b| b.slice_ms.cmp(&a.slice_ms).then_with(|| a.key.cmp(&b.key)));

    let spread = |sums: Vec<BucketSums>| {
        let mut out: HashMap<String, Vec<i64>> = HashMap::new();
        for b in sums {
            let values = out.entry(b.key.clone()).or_insert_with(|| vec![0; buckets.len()]);
            spread_over(values, &b, query.from_ms, step, milli_slices(&b.profile));
        }
        series(out)
    };
    Ok(UsageReport {
        query: *query,
        rows,
        total,
        by_course: spread(course_sums),
        by_gpu: spread(gpu_sums),
        buckets,
        bucket_ms: step,
    })
}

/// Intervals per whole second of wait.
type Histogram = BTreeMap<i64, i64>;

/// The waits of each group, and of all groups together.
fn wait_histograms(counts: Vec<WaitCount>) -> (HashMap<String, Histogram>, Histogram) {
    let mut by_group: HashMap<String, Histogram> = HashMap::new();
    let mut all = Histogram::new();
    for c in counts {
        *by_group.entry(c.key).or_default().entry(c.wait_s).or_default() += c.intervals;
        *all.entry(c.wait_s).or_default() += c.intervals;
    }
    (by_group, all)
}

fn set_waits(row: &mut ReportRow, histogram: &Histogram) {
    row.wait_p50_ms = nearest_rank(histogram, 50);
    row.wait_p95_ms = nearest_rank(histogram, 95);
}

/// The wait at the nearest rank of `percent`, in milliseconds (whole seconds of them).
fn nearest_rank(histogram: &Histogram, percent: i64) -> Option<i64> {
    let n: i64 = histogram.values().sum();
    let rank = ((n * percent + 99) / 100).max(1);
    let mut seen = 0;
    for (wait_s, intervals) in histogram {
        seen += intervals;
        if seen >= rank {
            return Some(wait_s * 1000);
        }
    }
    None
}

/// Shares the time of intervals that begin in bucket `first` and end in bucket `last`
/// out among the buckets, exactly: the first gets each interval's part up to its end, the
/// last each part from its start, and every bucket between them is held throughout.
fn spread_over(values: &mut [i64], b: &BucketSums, from_ms: i64, step: i64, milli: i64) {
    let slices = |ms: i64| charge(ms, milli);
    let bucket_start = |k: i64| from_ms + k * step;
    let (first, last) = (b.first as usize, b.last as usize);
    if first >= values.len() || last >= values.len() {
        return;
    }
    if first == last {
        values[first] += slices(b.end_sum - b.start_sum);
        return;
    }
    values[first] += slices(b.intervals * bucket_start(b.first + 1) - b.start_sum);
    values[last] += slices(b.end_sum - b.intervals * bucket_start(b.last));
    for value in &mut values[first + 1..last] {
        *value += slices(b.intervals * step);
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shares_memory_is_its_part_of_the_gpus_unrounded() {
        assert_eq!(memory_gb_s("3g.40gb", 2_000), 80);
        assert_eq!(memory_gb_s("l4.24gb.1of4", 1_000), 6);
        assert_eq!(memory_gb_s("l4.24gb.1of7", 7_000), 24, "24 GB for a seventh of 7 s, not 3 GB x 7 s");
        assert_eq!(memory_gb("l4.24gb.1of7"), 3);
    }
}
