//! Usage reports on SQLite and PostgreSQL against sums computed straight from the ledger
//! rows, minute by minute: every grouping, intervals cut at the period's edges, intervals
//! still open, queue waits, end causes, the charts' buckets and the CSV; instructors see
//! only their courses and GPUs without their UUIDs; bad fields get plain messages; the
//! class view charges each student what the ledger says.


use std::collections::HashMap;

use slicehub_core::auth::Caller;
use slicehub_core::config::Config;
use slicehub_core::courses::{class_view, set_policy, PolicyForm, PolicyFormRules};
use slicehub_core::quotas::budget_at;
use slicehub_core::config::ModelWeight;
use slicehub_core::quotas::{hours, milli_slices, slice_ms};
use slicehub_core::reports::{
    memory_gb, report_csv, report_for, usage_report, usage_report_from, GroupBy, ReportForm, ReportQuery, ReportSource, UsageReport,
};
use slicehub_core::store::{NewUserRow, Role, Store};
use slicehub_core::CoreError;
use slicehub_core::{CourseId, UserId};

const MINUTE: i64 = 60_000;

fn at(text: &str) -> i64 {
    chrono::DateTime::parse_from_rfc3339(text).unwrap().timestamp_millis()
}

/// One ledger row as the test wrote it.
#[derive(Debug, Clone)]
struct Span {
    user: &'static str,
    course: &'static str,
    gpu: &'static str,
    profile: &'static str,
    image: &'static str,
    requested: i64,
    started: i64,
    ended: Option<i64>,
    reason: &'static str,
}

const USERS: [&str; 3] = ["ann", "ben", "cat"];
const COURSES: [&str; 2] = ["CS-101", "MA-201"];
const GPUS: [&str; 2] = ["GPU-aaaaaaaa-1111", "GPU-bbbbbbbb-2222"];
/// MIG slices, a whole T4 weighed at 2 compute slices (see [`weights`]) and one of four
/// shares of an L4 (7/4 = 1.75 compute slices).
const PROFILES: [&str; 6] = ["1g.10gb", "2g.20gb", "3g.40gb", "7g.80gb", "t4.16gb", "l4.24gb.1of4"];

/// The admin's weights these tests count with; no other test of this binary uses a T4.
fn weights() {
    slicehub_core::quotas::weights::install(&[ModelWeight { profile: "t4.16gb".into(), compute_slices: 2 }]);
}
const IMAGES: [&str; 2] = ["slicehub/jupyterlab:offline", "slicehub/busybox:offline"];
const REASONS: [&str; 5] = [
    "stopped by its owner",
    "stopped at the course's time limit (60 min)",
    "quota used up (used 6 of 6 slice-hours this week)",
    "idle for 60 minutes",
    "exited with code 0",
];

/// Wednesday noon; the week runs from Monday 23 November 00:00 UTC.
fn now() -> i64 {
    at("2026-11-25T12:00:00Z")
}

/// Whole-minute spans from Friday before the week to now, some across the week's start,
/// some still open; a fixed generator so both databases get the same ledger.
fn spans() -> Vec<Span> {
    weights();
    let mut seed: u64 = 7;
    let mut next = |n: u64| {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((seed >> 33) % n) as i64
    };
    let origin = at("2026-11-20T00:00:00Z");
    let mut out = Vec::new();
    for i in 0..80 {
        let started = origin + next(7_800) * MINUTE;
        let length = (1 + next(300)) * MINUTE;
        let open = i % 9 == 0;
        let ended = if open { None } else { Some((started + length).min(now())) };
        out.push(Span {
            user: USERS[next(3) as usize],
            course: COURSES[next(2) as usize],
            gpu: GPUS[next(2) as usize],
            profile: PROFILES[next(PROFILES.len() as u64) as usize],
            image: IMAGES[next(2) as usize],
            requested: started - next(45) * MINUTE,
            started,
            ended,
            reason: if open { "" } else { REASONS[next(5) as usize] },
        });
    }
    // ann's 3g across the week's start: Sunday 23:00 to Monday 01:00 counts one hour.
    out.push(Span {
        user: "ann",
        course: "CS-101",
        gpu: GPUS[0],
        profile: "3g.40gb",
        image: IMAGES[0],
        requested: at("2026-11-22T22:50:00Z"),
        started: at("2026-11-22T23:00:00Z"),
        ended: Some(at("2026-11-23T01:00:00Z")),
        reason: REASONS[1],
    });
    out
}

