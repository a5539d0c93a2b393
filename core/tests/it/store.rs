
use crate::common;

use slicehub_core::reports::{usage_report, ReportQuery};
use slicehub_core::store::{DbKind, Store};
use slicehub_core::CoreError;

on_both_databases!(
    a_damaged_session_row_reads_as_an_error_naming_the_column,
    migrations_are_idempotent_and_versioned,
    settings_round_trip_and_overwrite,
    first_setting_wins_under_concurrency,
    audit_log_lists_newest_first_and_filters,
    the_sessions_search_lists_live_first_then_recent_ones,
);

/// A plain account named `name`.
async fn account(store: &Store, name: &str) -> slicehub_core::store::User {
    let new = slicehub_core::store::NewUserRow {
        username: name,
        display_name: name,
        email: None,
        password_hash: "not-a-real-hash",
        is_admin: false,
        must_change_password: false,
    };
    store.insert_user(&new).await.unwrap()
}

/// The operations page's search: live sessions first, then those over that were asked for
/// in the window, each part newest first; older ones, other states and other courses
/// never; the limit counts both parts.
async fn the_sessions_search_lists_live_first_then_recent_ones(store: Store) {
    use slicehub_core::sessions::SessionState::{self, *};
    use slicehub_core::store::SessionSearch;
    let course = store.insert_course("CS-101", "Deep Learning").await.unwrap();
    let other = store.insert_course("MA-201", "Maths").await.unwrap();
    let user = account(&store, "sam").await;
    let day = 86_400_000;
    let now = 400 * day;
    // (id, course, state, asked for at)
    let rows = [
        ("live-old", course.id, Ready, now - 30 * day),
        ("live-new", course.id, Queued, now - 60_000),
        ("ended-recent", course.id, Ended, now - day),
        ("failed-recent", course.id, Failed, now - 2 * day),
        ("ended-long-ago", course.id, Ended, now - 20 * day),
        ("other-course", other.id, Ready, now - 60_000),
    ];
    for (id, course_id, state, asked) in rows {
        store
            .execute_admin(&format!(
                "INSERT INTO gpu_sessions (id, user_id, course_id, kind, profile, image, argv, state, live, token,
                                           requested_at, updated_at, deadline_at)
                 VALUES ('{id}', {}, {}, 'job', '1g.10gb', 'img', '[]', '{}', {}, 't-{id}', {asked}, {asked}, {})",
                user.id.0,
                course_id.0,
                state.as_str(),
                i64::from(!state.is_final()),
                asked + day
            ))
            .await
            .unwrap();
    }
    let search = |states: &[SessionState], limit: i64| SessionSearch {
        course_id: Some(course.id),
        username: String::new(),
        gpu_uuid: String::new(),
        states: states.to_vec(),
        since_ms: now - 7 * day,
        limit,
    };
    let ids = |found: Vec<slicehub_core::sessions::GpuSession>| found.into_iter().map(|s| s.id).collect::<Vec<_>>();
    let every = [Requested, Queued, Allocating, Creating, Starting, Ready, Stopping, Ended, Failed];
    assert_eq!(
        ids(store.search_sessions(&search(&every, 50)).await.unwrap()),
        ["live-new", "live-old", "ended-recent", "failed-recent"]
    );
    assert_eq!(ids(store.search_sessions(&search(&every, 3)).await.unwrap()), ["live-new", "live-old", "ended-recent"]);
    assert_eq!(ids(store.search_sessions(&search(&[Ended], 50)).await.unwrap()), ["ended-recent"]);
    assert_eq!(ids(store.search_sessions(&search(&[Ready, Failed], 50)).await.unwrap()), ["live-old", "failed-recent"]);
    let mut anywhere = search(&every, 50);
    anywhere.course_id = None;
    anywhere.username = "SAM".into();
    assert_eq!(
        ids(store.search_sessions(&anywhere).await.unwrap()),
        ["live-new", "other-course", "live-old", "ended-recent", "failed-recent"]
    );
}

