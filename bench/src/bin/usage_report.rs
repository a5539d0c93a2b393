//! Usage reports over a large ledger, on SQLite and (with SLICEHUB_TEST_DATABASE_URL)
//! PostgreSQL: ROWS sessions (default 1,000,000) spread over the last 16 weeks, written
//! straight into the database and rolled up into per-day totals, then each report timed 7
//! times (median, p95 = the slowest of 7 here, max) as the portal makes it (from the
//! per-day totals) and, as the control, from every ledger row, with its CSV and the
//! process's peak memory. The two must be equal.
//!
//!     usage-report [ROWS]

use std::time::Instant;

use slicehub_bench::history::{fill, History, Scratch};
use slicehub_bench::process::rss_kib;
use slicehub_core::reports::{report_csv, usage_report, usage_report_from, ReportQuery, ReportSource, UsageReport};
use slicehub_core::store::Store;

const RUNS: usize = 7;

fn now_ms() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64
}

/// Runs `report` RUNS times: the times in milliseconds, sorted, and the last report.
async fn time<F, Fut>(report: F) -> (Vec<f64>, UsageReport)
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = Result<UsageReport, slicehub_core::CoreError>>,
{
    let mut times = Vec::new();
    let mut last = None;
    for _ in 0..RUNS {
        let t = Instant::now();
        last = Some(report().await.unwrap());
        times.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    times.sort_by(|a, b| a.partial_cmp(b).unwrap());
    (times, last.unwrap())
}

async fn measure(name: &str, store: &Store, rows: i64) {
    let now = now_ms();
    let history = History { students: 200, courses: 10, gpus: 8, sessions: rows, days: 112 };
    let filled = fill(store, &history, now).await;
    println!(
        "{name}: {rows} sessions and ledger rows written in {:.1} s, rolled up into per-day totals in {:.1} s",
        filled.written.as_secs_f64(),
        filled.rolled_up.as_secs_f64()
    );
    for (period, group) in [("week", "course"), ("term", "course"), ("term", "user"), ("term", "gpu"), ("term", "profile")] {
        let query = ReportQuery::parse(period, "", "", group, now).unwrap();
        let control = time(|| usage_report_from(store, &query, None, now, ReportSource::Ledger)).await;
        println!(
            "{name} {period:>4} by {group:<7} from the ledger (control): median {:.0} ms, p95 {:.0} ms",
            control.0[RUNS / 2],
            control.0[RUNS * 95 / 100]
        );
        let (_, peak_before) = rss_kib(std::process::id());
        let mut times = Vec::new();
        let mut csv_times = Vec::new();
        let mut shown = (0, 0, 0);
        for _ in 0..RUNS {
            let t = Instant::now();
            let report = usage_report(store, &query, None, now).await.unwrap();
            times.push(t.elapsed().as_secs_f64() * 1000.0);
            let t = Instant::now();
            let csv = report_csv(&report);
            csv_times.push(t.elapsed().as_secs_f64() * 1000.0);
            shown = (report.total.sessions, report.rows.len(), csv.len());
        }
        let (_, peak_after) = rss_kib(std::process::id());
        times.sort_by(|a, b| a.partial_cmp(b).unwrap());
        csv_times.sort_by(|a, b| a.partial_cmp(b).unwrap());
        println!(
            "{name} {period:>4} by {group:<7} from the per-day totals: {} sessions in the period, {} rows; report median {:.0} ms, p95 {:.0} ms, max {:.0} ms; CSV {} bytes in {:.2} ms; peak RSS {} -> {} MiB",
            shown.0,
            shown.1,
            times[RUNS / 2],
            times[RUNS * 95 / 100],
            times[RUNS - 1],
            shown.2,
            csv_times[RUNS / 2],
            peak_before / 1024,
            peak_after / 1024
        );
        let portal = usage_report(store, &query, None, now).await.unwrap();
        assert_eq!(portal, control.1, "the per-day totals give the ledger's report");
    }
}

#[tokio::main]
async fn main() {
    let rows: i64 = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(1_000_000);
    let dir = tempfile::tempdir().unwrap();
    let scratch = Scratch::sqlite(dir.path(), "bench").await;
    measure("SQLite", &scratch.store, rows).await;
    scratch.drop_database().await;

    let Ok(server) = std::env::var("SLICEHUB_TEST_DATABASE_URL") else {
        println!("PostgreSQL: skipped (SLICEHUB_TEST_DATABASE_URL is not set)");
        return;
    };
    let scratch = Scratch::postgres(&server, "report").await;
    measure("PostgreSQL", &scratch.store, rows).await;
    scratch.drop_database().await;
}
