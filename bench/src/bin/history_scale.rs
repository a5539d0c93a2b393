//! The portal's hot paths on a database with a term of history against an empty one, on
//! SQLite and (with SLICEHUB_TEST_DATABASE_URL) PostgreSQL, in one run (issue #27). The
//! session service runs on 16 simulated H100-80GB and the in-process container engine, so
//! what is timed is the portal's own work: its queries, its locks, its plans.
//!
//!     history-scale [SESSIONS] [sqlite|postgres]
//!
//! SESSIONS defaults to 1,000,000 ended sessions and ledger rows; naming one database runs
//! only that one. Each phase's time goes to stderr as it ends.
//!
//! Per database and history: 300 students of one course (`C-0`, whose history is a
//! fortieth of the whole) claim a 1g.10gb each, one after another (112 start, the rest
//! wait); then, with those live and waiting: a queue pass, the queue's estimates, one
//! student's session list (the sessions page's read), the launch form's read (what fits
//! and the student's budget) and a waiting page's poll of it, the class view of the 300-student course, the reads of a
//! `/metrics` scrape, a week's and a term's usage report, and a reconcile pass. Last, a
//! thousand more students claim at the same moment.

use std::sync::Arc;
use std::time::Instant;

use slicehub_bench::history::{fill, History, Scratch};
use slicehub_core::config::Config;
use slicehub_core::courses::{class_view, policy_of};
use slicehub_core::quotas::budget_at;
use slicehub_core::reports::{usage_report, ReportQuery};
use slicehub_core::gpu::GpuBackend;
use slicehub_core::runtime::FakeEngine;
use slicehub_core::sessions::{ClaimRequest, Sessions, Workload};
use slicehub_core::store::{Role, Store};
use slicehub_core::{CourseId, UserId};
use slicehub_gpu::SimulatedBackend;

const CLAIMS: i64 = 300;
const BURST: i64 = 1_000;
const RUNS: usize = 7;
const IMAGE: &str = "slicehub/busybox:offline";

fn now_ms() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64
}

fn ms(since: Instant) -> f64 {
    since.elapsed().as_secs_f64() * 1000.0
}

/// `p50/p95/p99/max` of `times` (ms).
fn spread(times: &mut [f64]) -> String {
    times.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let at = |p: usize| times[((times.len() - 1) * p) / 100];
    format!("p50 {:.1} / p95 {:.1} / p99 {:.1} / max {:.1} ms", at(50), at(95), at(99), times[times.len() - 1])
}

/// Median of `RUNS` timings of `work` (ms).
async fn median<F, Fut>(mut work: F) -> f64
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let mut times = Vec::new();
    for _ in 0..RUNS {
        let t = Instant::now();
        work().await;
        times.push(ms(t));
    }
    times.sort_by(|a, b| a.partial_cmp(b).unwrap());
    times[RUNS / 2]
}