/// A row edited by hand (or by a newer release) with a value this build does not know is
/// an error naming the column, never a panic, and the other rows still read.
async fn a_damaged_session_row_reads_as_an_error_naming_the_column(store: Store) {
    let course = store.insert_course("CS-101", "Deep Learning").await.unwrap();
    let user = account(&store, "rowena").await;
    let damage = [
        ("state", "'exploded'"),
        ("kind", "'gpu'"),
        ("pool", "'kubernetes'"),
        ("created_instance", "7"),
        ("argv", "'rm -rf'"),
    ];
    let mut read_damaged = Vec::new();
    for (i, (column, value)) in damage.iter().enumerate() {
        let id = format!("damaged-{i}");
        let new = slicehub_core::store::NewGpuSession {
            id: &id,
            user_id: user.id,
            course_id: course.id,
            kind: slicehub_core::sessions::SessionKind::Job,
            pool: slicehub_core::sessions::SessionPool::Local,
            profile: "1g.10gb",
            image: "busybox",
            argv: &["true".to_string()],
            token: "t",
            deadline_at_ms: 1,
        };
        store.insert_gpu_session(&new, 100).await.unwrap();
        // Some columns are guarded by a CHECK as well: the database refuses the damage.
        if store.execute_admin(&format!("UPDATE gpu_sessions SET {column} = {value} WHERE id = '{id}'")).await.is_err() {
            continue;
        }
        match store.gpu_session(&id).await {
            Err(CoreError::Database(words)) => assert!(words.contains(column), "{column}: {words}"),
            other => panic!("{column} = {value} read as {other:?}"),
        }
        read_damaged.push(*column);
    }
    for column in ["state", "argv"] {
        assert!(read_damaged.contains(&column), "{column} damage was refused, not read: {read_damaged:?}");
    }
    let intact = slicehub_core::store::NewGpuSession {
        id: "intact",
        user_id: user.id,
        course_id: course.id,
        kind: slicehub_core::sessions::SessionKind::Notebook,
        pool: slicehub_core::sessions::SessionPool::Local,
        profile: "1g.10gb",
        image: "busybox",
        argv: &[],
        token: "t",
        deadline_at_ms: 1,
    };
    store.insert_gpu_session(&intact, 100).await.unwrap();
    let read = store.gpu_session("intact").await.unwrap().unwrap();
    assert_eq!((read.kind, read.argv.len(), read.created_instance), (slicehub_core::sessions::SessionKind::Notebook, 0, false));
}

async fn migrations_are_idempotent_and_versioned(store: Store) {
    store
        .migrate()
        .await
        .expect("second run changes nothing and succeeds");
    let version = store
        .schema_version()
        .await
        .unwrap()
        .expect("a migration is recorded");
    assert!(version.starts_with("19 "), "{version}");
    store.ping().await.unwrap();
}

async fn settings_round_trip_and_overwrite(store: Store) {
    assert_eq!(store.setting("instance.name").await.unwrap(), None);
    store
        .set_setting("instance.name", "Physics lab")
        .await
        .unwrap();
    assert_eq!(
        store.setting("instance.name").await.unwrap().as_deref(),
        Some("Physics lab")
    );
    store
        .set_setting("instance.name", "Physics lab — Ünïcode")
        .await
        .unwrap();
    assert_eq!(
        store.setting("instance.name").await.unwrap().as_deref(),
        Some("Physics lab — Ünïcode")
    );
}

async fn first_setting_wins_under_concurrency(store: Store) {
    let tasks: Vec<_> = (0..20)
        .map(|i| {
            let store = store.clone();
            tokio::spawn(async move {
                store
                    .setting_or_insert("instance.id", &format!("candidate-{i}"))
                    .await
                    .unwrap()
            })
        })
        .collect();
    let mut seen = Vec::new();
    for task in tasks {
        seen.push(task.await.unwrap());
    }
    seen.dedup();
    assert_eq!(
        seen.len(),
        1,
        "every caller sees the one stored value: {seen:?}"
    );
    assert_eq!(
        store.setting("instance.id").await.unwrap(),
        Some(seen[0].clone())
    );
}

async fn audit_log_lists_newest_first_and_filters(store: Store) {
    let a = store
        .audit("system", "portal.start", "instance", "v0.1")
        .await
        .unwrap();
    let b = store.audit("alice", "login", "alice", "").await.unwrap();
    let c = store
        .audit("system", "portal.start", "instance", "v0.2")
        .await
        .unwrap();
    assert!(a < b && b < c);

    let all = store.recent_audit(None, 10).await.unwrap();
    assert_eq!(all.iter().map(|e| e.id).collect::<Vec<_>>(), vec![c, b, a]);
    assert!(
        all[0].at_ms > 1_600_000_000_000,
        "timestamps are epoch milliseconds"
    );

    let starts = store.recent_audit(Some("portal.start"), 10).await.unwrap();
    assert_eq!(
        starts.iter().map(|e| e.detail.as_str()).collect::<Vec<_>>(),
        ["v0.2", "v0.1"]
    );
    assert_eq!(store.recent_audit(None, 1).await.unwrap().len(), 1);
}

#[tokio::test]
async fn the_kind_follows_the_url() {
    let fresh = common::sqlite().await;
    assert_eq!(fresh.store.kind(), DbKind::Sqlite);
    if let Some(fresh) = common::postgres().await {
        assert_eq!(fresh.store.kind(), DbKind::Postgres);
    }
}

