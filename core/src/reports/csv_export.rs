//! A report as CSV: one line a group and a last line for all of them, the numbers the
//! report page shows.

use super::usage::{ReportRow, UsageReport};
use crate::clock::iso_utc;
use crate::csv_export::{Cell, CsvWriter};
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

/// The report through the portal's one CSV writer: the key (a username, a course code, a
/// profile, a GPU) is text, neutralised against formulas; the rest are numbers it wrote.
pub fn report_csv(report: &UsageReport) -> String {
    let mut out = CsvWriter::new();
    out.header(&CSV_COLUMNS);
    let (start, end) = (iso_utc(report.query.from_ms), iso_utc(report.query.to_ms));
    let group = report.query.group.as_str();
    for (group, row) in report.rows.iter().map(|r| (group, r)).chain([("total", &report.total)]) {
        let figures = numbers(row);
        let mut cells = vec![Cell::Text(&start), Cell::Text(&end), Cell::Text(group), Cell::Text(&row.key)];
        cells.extend(figures.iter().map(|n| Cell::Number(n)));
        out.row(&cells);
    }
    out.finish()
}

/// The row's numbers, in the order of the last eight columns.
fn numbers(row: &ReportRow) -> [String; 8] {
    let seconds = |ms: Option<i64>| ms.map(|ms| (ms / 1000).to_string()).unwrap_or_default();
    [
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