/// A plain account's id.
async fn account(store: &Store, name: &str) -> UserId {
    let new = NewUserRow { username: name, display_name: name, email: None, password_hash: "x", is_admin: false, must_change_password: false };
    store.insert_user(&new).await.unwrap().id
}

struct Ledger {
    users: HashMap<&'static str, UserId>,
    courses: HashMap<&'static str, CourseId>,
}

async fn write_ledger(store: &Store, spans: &[Span]) -> Ledger {
    let mut users = HashMap::new();
    for name in USERS {
        users.insert(name, account(store, name).await);
    }
    let mut courses = HashMap::new();
    for code in COURSES {
        courses.insert(code, store.insert_course(code, code).await.unwrap().id);
    }
    for (i, s) in spans.iter().enumerate() {
        let (user, course) = (users[s.user], courses[s.course]);
        let state = if s.ended.is_some() { "ended" } else { "ready" };
        store
            .execute_admin(&format!(
                "INSERT INTO gpu_sessions (id, user_id, course_id, kind, profile, image, argv, state, live,
                                           token, requested_at, updated_at, deadline_at)
                 VALUES ('s{i}', {user}, {course}, 'job', '{}', '{}', '[]', '{state}', {}, 't{i}', {}, {}, {})",
                s.profile,
                s.image,
                i64::from(s.ended.is_none()),
                s.requested,
                s.started,
                s.started + 600 * MINUTE
            ))
            .await
            .unwrap();
        let (ended, reason) = match s.ended {
            Some(end) => (end.to_string(), format!("'{}'", s.reason.replace('\'', "''"))),
            None => ("NULL".to_string(), "NULL".to_string()),
        };
        store
            .execute_admin(&format!(
                "INSERT INTO usage_ledger (session_id, user_id, course_id, gpu_uuid, profile, placement, image, kind,
                                           started_at, ended_at, end_reason)
                 VALUES ('s{i}', {user}, {course}, '{}', '{}', 'x', '{}', 'job', {}, {ended}, {reason})",
                s.gpu, s.profile, s.image, s.started
            ))
            .await
            .unwrap();
    }
    // Written behind the portal's back: the per-day totals are computed again, as
    // `slicehub usage rebuild` does.
    store.rebuild_usage_rollups().await.unwrap();
    Ledger { users, courses }
}

fn key_of(s: &Span, group: GroupBy) -> String {
    match group {
        GroupBy::Course => s.course,
        GroupBy::User => s.user,
        GroupBy::Profile => s.profile,
        GroupBy::Gpu => s.gpu,
        GroupBy::Image => s.image,
    }
    .to_string()
}

/// Compute-slice-ms and GB-seconds per key, counted one minute at a time: a span holds
/// its slice in minute `m` when it started at or before it and had not ended.
fn minute_by_minute(spans: &[Span], q: &ReportQuery, group: GroupBy, now: i64) -> HashMap<String, (i64, i64)> {
    let mut out: HashMap<String, (i64, i64)> = HashMap::new();
    let mut minute = q.from_ms;
    while minute < q.to_ms.min(now) {
        for s in spans {
            if s.started <= minute && s.ended.unwrap_or(now) > minute {
                let e = out.entry(key_of(s, group)).or_default();
                e.0 += slice_ms(s.profile, MINUTE);
                e.1 += 60 * memory_gb(s.profile);
            }
        }
        minute += MINUTE;
    }
    out
}

/// The report computed from every ledger row, not from the per-day totals.
async fn from_ledger(store: &Store, q: &ReportQuery, courses: Option<&[CourseId]>) -> UsageReport {
    usage_report_from(store, q, courses, now(), ReportSource::Ledger).await.unwrap()
}

fn week(group: GroupBy) -> ReportQuery {
    ReportQuery::parse("week", "", "", group.as_str(), now()).unwrap()
}