#[tokio::test]
async fn an_unreachable_postgres_is_a_clear_error_without_the_password() {
    // Port 1 on loopback: nothing listens there.
    let err = match Store::connect("postgres://slicehub:hunter2@127.0.0.1:1/slicehub", 1).await {
        Err(e) => e,
        Ok(_) => panic!("connected to nothing"),
    };
    assert!(
        matches!(err, CoreError::DatabaseUnreachable { .. }),
        "{err}"
    );
    let msg = err.to_string();
    assert!(
        msg.contains("cannot reach the database at postgres://slicehub:***@127.0.0.1:1"),
        "{msg}"
    );
    assert!(!msg.contains("hunter2"), "{msg}");
}

#[tokio::test]
async fn a_sqlite_file_that_cannot_be_created_is_a_clear_error() {
    let err = match Store::connect("sqlite:///proc/no-such-dir/x.db?mode=rwc", 1).await {
        Err(e) => e,
        Ok(_) => panic!("created a database under /proc"),
    };
    assert!(err.to_string().contains("/proc/no-such-dir"), "{err}");
}

/// A database that already has a conflicting `settings` table: the first migration must
/// fail as a whole, leaving no table of it behind.
async fn failed_migration_leaves_nothing_half_applied(store: Store) {
    store
        .execute_admin("CREATE TABLE settings (unrelated TEXT)")
        .await
        .unwrap();
    let err = store
        .migrate()
        .await
        .expect_err("the conflicting table stops the migration");
    assert!(matches!(err, CoreError::Migration(_)), "{err}");
    assert!(
        err.to_string()
            .contains("nothing from the failed migration was kept"),
        "{err}"
    );
    assert!(
        store
            .execute_admin("SELECT id FROM audit_log")
            .await
            .is_err(),
        "audit_log from the failed migration must not exist"
    );
    assert_eq!(store.schema_version().await.ok().flatten(), None);
}

#[tokio::test]
async fn failed_migration_leaves_nothing_half_applied_sqlite() {
    let fresh = common::sqlite_unmigrated().await;
    failed_migration_leaves_nothing_half_applied(fresh.store.clone()).await;
}

#[tokio::test]
async fn failed_migration_leaves_nothing_half_applied_postgres() {
    if let Some(fresh) = common::postgres_unmigrated().await {
        failed_migration_leaves_nothing_half_applied(fresh.store.clone()).await;
    }
}

/// Migration 0003 or 0012 as first committed: today's text with the later edits undone (a
/// comment reworded in each, and 0012's last statement added).
fn as_first_committed(today: &str) -> String {
    let earlier = today
        .replace(
            "-- 1 while nothing is held: before a slice is placed, and once it is given back.",
            "-- 1 once the slice is given back (holds deleted, a created instance destroyed).",
        )
        .replace(
            "-- cluster; that job's id once Slurm accepted it, and the node it started on.",
            "-- cluster; and that job's id once Slurm accepted it.",
        )
        .replace("ALTER TABLE gpu_sessions ADD COLUMN slurm_node TEXT;\n", "");
    assert_ne!(earlier, today, "the edits to undo are in the file");
    earlier
}

