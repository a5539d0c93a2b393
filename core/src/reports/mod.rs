//! Usage reports for admins (every course) and instructors (their courses): slice-hours,
//! GPU-memory-hours, sessions, queue waits and end causes for a period, grouped as asked,
//! with charts and a CSV of the same numbers.

mod chart;
mod csv_export;
mod query;
mod scope;
mod usage;

pub use chart::{gpu_strips_svg, stacked_use_svg, Chart, PALETTE};
pub use csv_export::{memory_hours, report_csv, CSV_COLUMNS};
pub use query::{GroupBy, ReportPeriod, ReportQuery, MAX_DAYS, TERM_DAYS};
pub use scope::{report_for, report_scope, ReportForm};
pub use usage::{memory_gb, usage_report, usage_report_from, ReportRow, ReportSource, Series, UsageReport};