async fn reports_add_up_to_the_ledger(store: Store) {
    let spans = spans();
    let ledger = write_ledger(&store, &spans).await;
    let q = week(GroupBy::Course);
    assert_eq!((q.from_ms, q.to_ms), (at("2026-11-23T00:00:00Z"), at("2026-11-30T00:00:00Z")));

    for group in GroupBy::ALL {
        let q = week(group);
        let report = usage_report(&store, &q, None, now()).await.unwrap();
        assert_eq!(report, from_ledger(&store, &q, None).await, "{group:?}: the per-day totals give the ledger's report");
        let expected = minute_by_minute(&spans, &q, group, now());
        let got: HashMap<String, (i64, i64)> =
            report.rows.iter().map(|r| (r.key.clone(), (r.slice_ms, r.memory_gb_s))).collect();
        let expected_nonzero: HashMap<_, _> = expected.iter().filter(|(_, v)| v.0 > 0).map(|(k, v)| (k.clone(), *v)).collect();
        let got_nonzero: HashMap<_, _> = got.iter().filter(|(_, v)| v.0 > 0).map(|(k, v)| (k.clone(), *v)).collect();
        assert_eq!(got_nonzero, expected_nonzero, "{group:?}");
        // Rows add up to the total, and so do the charts' buckets.
        assert_eq!(report.rows.iter().map(|r| r.slice_ms).sum::<i64>(), report.total.slice_ms, "{group:?}");
        assert_eq!(report.rows.iter().map(|r| r.sessions).sum::<i64>(), report.total.sessions, "{group:?}");
        let charted: i64 = report.by_course.iter().flat_map(|s| &s.values).sum();
        assert_eq!(charted, report.total.slice_ms, "{group:?}");
        let per_gpu: i64 = report.by_gpu.iter().flat_map(|s| &s.values).sum();
        assert_eq!(per_gpu, report.total.slice_ms, "{group:?}");
        assert_eq!(report.buckets.len(), 7, "a week is drawn as seven days");
    }

    // Each size is charged at its weight, written out here rather than asked of the code:
    // a T4 at the admin's 2 compute slices, a quarter of an L4 at 7/4.
    let by_size = usage_report(&store, &week(GroupBy::Profile), None, now()).await.unwrap();
    let minutes = minute_by_minute(&spans, &week(GroupBy::Profile), GroupBy::Profile, now());
    for (profile, thousandths) in [("1g.10gb", 1000), ("7g.80gb", 7000), ("t4.16gb", 2000), ("l4.24gb.1of4", 1750)] {
        let row = by_size.rows.iter().find(|r| r.key == profile).unwrap_or_else(|| panic!("{profile} used this week"));
        let held_minutes = minutes[profile].1 / 60 / memory_gb(profile).max(1);
        assert_eq!(row.slice_ms, held_minutes * MINUTE * thousandths / 1000, "{profile}");
    }

    // The span across the week's start counts its Monday hour only: 3 slice-hours.
    let by_user = usage_report(&store, &week(GroupBy::User), None, now()).await.unwrap();
    let cut = ReportQuery { from_ms: at("2026-11-23T00:00:00Z"), to_ms: at("2026-11-23T01:00:00Z"), ..week(GroupBy::User) };
    let first_hour = usage_report(&store, &cut, None, now()).await.unwrap();
    let first_hour_expected = minute_by_minute(&spans, &cut, GroupBy::User, now());
    assert!(first_hour.rows.iter().any(|r| r.key == "ann" && r.slice_ms >= 3 * 60 * MINUTE), "{first_hour:?}");
    for row in &first_hour.rows {
        assert_eq!(row.slice_ms, first_hour_expected.get(&row.key).map_or(0, |v| v.0), "{}", row.key);
    }

    // Sessions, waits and end causes, counted straight from the rows.
    let inside = |t: i64| (q.from_ms..q.to_ms).contains(&t);
    let held = |s: &Span| s.ended.unwrap_or(now()).min(q.to_ms) > s.started.max(q.from_ms) || inside(s.started);
    for row in &by_user.rows {
        let mine: Vec<&Span> = spans.iter().filter(|s| s.user == row.key).collect();
        assert_eq!(row.sessions, mine.iter().filter(|s| held(s)).count() as i64, "{}", row.key);
        let ended = |cause: &str| {
            mine.iter().filter(|s| s.ended.is_some_and(inside) && s.reason.starts_with(cause)).count() as i64
        };
        assert_eq!(row.ended_time_limit, ended("stopped at the course's time limit"), "{}", row.key);
        assert_eq!(row.ended_quota, ended("quota used up"), "{}", row.key);
        assert_eq!(row.ended_idle, ended("idle"), "{}", row.key);
        let mut waits: Vec<i64> = mine.iter().filter(|s| inside(s.started)).map(|s| s.started - s.requested).collect();
        waits.sort();
        let rank = |p: usize| waits.get((waits.len() * p).div_ceil(100).max(1) - 1).copied();
        assert_eq!(row.wait_p50_ms, rank(50), "{}", row.key);
        assert_eq!(row.wait_p95_ms, rank(95), "{}", row.key);
    }

    // The sum over one course's users equals that course's row.
    let by_course = usage_report(&store, &week(GroupBy::Course), None, now()).await.unwrap();
    let cs = ledger.courses["CS-101"];
    let cs_users = usage_report(&store, &week(GroupBy::User), Some(&[cs]), now()).await.unwrap();
    assert_eq!(cs_users, from_ledger(&store, &week(GroupBy::User), Some(&[cs])).await);
    let cs_row = by_course.rows.iter().find(|r| r.key == "CS-101").unwrap();
    assert_eq!(cs_users.rows.iter().map(|r| r.slice_ms).sum::<i64>(), cs_row.slice_ms);
    assert_eq!(cs_users.total.slice_ms, cs_row.slice_ms);

    // The CSV carries the page's numbers: a line a row, then the total.
    let csv = report_csv(&by_user);
    let mut reader = csv::Reader::from_reader(csv.as_bytes());
    let lines: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    assert_eq!(lines.len(), by_user.rows.len() + 1, "{csv}");
    for (line, row) in lines.iter().zip(by_user.rows.iter().chain([&by_user.total])) {
        assert_eq!(&line[3], row.key.as_str());
        assert_eq!(line[4], hours(row.slice_ms));
        assert_eq!(line[6], row.sessions.to_string());
        assert_eq!(line[7], row.wait_p50_ms.map(|ms| (ms / 1000).to_string()).unwrap_or_default());
    }
    assert_eq!(&lines.last().unwrap()[2], "total");
    assert_eq!(&lines[0][0], "2026-11-23T00:00:00Z");

    // An instructor of CS-101: only its rows, and GPUs without their UUIDs.
    let ivy = account(&store, "ivy").await;
    store.set_member_role(cs, ivy, Role::Instructor).await.unwrap();
    let caller = Caller::User {
        id: ivy,
        username: "ivy".into(),
        is_admin: false,
        must_change_password: false,
        memberships: vec![(cs, Role::Instructor)],
    };
    let form = |group: &str, course: &str| ReportForm {
        period: "week".into(),
        group: group.into(),
        course: course.into(),
        ..ReportForm::default()
    };
    let hers = report_for(&store, &caller, &form("course", ""), now()).await.unwrap();
    assert_eq!(hers.rows.iter().map(|r| r.key.as_str()).collect::<Vec<_>>(), ["CS-101"]);
    let gpus = report_for(&store, &caller, &form("gpu", "cs-101"), now()).await.unwrap();
    let shown = render(&gpus);
    for uuid in GPUS {
        assert!(!shown.contains(uuid), "an instructor sees a GPU UUID: {shown}");
    }
    assert!(gpus.rows.iter().all(|r| r.key.starts_with("GPU ")), "{:?}", gpus.rows);
    match report_for(&store, &caller, &form("course", "MA-201"), now()).await {
        Err(CoreError::NoPermission(_)) => {}
        other => panic!("another course's report: {other:?}"),
    }
    let _ = ledger.users;
}