/// A database migrated by an earlier main, whose migration files were edited afterwards
/// (0003 before 6b2db11, 0012 before 537e267), with data in it: today's binary upgrades it,
/// keeps the data, and reads sessions (with the column the edit added).
async fn a_database_of_an_earlier_main_upgrades(fresh: common::Fresh, kind: &str, upto: i64, edited: &str, by_hand: bool) {
    let dir = tempfile::tempdir().unwrap();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    for entry in std::fs::read_dir(root.join("migrations").join(kind)).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        let version: i64 = name[..4].parse().unwrap();
        if version < upto {
            std::fs::copy(&path, dir.path().join(&name)).unwrap();
        }
    }
    let today = std::fs::read_to_string(root.join("migrations").join(kind).join(edited)).unwrap();
    std::fs::write(dir.path().join(edited), as_first_committed(&today)).unwrap();
    sqlx::any::install_default_drivers();
    let pool = sqlx::AnyPool::connect(&fresh.url).await.unwrap();
    sqlx::migrate::Migrator::new(dir.path()).await.unwrap().run(&pool).await.expect("the earlier migrations apply");
    for statement in [
        "INSERT INTO users (username, display_name, password_hash, created_at, updated_at) VALUES ('old-ann', 'Ann', 'x', 1, 1)",
        "INSERT INTO courses (code, title, created_at) VALUES ('OLD-1', 'Old course', 1)",
        "INSERT INTO gpu_sessions (id, user_id, course_id, kind, profile, image, argv, state, live, released, token, requested_at, updated_at, ended_at, deadline_at) \
         VALUES ('s-old', 1, 1, 'job', '1g.10gb', 'busybox', '[\"true\"]', 'ended', 0, 1, 't', 1, 2, 2, 3)",
    ] {
        sqlx::query(statement).execute(&pool).await.unwrap();
    }
    if upto > 3 {
        // A closed hour of use from before the per-day totals existed (migration 0017).
        let hour = |h: u32| chrono::NaiveDate::from_ymd_opt(2026, 11, 3).unwrap().and_hms_opt(h, 0, 0).unwrap().and_utc().timestamp_millis();
        sqlx::query(&format!(
            "INSERT INTO usage_ledger (session_id, user_id, course_id, gpu_uuid, profile, placement, image, kind, started_at, ended_at, end_reason) \
             VALUES ('s-old', 1, 1, 'GPU-old', '1g.10gb', 'x', 'busybox', 'job', {}, {}, 'stopped by its owner')",
            hour(10),
            hour(11)
        ))
        .execute(&pool)
        .await
        .unwrap();
    }
    if by_hand {
        // An operator who followed the error message and added the column himself.
        sqlx::query("ALTER TABLE gpu_sessions ADD COLUMN slurm_node TEXT").execute(&pool).await.unwrap();
    }
    pool.close().await;

    fresh.store.migrate().await.expect("today's binary upgrades the earlier database");
    fresh.store.migrate().await.expect("and again, changing nothing");
    assert!(fresh.store.schema_version().await.unwrap().unwrap().starts_with("19 "));
    let old = fresh.store.gpu_session("s-old").await.unwrap().expect("the earlier session is kept");
    assert_eq!(old.profile, "1g.10gb");
    assert!(fresh.store.user_by_username("old-ann").await.unwrap().is_some());
    // The earlier ledger is in the per-day totals the reports read.
    assert!(fresh.store.usage_rollups_ready().await.unwrap());
    let week = ReportQuery::parse("custom", "2026-11-02", "2026-11-08", "course", 0).unwrap();
    let report = usage_report(&fresh.store, &week, None, week.to_ms).await.unwrap();
    let expected = if upto > 3 { (1, 3_600_000) } else { (0, 0) };
    assert_eq!((report.total.sessions, report.total.slice_ms), expected, "{report:?}");
}

#[tokio::test]
async fn a_database_of_an_earlier_main_upgrades_sqlite() {
    a_database_of_an_earlier_main_upgrades(common::sqlite_unmigrated().await, "sqlite", 12, "0012_slurm_pool.sql", false).await;
    a_database_of_an_earlier_main_upgrades(common::sqlite_unmigrated().await, "sqlite", 12, "0012_slurm_pool.sql", true).await;
    a_database_of_an_earlier_main_upgrades(common::sqlite_unmigrated().await, "sqlite", 3, "0003_gpu_sessions.sql", false).await;
}

#[tokio::test]
async fn a_database_of_an_earlier_main_upgrades_postgres() {
    for (upto, edited, by_hand) in [(12, "0012_slurm_pool.sql", false), (12, "0012_slurm_pool.sql", true), (3, "0003_gpu_sessions.sql", false)] {
        if let Some(fresh) = common::postgres_unmigrated().await {
            a_database_of_an_earlier_main_upgrades(fresh, "postgres", upto, edited, by_hand).await;
        }
    }
}

/// Migrations on main are never edited (a database migrated by the old text would refuse to
/// start): each one's SHA-256 is pinned in `migrations/released.sha256`, and a new one needs
/// its line there.
#[test]
fn released_migrations_are_never_edited() {
    use sha2::{Digest, Sha256};
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../migrations");
    let pinned = std::fs::read_to_string(root.join("released.sha256")).expect("migrations/released.sha256");
    let pinned: std::collections::HashMap<&str, &str> = pinned
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .filter_map(|l| l.split_once("  ").map(|(sum, path)| (path.trim(), sum.trim())))
        .collect();
    let mut problems: Vec<String> = pinned
        .keys()
        .filter(|name| !root.join(name).is_file())
        .map(|name| format!("{name} is pinned but gone: a released migration is never removed or renamed"))
        .collect();
    for kind in ["sqlite", "postgres"] {
        for entry in std::fs::read_dir(root.join(kind)).unwrap() {
            let path = entry.unwrap().path();
            let name = format!("{kind}/{}", path.file_name().unwrap().to_string_lossy());
            let sum = hex::encode(Sha256::digest(std::fs::read(&path).unwrap()));
            match pinned.get(name.as_str()) {
                Some(p) if *p == sum => {}
                Some(_) => problems.push(format!("{name} was edited: add a new migration instead")),
                None => problems.push(format!("{name} has no line in migrations/released.sha256 (sha256sum {name})")),
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

