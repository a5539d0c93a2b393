//! Two costs of watching a busy portal, in this process with the portal's own code:
//! 1. a `/metrics` scrape (`metrics::render`) with 1,000 running and 100 waiting sessions
//!    in SQLite, 200 times: median and p95;
//! 2. the slice sampler with 56 running sessions on 8 simulated H100s (7 `1g` each, real
//!    busybox containers on the machine's Docker engine): CPU seconds of this process and
//!    wall time per pass, over 20 passes.
//!
//!     ops-metrics

use std::sync::Arc;
use std::time::Instant;

use slicehub_bench::process::cpu_seconds;
use slicehub_core::auth::Authenticator;
use slicehub_core::config::{Config, GpuBackendChoice};
use slicehub_core::notebook_access::NotebookAccess;
use slicehub_docker::Engine;
use slicehub_core::sessions::{ClaimRequest, SessionState, Sessions, Workload};
use slicehub_core::store::{NewUserRow, Role, Store};
use slicehub_core::Services;

const BUSYBOX: &str = "slicehub/busybox:offline";

async fn services(dir: &std::path::Path) -> Services {
    let mut config = Config::default();
    config.data_dir = dir.to_path_buf();
    config.gpu.backend = GpuBackendChoice::Simulated;
    config.gpu.simulated = "8 x H100-80GB".into();
    config.sessions.default_image = BUSYBOX.into();
    config.sessions.memory_mib_per_memory_slice = 64;
    let store = Store::connect(&format!("sqlite://{}?mode=rwc", dir.join("bench.db").display()), 4).await.unwrap();
    store.migrate().await.unwrap();
    let (gpus, gpu_fallback_reason) = slicehub_gpu::open_backend(&config.gpu, &config.data_dir).unwrap();
    let engine = Arc::new(Engine::new(""));
    let auth = Authenticator::from_config(store.clone(), &config);
    let config = Arc::new(config);
    let sessions = Sessions::new(store.clone(), gpus.clone(), engine.clone(), config.clone());
    let notebooks = NotebookAccess::new(store.clone(), config.clone());
    Services { config, store, gpus, gpu_fallback_reason, engine, auth, sessions, notebooks }
}

async fn scrape(services: &Services) {
    let now = now_ms();
    let store = &services.store;
    let gen = |n: i64| format!("WITH RECURSIVE n(i) AS (SELECT CAST(0 AS BIGINT) UNION ALL SELECT i + 1 FROM n WHERE i < {})", n - 1);
    store
        .execute_admin(&format!(
            "{} INSERT INTO users (username, display_name, password_hash, is_admin, must_change_password, disabled, created_at, updated_at)
             SELECT 'scrape' || i, 'S', 'x', 0, 0, 0, {now}, {now} FROM n",
            gen(1100)
        ))
        .await
        .unwrap();
    store
        .execute_admin(&format!("{} INSERT INTO courses (code, title, created_at) SELECT 'M-' || i, 'M', {now} FROM n", gen(10)))
        .await
        .unwrap();
    store
        .execute_admin(&format!(
            "{} INSERT INTO gpu_sessions (id, user_id, course_id, kind, profile, image, argv, state, live, released, gpu_index,
                                       token, requested_at, updated_at, deadline_at)
             SELECT 'm' || i, 1 + i, 1 + i % 10, 'job', '1g.10gb', 'img', '[]',
                    CASE WHEN i < 1000 THEN 'ready' ELSE 'queued' END, 1, CASE WHEN i < 1000 THEN 0 ELSE 1 END,
                    CASE WHEN i < 1000 THEN i % 8 ELSE NULL END, 't' || i, {now} - i * 1000, {now}, {now} + 3600000 FROM n",
            gen(1100)
        ))
        .await
        .unwrap();
    let mut times = Vec::new();
    let mut size = 0;
    for _ in 0..200 {
        let t = Instant::now();
        size = slicehub_core::metrics::render(services).await.unwrap().len();
        times.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    times.sort_by(|a, b| a.partial_cmp(b).unwrap());
    println!(
        "/metrics render, 1000 running + 100 waiting sessions, 200 scrapes: median {:.2} ms, p95 {:.2} ms, max {:.2} ms ({size} bytes)",
        times[100],
        times[190],
        times[199]
    );
}

fn now_ms() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64
}

async fn sampler(services: &Services) {
    let store = &services.store;
    let course = store.insert_course("SAMPLE-1", "Sampler").await.unwrap();
    let mut ids = Vec::new();
    for i in 0..56 {
        let name = format!("sampled{i}");
        let user = store
            .insert_user(&NewUserRow {
                username: &name,
                display_name: &name,
                email: None,
                password_hash: "x",
                is_admin: false,
                must_change_password: false,
            })
            .await
            .unwrap();
        store.set_member_role(course.id, user.id, Role::Student).await.unwrap();
        let claim = ClaimRequest {
            user_id: user.id,
            course_id: course.id,
            profile: "1g.10gb".into(),
            image: BUSYBOX.into(),
            workload: Workload::Job(vec!["sleep".into(), "600".into()]),
        };
        ids.push(services.sessions.claim(claim).await.unwrap().id);
    }
    let started = Instant::now();
    loop {
        let ready = store.gpu_sessions_in(&[SessionState::Ready]).await.unwrap().len();
        if ready == 56 {
            break;
        }
        assert!(started.elapsed().as_secs() < 600, "only {ready} of 56 sessions got ready");
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    }
    println!("56 busybox sessions ready on 8 simulated H100s after {:.0} s", started.elapsed().as_secs_f64());
    services.sessions.sample_slices().await.unwrap();
    let pid = std::process::id();
    let (cpu_before, wall_before) = (cpu_seconds(pid), Instant::now());
    let mut walls = Vec::new();
    for _ in 0..20 {
        let t = Instant::now();
        let sampled = services.sessions.sample_slices().await.unwrap();
        if sampled != 56 {
            for id in &ids {
                let s = services.sessions.session(id).await.unwrap();
                println!("{id}: {} {}", s.state.as_str(), s.reason);
            }
        }
        assert_eq!(sampled, 56);
        walls.push(t.elapsed().as_secs_f64());
    }
    let cpu = cpu_seconds(pid) - cpu_before;
    let wall = wall_before.elapsed().as_secs_f64();
    walls.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let per_pass = cpu / 20.0;
    println!(
        "sampler, 56 instances, 20 passes back to back in {wall:.1} s: {per_pass:.3} CPU-s per pass (median wall {:.0} ms); every 10 s that is {:.2}% of a core",
        walls[10] * 1000.0,
        per_pass / 10.0 * 100.0
    );
    for id in ids.iter().rev() {
        let _ = services.sessions.stop(id, "bench over").await;
    }
    let _ = services.sessions.remove_idle_networks().await;
}

#[tokio::main]
async fn main() {
    let dir = tempfile::tempdir().unwrap();
    let services = services(dir.path()).await;
    scrape(&services).await;
    // The scrape's sessions are rows only; clear them so the sampler's are the only live ones.
    services.store.execute_admin("UPDATE gpu_sessions SET live = 0, released = 1, state = 'ended'").await.unwrap();
    sampler(&services).await;
}