/// Everything of a report a page or file could show.
fn render(report: &UsageReport) -> String {
    format!("{:?}{}", report.rows, report_csv(report))
}

async fn bad_fields_get_plain_messages(store: Store) {
    let admin = Caller::User {
        id: UserId(1),
        username: "root".into(),
        is_admin: true,
        must_change_password: false,
        memberships: Vec::new(),
    };
    let cases = [
        (("month", "", "", "course"), "Unknown period"),
        (("week", "", "", "colour"), "Unknown grouping"),
        (("custom", "2026-11-30", "2026-11-01", "course"), "ends (2026-11-01) before it begins"),
        (("custom", "2025-01-01", "2026-12-31", "course"), "at most 400 days"),
        (("custom", "2026-02-30", "2026-03-01", "course"), "is not a date"),
        (("custom", "", "2026-03-01", "course"), "Choose both"),
    ];
    for ((period, from, to, group), words) in cases {
        let form = ReportForm { period: period.into(), from: from.into(), to: to.into(), group: group.into(), course: String::new() };
        match report_for(&store, &admin, &form, now()).await {
            Err(CoreError::InvalidRequest(m)) => assert!(m.contains(words), "{m}"),
            other => panic!("{form:?}: {other:?}"),
        }
    }
    let form = ReportForm { course: "NOPE-1".into(), ..ReportForm::default() };
    assert!(matches!(report_for(&store, &admin, &form, now()).await, Err(CoreError::NotFound(_))));
    // A custom range is whole days, both included.
    let q = ReportQuery::parse("custom", "2026-11-01", "2026-11-30", "", now()).unwrap();
    assert_eq!((q.from_ms, q.to_ms), (at("2026-11-01T00:00:00Z"), at("2026-12-01T00:00:00Z")));
    assert_eq!(q.dates(), ("2026-11-01".to_string(), "2026-11-30".to_string()));
}