async fn measure(label: &str, store: Store, sessions_of_history: i64) {
    let now = now_ms();
    let history = History { students: 2_000, courses: 40, gpus: 16, sessions: sessions_of_history, days: 365 };
    let filled = fill(&store, &history, now).await;
    eprintln!(
        "{label}: history written in {:.1} s, per-day usage totals built in {:.1} s",
        filled.written.as_secs_f64(),
        filled.rolled_up.as_secs_f64()
    );
    let lab = store.course_by_code("C-0").await.unwrap().unwrap();
    let mut students = Vec::new();
    for i in 0..CLAIMS {
        let user = store.user_by_username(&format!("student{i}")).await.unwrap().unwrap();
        store.set_member_role(lab.id, user.id, Role::Student).await.unwrap();
        students.push(user.id);
    }

    let dir = tempfile::tempdir().unwrap();
    let gpus: Arc<dyn GpuBackend> = Arc::new(SimulatedBackend::open("16 x H100-80GB", dir.path().join("gpus.json")).unwrap());
    let mut config = Config::default();
    config.sessions.default_image = IMAGE.to_string();
    config.sessions.host_firewall = false;
    let config = Arc::new(config);
    let sessions = Sessions::new(store.clone(), gpus, Arc::new(FakeEngine::new()), config.clone());

    let mut claims = Vec::new();
    for user in &students {
        let t = Instant::now();
        sessions.claim(job(*user, lab.id)).await.unwrap();
        claims.push(ms(t));
        if claims.len() % 50 == 0 {
            eprintln!("{label}: {} claims, the last in {:.1} ms", claims.len(), claims[claims.len() - 1]);
        }
    }
    // The estimates are cached until a session changes: the first read is the work.
    let t = Instant::now();
    sessions.queue_estimates().await.unwrap();
    let estimates = ms(t);
    let pass = median(|| async { sessions.dispatch().await.unwrap(); }).await;
    let own = median(|| async { store.gpu_sessions_of_user(students[0], 50).await.unwrap(); }).await;
    let known = sessions.known_profiles().await.unwrap();
    let launch = median(|| async {
        let policy = policy_of(&store, &config, lab.id).await.unwrap();
        sessions.availability_per_course(&known, &[(Some(lab.id), policy.max_minutes)], true).await.unwrap();
        budget_at(&store, &policy, lab.id, students[0], now_ms()).await.unwrap();
    })
    .await;
    // What each further poll of a waiting page costs while nothing changes.
    let polls = median(|| async {
        let policy = policy_of(&store, &config, lab.id).await.unwrap();
        sessions.launch_availability(&known, &[(Some(lab.id), policy.max_minutes)]).await.unwrap();
        budget_at(&store, &policy, lab.id, students[0], now_ms()).await.unwrap();
    })
    .await;
    let class = median(|| async { class_view(&store, &config, lab.id, now_ms()).await.unwrap(); }).await;
    let scrape = median(|| async {
        store.live_session_counts().await.unwrap();
        store.queue_counts().await.unwrap();
        store.held_counts().await.unwrap();
        store.live_session_courses().await.unwrap();
        sessions.availability(&known).await.unwrap();
    })
    .await;
    let report = |period: &'static str| {
        let store = store.clone();
        async move {
            let now = now_ms();
            let query = ReportQuery::parse(period, "", "", "course", now).unwrap();
            median(|| async { usage_report(&store, &query, None, now).await.unwrap(); }).await
        }
    };
    let (week, term) = (report("week").await, report("term").await);
    let reconcile = median(|| async { sessions.reconcile().await.unwrap(); }).await;
    println!(
        "{label}: {sessions_of_history} ended sessions written in {:.1} s; {CLAIMS} claims {}; queue pass {pass:.1} ms; \
         estimates (first read) {estimates:.1} ms; one student's sessions {own:.1} ms; launch form {launch:.1} ms (a poll of it {polls:.2} ms); \
         class view {class:.1} ms; metrics reads {scrape:.1} ms; week report {week:.1} ms; term report {term:.1} ms; \
         reconcile {reconcile:.1} ms (all but claims and estimates: medians of {RUNS})",
        filled.written.as_secs_f64(),
        spread(&mut claims),
    );

    // Then a thousand more students of the course press Start at the same moment.
    let mut burst = Vec::new();
    for i in CLAIMS..CLAIMS + BURST {
        let user = store.user_by_username(&format!("student{i}")).await.unwrap().unwrap();
        store.set_member_role(lab.id, user.id, Role::Student).await.unwrap();
        burst.push(user.id);
    }
    let started = Instant::now();
    let tasks: Vec<_> = burst
        .iter()
        .map(|user| {
            let (sessions, request) = (sessions.clone(), job(*user, lab.id));
            tokio::spawn(async move {
                let t = Instant::now();
                let claimed = sessions.claim(request).await;
                (ms(t), claimed.err().map(|e| e.to_string()))
            })
        })
        .collect();
    let (mut times, mut refused) = (Vec::new(), Vec::new());
    for task in tasks {
        let (took, error) = task.await.unwrap();
        times.push(took);
        refused.extend(error);
    }
    println!(
        "{label}: {BURST} claims at once: {} taken in {:.1} s, each {}{}",
        BURST - refused.len() as i64,
        started.elapsed().as_secs_f64(),
        spread(&mut times),
        refused.first().map(|e| format!("; {} refused, the first: {e}", refused.len())).unwrap_or_default(),
    );
    sessions.shut_down().await;
}

fn job(user_id: UserId, course_id: CourseId) -> ClaimRequest {
    ClaimRequest {
        user_id,
        course_id,
        profile: "1g.10gb".into(),
        image: IMAGE.into(),
        workload: Workload::Job(vec!["sleep".into(), "3600".into()]),
    }
}

#[tokio::main]
async fn main() {
    let history: i64 = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(1_000_000);
    let only = std::env::args().nth(2).unwrap_or_default();
    let dir = tempfile::tempdir().unwrap();
    for (name, rows) in [("empty", 0), ("history", history)] {
        if only == "postgres" {
            break;
        }
        let scratch = Scratch::sqlite(dir.path(), name).await;
        measure(&format!("SQLite, {name:<7}"), scratch.store.clone(), rows).await;
        scratch.drop_database().await;
    }
    if only == "sqlite" {
        return;
    }
    let Ok(server) = std::env::var("SLICEHUB_TEST_DATABASE_URL") else {
        println!("PostgreSQL: skipped (SLICEHUB_TEST_DATABASE_URL is not set)");
        return;
    };
    for (name, rows) in [("empty", 0), ("history", history)] {
        let scratch = Scratch::postgres(&server, name).await;
        measure(&format!("PostgreSQL, {name:<7}"), scratch.store.clone(), rows).await;
        scratch.drop_database().await;
    }
}
