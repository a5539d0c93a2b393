//! Usage reports over a large ledger, on SQLite and (with SLICEHUB_TEST_DATABASE_URL)
//! PostgreSQL: ROWS sessions (default 1,000,000) spread over the last 16 weeks, written
//! straight into the database, then each report timed 7 times (median, p95 = the slowest
//! of 7 here, max), with its CSV and the process's peak memory.
//!
//!     usage-report [ROWS]

use std::time::{Duration, Instant};

use slicehub_bench::process::rss_kib;
use slicehub_core::reports::{report_csv, usage_report, ReportQuery};
use slicehub_core::store::Store;

const DAY_MS: i64 = 86_400_000;
const RUNS: usize = 7;

fn now_ms() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64
}

/// 200 students in 10 courses, then ROWS ended sessions and their ledger rows, generated
/// inside the database (one statement each) so the set-up takes seconds, not hours.
async fn fill(store: &Store, rows: i64, now: i64) -> Duration {
    let started = Instant::now();
    let gen = |n: i64| format!("WITH RECURSIVE n(i) AS (SELECT CAST(0 AS BIGINT) UNION ALL SELECT i + 1 FROM n WHERE i < {})", n - 1);
    store
        .execute_admin(&format!(
            "{} INSERT INTO users (username, display_name, password_hash, is_admin, must_change_password, disabled, created_at, updated_at)
             SELECT 'student' || i, 'Student ' || i, 'x', 0, 0, 0, {now}, {now} FROM n",
            gen(200)
        ))
        .await
        .expect("users");
    store
        .execute_admin(&format!(
            "{} INSERT INTO courses (code, title, created_at) SELECT 'C-' || i, 'Course ' || i, {now} FROM n",
            gen(10)
        ))
        .await
        .expect("courses");
    let first = now - 112 * DAY_MS;
    let step = 112 * DAY_MS / rows;
    let profile = "CASE i % 4 WHEN 0 THEN '1g.10gb' WHEN 1 THEN '2g.20gb' WHEN 2 THEN '3g.40gb' ELSE '7g.80gb' END";
    store
        .execute_admin(&format!(
            "{} INSERT INTO gpu_sessions (id, user_id, course_id, kind, profile, image, argv, state, live, token,
                                       requested_at, updated_at, deadline_at)
             SELECT 'b' || i, 1 + i % 200, 1 + i % 10, 'job', {profile}, 'img' || (i % 3), '[]', 'ended', 0, 't' || i,
                    {first} + i * {step} - (i % 37) * 1000, {first} + i * {step}, {first} + i * {step} + 3600000 FROM n",
            gen(rows)
        ))
        .await
        .expect("sessions");
    store
        .execute_admin(&format!(
            "{} INSERT INTO usage_ledger (session_id, user_id, course_id, gpu_uuid, profile, placement, image, kind,
                                       started_at, ended_at, end_reason)
             SELECT 'b' || i, 1 + i % 200, 1 + i % 10, 'GPU-' || (i % 8), {profile}, 'x', 'img' || (i % 3), 'job',
                    {first} + i * {step}, {first} + i * {step} + (1 + i % 120) * 60000,
                    CASE i % 5 WHEN 0 THEN 'stopped at the course''s time limit (60 min)' WHEN 1 THEN 'quota used up' ELSE 'stopped by its owner' END
             FROM n",
            gen(rows)
        ))
        .await
        .expect("ledger");
    started.elapsed()
}

async fn measure(name: &str, store: &Store, rows: i64) {
    let now = now_ms();
    let took = fill(store, rows, now).await;
    println!("{name}: {rows} sessions and ledger rows written in {:.1} s", took.as_secs_f64());
    for (period, group) in [("week", "course"), ("term", "course"), ("term", "user"), ("term", "gpu")] {
        let query = ReportQuery::parse(period, "", "", group, now).unwrap();
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
            "{name} {period:>4} by {group:<6}: {} sessions in the period, {} rows; report median {:.0} ms, p95 {:.0} ms, max {:.0} ms; CSV {} bytes in {:.2} ms; peak RSS {} -> {} MiB",
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
    }
}

#[tokio::main]
async fn main() {
    let rows: i64 = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(1_000_000);
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}?mode=rwc", dir.path().join("bench.db").display());
    let store = Store::connect(&url, 2).await.unwrap();
    store.migrate().await.unwrap();
    measure("SQLite", &store, rows).await;
    store.close().await;

    let Ok(server) = std::env::var("SLICEHUB_TEST_DATABASE_URL") else {
        println!("PostgreSQL: skipped (SLICEHUB_TEST_DATABASE_URL is not set)");
        return;
    };
    let admin = Store::connect(&server, 1).await.unwrap();
    let name = format!("slicehub_bench_{}", std::process::id());
    admin.execute_admin(&format!("CREATE DATABASE {name}")).await.unwrap();
    let (base, _) = server.rsplit_once('/').unwrap();
    let store = Store::connect(&format!("{base}/{name}"), 2).await.unwrap();
    store.migrate().await.unwrap();
    measure("PostgreSQL", &store, rows).await;
    store.close().await;
    admin.execute_admin(&format!("DROP DATABASE {name} WITH (FORCE)")).await.unwrap();
    admin.close().await;
}