/// The class view reads the whole course's use at once, not student by student: what it
/// charges each student is still the ledger's minute-by-minute sum in the week (rows cut
/// at the week's start, rows still open, the other course's rows left out), and under a
/// quota each budget, grants included, is the one the student's own page reads.
async fn the_class_view_charges_each_student_the_ledgers_minutes(store: Store) {
    let spans = spans();
    let ledger = write_ledger(&store, &spans).await;
    let course = ledger.courses["CS-101"];
    for name in USERS {
        store.set_member_role(course, ledger.users[name], Role::Student).await.unwrap();
    }
    let config = Config::default();
    let in_course: Vec<Span> = spans.iter().filter(|s| s.course == "CS-101").cloned().collect();
    let expected = minute_by_minute(&in_course, &week(GroupBy::User), GroupBy::User, now());
    let running = |name: &str| -> i64 {
        let milli: i64 = in_course.iter().filter(|s| s.user == name && s.ended.is_none()).map(|s| milli_slices(s.profile)).sum();
        (milli + 999) / 1000
    };

    let view = class_view(&store, &config, course, now()).await.unwrap();
    assert_eq!(view.students.len(), USERS.len());
    for student in &view.students {
        let minutes = expected.get(&student.username).map_or(0, |e| e.0);
        assert_eq!(student.used_ms, minutes, "{} without a quota", student.username);
        assert_eq!(student.running_slices, running(&student.username), "{}", student.username);
        assert!(student.budget.is_none());
    }
    assert!(expected.values().any(|e| e.0 > 0), "the week has use to charge");

    let known: Vec<String> = PROFILES.iter().map(|p| p.to_string()).collect();
    let form = PolicyForm {
        images: IMAGES[0].into(),
        max_minutes: "600".into(),
        max_sessions: "2".into(),
        max_slices: "7".into(),
        internet: "on".into(),
        quota_hours: "10".into(),
        period: "week".into(),
        reset_day: "0".into(),
        reset_time: "00:00".into(),
        time_zone: "UTC".into(),
        ..PolicyForm::default()
    };
    let policy = form.parse(&known).unwrap();
    set_policy(&store, &config, course, &policy, &known, "ivy").await.unwrap();
    store.add_quota_grant(course, ledger.users["ben"], 90, "the lab ran late", "ivy", now() - 5 * MINUTE).await.unwrap();
    // Last week's grant is spent with last week.
    store.add_quota_grant(course, ledger.users["cat"], 60, "last week's lab", "ivy", at("2026-11-22T12:00:00Z")).await.unwrap();
    let view = class_view(&store, &config, course, now()).await.unwrap();
    for student in &view.students {
        let own = budget_at(&store, &policy, course, student.user_id, now()).await.unwrap();
        assert_eq!(student.budget, own, "{}: the class view and the student's own page agree", student.username);
        let budget = own.unwrap();
        assert_eq!(budget.used_ms, expected.get(&student.username).map_or(0, |e| e.0));
        let granted = if student.username == "ben" { 90 * MINUTE } else { 0 };
        assert_eq!((budget.granted_ms, budget.total_ms), (granted, 600 * MINUTE + granted), "{}", student.username);
    }
}

