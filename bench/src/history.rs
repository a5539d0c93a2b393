//! A database with history: ended sessions and their usage-ledger rows, generated inside
//! the database (one statement per table) so a million rows take seconds, not hours.

use std::time::{Duration, Instant};

use slicehub_core::store::{DbKind, Store};

pub const DAY_MS: i64 = 86_400_000;

/// What to write: `students` accounts (`student0`…), `courses` courses (`C-0`…), and
/// `sessions` ended sessions spread over the `days` before `now`, each with its ledger row,
/// on `gpus` GPUs.
pub struct History {
    pub students: i64,
    pub courses: i64,
    pub gpus: i64,
    pub sessions: i64,
    pub days: i64,
}

/// How long writing a history took: the rows, then the per-day totals made from them.
pub struct Filled {
    pub written: Duration,
    pub rolled_up: Duration,
}

/// Writes `history`, then builds the per-day usage totals from it as `slicehub usage
/// rebuild` does. Each session is over and has given its slice back (`released`), as
/// every ended session of a real portal has.
pub async fn fill(store: &Store, history: &History, now: i64) -> Filled {
    let written = write(store, history, now).await;
    let started = Instant::now();
    store.rebuild_usage_rollups().await.expect("per-day totals");
    let rolled_up = started.elapsed();
    // A real PostgreSQL has analyzed a year of rows long since (autovacuum); right after a
    // bulk load its planner would still think the tables empty.
    if store.kind() == DbKind::Postgres {
        store.execute_admin("ANALYZE").await.expect("analyze");
    }
    Filled { written, rolled_up }
}

async fn write(store: &Store, history: &History, now: i64) -> Duration {
    let started = Instant::now();
    let History { students, courses, gpus, sessions, days } = *history;
    let gen = |n: i64| format!("WITH RECURSIVE n(i) AS (SELECT CAST(0 AS BIGINT) UNION ALL SELECT i + 1 FROM n WHERE i < {})", n - 1);
    store
        .execute_admin(&format!(
            "{} INSERT INTO users (username, display_name, password_hash, is_admin, must_change_password, disabled, created_at, updated_at)
             SELECT 'student' || i, 'Student ' || i, 'x', 0, 0, 0, {now}, {now} FROM n",
            gen(students)
        ))
        .await
        .expect("users");
    store
        .execute_admin(&format!(
            "{} INSERT INTO courses (code, title, created_at) SELECT 'C-' || i, 'Course ' || i, {now} FROM n",
            gen(courses)
        ))
        .await
        .expect("courses");
    if sessions == 0 {
        return started.elapsed();
    }
    let first = now - days * DAY_MS;
    let step = (days * DAY_MS / sessions).max(1);
    let profile = "CASE i % 4 WHEN 0 THEN '1g.10gb' WHEN 1 THEN '2g.20gb' WHEN 2 THEN '3g.40gb' ELSE '7g.80gb' END";
    store
        .execute_admin(&format!(
            "{} INSERT INTO gpu_sessions (id, user_id, course_id, kind, profile, image, argv, state, live, released, token,
                                       requested_at, updated_at, deadline_at)
             SELECT 'b' || i, 1 + i % {students}, 1 + i % {courses}, 'job', {profile}, 'img' || (i % 3), '[]', 'ended', 0, 1, 't' || i,
                    {first} + i * {step} - (i % 37) * 1000, {first} + i * {step}, {first} + i * {step} + 3600000 FROM n",
            gen(sessions)
        ))
        .await
        .expect("sessions");
    store
        .execute_admin(&format!(
            "{} INSERT INTO usage_ledger (session_id, user_id, course_id, gpu_uuid, profile, placement, image, kind,
                                       started_at, ended_at, end_reason)
             SELECT 'b' || i, 1 + i % {students}, 1 + i % {courses}, 'GPU-' || (i % {gpus}), {profile}, 'x', 'img' || (i % 3), 'job',
                    {first} + i * {step}, {first} + i * {step} + (1 + i % 120) * 60000,
                    CASE i % 5 WHEN 0 THEN 'stopped at the course''s time limit (60 min)' WHEN 1 THEN 'quota used up' ELSE 'stopped by its owner' END
             FROM n",
            gen(sessions)
        ))
        .await
        .expect("ledger");
    started.elapsed()
}

/// A migrated database for one measurement: a SQLite file in `dir`, or a fresh database on
/// the PostgreSQL server at `server` (dropped by [`Scratch::drop_database`]).
pub struct Scratch {
    pub store: Store,
    dropper: Option<(Store, String)>,
}

impl Scratch {
    pub async fn sqlite(dir: &std::path::Path, name: &str) -> Scratch {
        let url = format!("sqlite://{}?mode=rwc", dir.join(format!("{name}.db")).display());
        let store = Store::connect(&url, 4).await.unwrap();
        store.migrate().await.unwrap();
        Scratch { store, dropper: None }
    }

    pub async fn postgres(server: &str, name: &str) -> Scratch {
        let admin = Store::connect(server, 1).await.unwrap();
        let name = format!("slicehub_bench_{name}_{}", std::process::id());
        admin.execute_admin(&format!("CREATE DATABASE {name}")).await.unwrap();
        let (base, _) = server.rsplit_once('/').unwrap();
        let store = Store::connect(&format!("{base}/{name}"), 4).await.unwrap();
        store.migrate().await.unwrap();
        Scratch { store, dropper: Some((admin, name)) }
    }

    pub async fn drop_database(self) {
        self.store.close().await;
        if let Some((admin, name)) = self.dropper {
            admin.execute_admin(&format!("DROP DATABASE {name} WITH (FORCE)")).await.unwrap();
            admin.close().await;
        }
    }
}
