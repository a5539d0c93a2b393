//! A report as CSV: one line a group and a last line for all of them, the numbers the
//! report page shows.

use super::usage::{ReportRow, UsageReport};
use crate::clock::iso_utc;
use crate::quotas::hours;

pub const CSV_COLUMNS: [&str; 12] = [
    "period_start_utc",
    "period_end_utc",
    "group_by",
    "key",
    "compute_slice_hours",
    "gpu_memory_gb_hours",
    "sessions",
    "queue_wait_median_s",
    "queue_wait_p95_s",
    "ended_time_limit",
    "ended_quota",
    "ended_idle",
];

pub fn report_csv(report: &UsageReport) -> String {
    // Writing to memory cannot fail; a record the writer refused would only be missing.
    let mut out = csv::Writer::from_writer(Vec::new());
    let _ = out.write_record(CSV_COLUMNS);
    let (start, end) = (iso_utc(report.query.from_ms), iso_utc(report.query.to_ms));
    let group = report.query.group.as_str();
    for (group, row) in report.rows.iter().map(|r| (group, r)).chain([("total", &report.total)]) {
        let _ = out.write_record(record(&start, &end, group, row));
    }
    out.into_inner()
        .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
        .unwrap_or_default()
}

fn record(start: &str, end: &str, group: &str, row: &ReportRow) -> [String; 12] {
    let seconds = |ms: Option<i64>| ms.map(|ms| (ms / 1000).to_string()).unwrap_or_default();
    [
        start.to_string(),
        end.to_string(),
        group.to_string(),
        row.key.clone(),
        hours(row.slice_ms),
        memory_hours(row.memory_gb_s),
        row.sessions.to_string(),
        seconds(row.wait_p50_ms),
        seconds(row.wait_p95_ms),
        row.ended_time_limit.to_string(),
        row.ended_quota.to_string(),
        row.ended_idle.to_string(),
    ]
}

/// GB-seconds as GB-hours, written like slice-hours: "120", "7.5".
pub fn memory_hours(gb_s: i64) -> String {
    hours(gb_s.saturating_mul(1000))
}