/// A budget counts the rows that overlap its period: an open row that started just before
/// the period's end counts, one that started at or after it does not, for one student
/// and for the whole course alike.
async fn open_rows_count_only_from_before_the_periods_end(store: Store) {
    let until = now();
    let open = |started: i64| Span {
        user: "ann",
        course: "CS-101",
        gpu: GPUS[0],
        profile: "1g.10gb",
        image: IMAGES[0],
        requested: started,
        started,
        ended: None,
        reason: "",
    };
    let spans = [open(until - MINUTE), open(until), open(until + MINUTE)];
    let ledger = write_ledger(&store, &spans).await;
    let (course, ann) = (ledger.courses["CS-101"], ledger.users["ann"]);
    let from = until - 60 * MINUTE;
    let starts = |rows: Vec<slicehub_core::store::UsageInterval>| rows.iter().map(|r| r.started_at_ms).collect::<Vec<_>>();
    assert_eq!(starts(store.usage_intervals(course, ann, from, until).await.unwrap()), [until - MINUTE]);
    assert_eq!(starts(store.course_usage_intervals(course, from, until).await.unwrap()), [until - MINUTE]);
}

/// Intervals closed by the portal one by one: across several midnights, ending exactly at
/// midnight, of no length, a few hundred milliseconds long across midnight, waits of
/// fractions of a second.
fn closing_spans() -> Vec<Span> {
    let span = |user, course, gpu, requested: i64, started: &str, ended: &str, reason| Span {
        user,
        course,
        gpu,
        profile: "2g.20gb",
        image: IMAGES[1],
        requested: at(started) - requested,
        started: at(started),
        ended: Some(at(ended)),
        reason,
    };
    vec![
        span("ann", "CS-101", GPUS[0], 12_345, "2026-11-21T22:30:00Z", "2026-11-24T01:15:00Z", REASONS[0]),
        span("ben", "CS-101", GPUS[1], 0, "2026-11-23T23:00:00Z", "2026-11-24T00:00:00Z", REASONS[1]),
        span("ben", "MA-201", GPUS[1], 60_999, "2026-11-24T05:00:00Z", "2026-11-24T05:00:00Z", REASONS[2]),
        span("cat", "MA-201", GPUS[0], 999, "2026-11-24T23:59:59.500Z", "2026-11-25T00:00:00.250Z", REASONS[3]),
        span("cat", "CS-101", GPUS[0], 1_000, "2026-11-22T23:30:00Z", "2026-11-23T00:30:00Z", REASONS[0]),
        span("ann", "MA-201", GPUS[1], 5, "2026-11-23T00:00:00Z", "2026-11-23T00:00:00Z", REASONS[4]),
    ]
}

/// The reports the tests compare: this week, the term and a custom range that begins
/// on a Tuesday, in every grouping.
fn periods() -> Vec<ReportQuery> {
    let mut out = Vec::new();
    for group in GroupBy::ALL {
        out.push(week(group));
        out.push(ReportQuery::parse("term", "", "", group.as_str(), now()).unwrap());
        out.push(ReportQuery::parse("custom", "2026-11-24", "2026-11-26", group.as_str(), now()).unwrap());
    }
    out
}

/// Every report of [`periods`] from the per-day totals equals the one from the ledger.
async fn day_totals_agree(store: &Store, when: &str) {
    for q in periods() {
        let report = usage_report(store, &q, None, now()).await.unwrap();
        assert_eq!(report, from_ledger(store, &q, None).await, "{when}: {:?} by {:?}", q.period, q.group);
    }
}

/// The portal closes each interval as its session ends; the per-day totals it adds then
/// give the ledger's numbers for any period of whole days, and a rebuild changes nothing.
async fn closing_intervals_keeps_the_day_totals_equal_to_the_ledger(store: Store) {
    let spans = closing_spans();
    let open: Vec<Span> = spans.iter().map(|s| Span { ended: None, reason: "", ..s.clone() }).collect();
    write_ledger(&store, &open).await;
    for (i, s) in spans.iter().enumerate() {
        assert!(store.close_usage(&format!("s{i}"), s.ended.unwrap(), s.reason).await.unwrap());
    }
    assert!(!store.close_usage("s0", now(), "again").await.unwrap(), "an interval closes once");
    day_totals_agree(&store, "closed one by one").await;

    // And the numbers are each interval's part of the week, to the millisecond (some
    // last less than a minute); waits in whole seconds.
    let q = week(GroupBy::User);
    let report = usage_report(&store, &q, None, now()).await.unwrap();
    for row in &report.rows {
        let part = |s: &Span| slice_ms(s.profile, (s.ended.unwrap().min(q.to_ms) - s.started.max(q.from_ms)).max(0));
        let expected: i64 = spans.iter().filter(|s| s.user == row.key).map(part).sum();
        assert_eq!(row.slice_ms, expected, "{}", row.key);
        let inside = |t: i64| (q.from_ms..q.to_ms).contains(&t);
        let mut waits: Vec<i64> =
            spans.iter().filter(|s| s.user == row.key && inside(s.started)).map(|s| (s.started - s.requested) / 1000 * 1000).collect();
        waits.sort();
        assert_eq!(row.wait_p50_ms, waits.get(waits.len().div_ceil(2).max(1) - 1).copied(), "{}", row.key);
    }
    // ben's two intervals of the week: one ended at midnight after an hour, one of no length.
    let ben = report.rows.iter().find(|r| r.key == "ben").unwrap();
    assert_eq!((ben.sessions, ben.ended_time_limit, ben.ended_quota), (2, 1, 1), "{ben:?}");
    let tuesday = ReportQuery::parse("custom", "2026-11-24", "2026-11-24", "user", now()).unwrap();
    let tuesday = usage_report(&store, &tuesday, None, now()).await.unwrap();
    let ben = tuesday.rows.iter().find(|r| r.key == "ben").unwrap();
    assert_eq!((ben.slice_ms, ben.sessions, ben.ended_time_limit), (0, 1, 1), "ended at Tuesday's first instant: {ben:?}");

    store.rebuild_usage_rollups().await.unwrap();
    day_totals_agree(&store, "rebuilt").await;
}

/// Intervals closing while an administrator rebuilds the per-day totals are counted once
/// each, whichever comes first.
async fn a_rebuild_while_intervals_close_counts_each_once(store: Store) {
    let mut spans = closing_spans();
    spans.extend(self::spans().into_iter().filter(|s| s.ended.is_some()));
    let open: Vec<Span> = spans.iter().map(|s| Span { ended: None, reason: "", ..s.clone() }).collect();
    write_ledger(&store, &open).await;
    let mut closing = tokio::task::JoinSet::new();
    for (i, s) in spans.iter().enumerate() {
        let (closer, end, reason) = (store.clone(), s.ended.unwrap(), s.reason);
        closing.spawn(async move { closer.close_usage(&format!("s{i}"), end, reason).await });
        if i % 20 == 10 {
            let rebuilder = store.clone();
            closing.spawn(async move { rebuilder.rebuild_usage_rollups().await.map(|()| true) });
        }
    }
    while let Some(done) = closing.join_next().await {
        assert!(done.unwrap().unwrap());
    }
    day_totals_agree(&store, "closed during rebuilds").await;
}

on_both_databases!(
    closing_intervals_keeps_the_day_totals_equal_to_the_ledger,
    a_rebuild_while_intervals_close_counts_each_once,
    open_rows_count_only_from_before_the_periods_end,
    reports_add_up_to_the_ledger,
    bad_fields_get_plain_messages,
    the_class_view_charges_each_student_the_ledgers_minutes
);
