//! Idle culling with the real JupyterLab image on the real Docker engine, SQLite and
//! PostgreSQL: an idle notebook is warned, then stopped with the reason "idle" at the
//! deadline it was warned of (across a restart of the portal during the warning; one that
//! passed while no portal ran is renewed); a
//! notebook whose kernel runs code, one whose student pressed "Keep it running" and one
//! whose slice is busy (simulated GPU: container CPU) are not; with students waiting for
//! its size an idle notebook is stopped early, says why, and the first waiting claim gets
//! its slice; a job with an idle slice is reported, not stopped; on MIG slices whose
//! activity the GPUs do not report, a job is never judged idle. A "Keep it running"
//! written while a pass decides wins over that pass, and of passes deciding at once only
//! one writes. Needs `slicehub/jupyterlab:offline` (scripts/test.sh builds it).


use crate::common;
use crate::lab;

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::SinkExt;
use crate::lab::{lab, Lab};
use slicehub_core::gpu::GpuBackend;
use slicehub_core::sessions::{ClaimRequest, GpuSession, SessionState::*, Sessions, Workload};
use slicehub_core::courses::{set_policy, PolicyForm, PolicyFormRules};
use slicehub_core::store::{IdleRow, Store};

const JUPYTERLAB: &str = "slicehub/jupyterlab:offline";
const START: Duration = Duration::from_secs(180);
const PASS: Duration = Duration::from_secs(3);

async fn jupyter_lab(store: Store, idle: &str, waiting: &str) -> Lab {
    jupyter_lab_with(store, idle, waiting, "off", "report").await
}

async fn jupyter_lab_with(store: Store, idle: &str, waiting: &str, job_minutes: &str, job_idle: &str) -> Lab {
    let lab = lab(store, "1 x H100-80GB", |c| {
        c.sessions.default_image = JUPYTERLAB.to_string();
        c.sessions.images = vec![lab::BUSYBOX.to_string()];
        c.sessions.memory_mib_per_memory_slice = 256;
        c.sessions.max_per_user = 1;
    })
    .await;
    let known = lab.sessions.known_profiles().await.unwrap();
    let form = PolicyForm {
        images: format!("{JUPYTERLAB}, {}", lab::BUSYBOX),
        max_minutes: "60".into(),
        max_sessions: "1".into(),
        max_slices: "7".into(),
        internet: "on".into(),
        time_zone: "UTC".into(),
        idle_minutes: idle.into(),
        idle_waiting_minutes: waiting.into(),
        idle_warning_minutes: "1".into(),
        idle_gpu_percent: "10".into(),
        job_idle_minutes: job_minutes.into(),
        job_idle: job_idle.into(),
        ..PolicyForm::default()
    };
    set_policy(&lab.store, &lab.config, lab.course_id, &form.parse(&known).unwrap(), &known, "vic").await.unwrap();
    lab
}

async fn notebook(lab: &Lab, student: &str, profile: &str) -> GpuSession {
    let user = lab.student(student).await;
    let claim = ClaimRequest {
        user_id: user,
        course_id: lab.course_id,
        profile: profile.into(),
        image: JUPYTERLAB.into(),
        workload: Workload::Notebook,
    };
    let session = lab.sessions.claim(claim).await.unwrap();
    let ready = lab.until(&session.id, &[Ready, Failed], START).await;
    assert_eq!(ready.state, Ready, "{} {}", ready.reason, ready.log_tail);
    ready
}

/// Starts a kernel and runs a loop in it that sleeps (busy in Jupyter's eyes, no CPU).
async fn run_forever(session: &GpuSession) {
    let address = session.notebook_address.as_deref().unwrap();
    let base = session.base_url();
    let kernel: serde_json::Value = reqwest::Client::new()
        .post(format!("http://{address}{base}api/kernels"))
        .header("Authorization", format!("token {}", session.token))
        .json(&serde_json::json!({"name": "python3"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let id = kernel["id"].as_str().unwrap();
    let url = format!("ws://{address}{base}api/kernels/{id}/channels?token={}", session.token);
    let (mut socket, _) = tokio_tungstenite::connect_async(url).await.unwrap();
    let execute = serde_json::json!({
        "header": {"msg_id": "loop", "username": "test", "session": "idle-test",
                   "msg_type": "execute_request", "version": "5.3", "date": "2026-11-25T00:00:00Z"},
        "parent_header": {}, "metadata": {}, "buffers": [], "channel": "shell",
        "content": {"code": "import time\nwhile True:\n    time.sleep(1)", "silent": false, "store_history": false,
                    "user_expressions": {}, "allow_stdin": false, "stop_on_error": true},
    });
    socket.send(tokio_tungstenite::tungstenite::Message::text(execute.to_string())).await.unwrap();
    // Closing the socket leaves the code running.
    tokio::time::sleep(Duration::from_secs(1)).await;
}

/// About a fifth of one core, as a training loop that waits for data would use.
async fn keep_the_slice_busy(lab: &Lab, session: &GpuSession) {
    let client = lab.engine.client().await.unwrap();
    let script = "import time\nwhile True:\n    t = time.time()\n    while time.time() - t < 0.25: pass\n    time.sleep(0.75)";
    let exec = client
        .create_exec(
            session.container.as_deref().unwrap(),
            bollard::models::ExecConfig { cmd: Some(vec!["python3".into(), "-c".into(), script.into()]), ..Default::default() },
        )
        .await
        .unwrap();
    client
        .start_exec(&exec.id, Some(bollard::exec::StartExecOptions { detach: true, ..Default::default() }))
        .await
        .unwrap();
}

/// One pass of the portal's loop: sample the slices, then look for idle sessions.
async fn pass(sessions: &Sessions) {
    sessions.sample_slices().await.unwrap();
    sessions.cull_idle().await.unwrap();
}

async fn idle_notebooks_are_warned_then_stopped_and_active_ones_are_not(store: Store) {
    let lab = jupyter_lab(store, "2", "off").await;
    let idle = notebook(&lab, "ida", "1g.10gb").await;
    let running = notebook(&lab, "rex", "1g.10gb").await;
    let kept = notebook(&lab, "kim", "1g.10gb").await;
    let training = notebook(&lab, "gus", "1g.10gb").await;
    run_forever(&running).await;
    keep_the_slice_busy(&lab, &training).await;

    // Idle a minute: the idle and the kept notebooks are warned, the others are not.
    let began = Instant::now();
    let warning = loop {
        pass(&lab.sessions).await;
        let notices = lab.sessions.idle_notices().await.unwrap();
        if let (Some(w), Some(_)) = (notices.get(&idle.id), notices.get(&kept.id)) {
            break *w;
        }
        assert!(began.elapsed() < Duration::from_secs(150), "no warning after 150 s: {notices:?}");
        tokio::time::sleep(PASS).await;
    };
    assert!(warning.stops && !warning.early, "{warning:?}");
    assert!(warning.stops_at_ms - now_ms() <= 61_000, "warned a minute ahead at most: {warning:?}");
    let notices = lab.sessions.idle_notices().await.unwrap();
    assert!(!notices.contains_key(&running.id), "a kernel running code is activity");
    assert!(!notices.contains_key(&training.id), "a busy slice is activity");

    // The student presses "Keep it running"; the portal restarts during the warning.
    lab.sessions.keep_running(&lab.sessions.session(&kept.id).await.unwrap(), "kim").await.unwrap();
    let restarted = Sessions::new(lab.store.clone(), lab.gpus.clone() as Arc<dyn GpuBackend>, lab.engine.clone(), lab.config.clone());
    let after_restart = restarted.idle_notices().await.unwrap();
    assert_eq!(after_restart.get(&idle.id), Some(&warning), "the deadline survives a restart");
    assert!(!after_restart.contains_key(&kept.id), "kept running: no warning");

    // The warned deadline passes: the idle notebook stops with the reason, nothing else.
    let ended = loop {
        pass(&restarted).await;
        let s = restarted.session(&idle.id).await.unwrap();
        if s.state.is_final() {
            break s;
        }
        assert!(now_ms() < warning.stops_at_ms + 30_000, "not stopped 30 s past its deadline");
        tokio::time::sleep(PASS).await;
    };
    assert!(ended.ended_at_ms.unwrap() >= warning.stops_at_ms, "never before the deadline it was warned of");
    assert_eq!(ended.reason, "idle: no activity for 2 min");
    for other in [&running, &kept, &training] {
        assert_eq!(restarted.session(&other.id).await.unwrap().state, Ready, "{} was stopped", other.username);
    }
    // A portal that was down across a deadline gives the whole warning lead again.
    let missed = IdleRow { last_active_at: now_ms() - 600_000, stops_at: Some(now_ms() - 60_000), early: false, stops: true };
    lab.store.save_idle(&kept.id, &missed).await.unwrap();
    let after_outage = Sessions::new(lab.store.clone(), lab.gpus.clone() as Arc<dyn GpuBackend>, lab.engine.clone(), lab.config.clone());
    pass(&after_outage).await;
    assert_eq!(after_outage.session(&kept.id).await.unwrap().state, Ready, "stopped with no time to answer");
    let renewed = after_outage.idle_notice(&kept.id).await.unwrap().expect("warned again");
    assert!(renewed.stops_at_ms >= now_ms() + 50_000, "{renewed:?}");
    let usage = lab.store.usage_rows().await.unwrap();
    let row = usage.iter().find(|u| u.session_id == idle.id).unwrap();
    assert!(row.end_reason.as_deref().unwrap_or_default().starts_with("idle"), "{row:?}");
    assert!(lab.gpus.instances(0).unwrap().len() == 3, "its slice is given back");
    lab.clean_up().await;
}

async fn with_students_waiting_an_idle_notebook_stops_early_and_the_first_in_line_starts(store: Store) {
    let lab = jupyter_lab(store, "30", "1").await;
    let idle = notebook(&lab, "ida", "7g.80gb").await;
    let waiter = lab.student("wes").await;
    let mut claim = lab.job(waiter, &["sleep", "600"]);
    claim.profile = "7g.80gb".into();
    let waiting = lab.sessions.claim(claim).await.unwrap();
    assert_eq!(waiting.state, Queued);

    let began = Instant::now();
    let ended = loop {
        pass(&lab.sessions).await;
        let notices = lab.sessions.idle_notices().await.unwrap();
        if let Some(w) = notices.get(&idle.id) {
            assert!(w.early, "the warning says it comes early: {w:?}");
        }
        let s = lab.sessions.session(&idle.id).await.unwrap();
        if s.state.is_final() {
            break s;
        }
        assert!(began.elapsed() < Duration::from_secs(200), "an idle notebook holds a slice others wait for");
        tokio::time::sleep(PASS).await;
    };
    assert!(ended.reason.contains("while students waited for a 7g.80gb slice"), "{}", ended.reason);
    lab.until(&waiting.id, &[Ready], START).await;
    lab.clean_up().await;
}

async fn a_job_without_gpu_activity_is_reported_and_keeps_running(store: Store) {
    let lab = jupyter_lab_with(store, "2", "off", "1", "report").await;
    let user = lab.student("jo").await;
    let job = lab.sessions.claim(lab.job(user, &["sleep", "600"])).await.unwrap();
    let job = lab.until(&job.id, &[Ready], START).await;
    let reported = loop {
        pass(&lab.sessions).await;
        if let Some(notice) = lab.sessions.idle_notices().await.unwrap().get(&job.id) {
            break *notice;
        }
        tokio::time::sleep(PASS).await;
    };
    assert!(!reported.stops, "the course only reports idle jobs: {reported:?}");
    // Past the reported moment it still runs.
    while now_ms() < reported.stops_at_ms + 2 * PASS.as_millis() as i64 {
        pass(&lab.sessions).await;
        tokio::time::sleep(PASS).await;
    }
    assert_eq!(lab.sessions.session(&job.id).await.unwrap().state, Ready);
    lab.clean_up().await;
}

/// A job on MIG slices whose activity the GPUs report per instance (`Some(percent)`) or not
/// at all (`None`); the course stops jobs idle for a minute. Returns the job's state after
/// the limit and warning have passed.
async fn a_job_on_mig_slices(store: Store, instance_busy: Option<u32>) -> GpuSession {
    let lab = jupyter_lab_with(store.clone(), "off", "off", "1", "stop").await;
    let gpus = lab::faulty_gpus::FaultyGpus::over(lab.gpus.clone());
    gpus.as_nvml_with_instance_busy(instance_busy);
    let sessions = Sessions::new(store, gpus, lab.engine.clone(), lab.config.clone());
    let user = lab.student("mig-job").await;
    let job = sessions.claim(lab.job(user, &["sleep", "600"])).await.unwrap();
    let until = Instant::now() + START;
    while sessions.session(&job.id).await.unwrap().state != Ready {
        assert!(Instant::now() < until, "the job never ran");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let deadline = now_ms() + 150_000;
    while now_ms() < deadline && !sessions.session(&job.id).await.unwrap().state.is_final() {
        pass(&sessions).await;
        tokio::time::sleep(PASS).await;
    }
    let after = sessions.session(&job.id).await.unwrap();
    if !after.state.is_final() {
        assert!(sessions.idle_notices().await.unwrap().get(&job.id).is_none(), "no warning either");
        sessions.stop(&job.id, "done").await.unwrap();
    }
    lab.clean_up().await;
    after
}

/// Where the GPUs give no per-slice activity (MIG without GPM), a job is never judged idle:
/// no signal is unknown, not idle. Where they do, an idle slice is what stops it.
async fn a_job_is_judged_idle_only_on_a_signal_the_gpu_gives(store: Store, other: Store) {
    let (unknown, idle) = futures_util::future::join(a_job_on_mig_slices(store, None), a_job_on_mig_slices(other, Some(0))).await;
    assert_eq!(unknown.state, Ready, "no signal, no stop: {}", unknown.reason);
    assert!(idle.state.is_final() && idle.reason.contains("idle"), "{:?}: {}", idle.state, idle.reason);
}

fn now_ms() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64
}

/// Both cases on both databases at once: each waits minutes of idle time on a real clock.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn idle_culling_on_both_databases() {
    let (a, b) = (common::sqlite().await, common::sqlite().await);
    let e = common::sqlite().await;
    let mut runs: Vec<std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>> = vec![
        Box::pin(idle_notebooks_are_warned_then_stopped_and_active_ones_are_not(a.store.clone())),
        Box::pin(with_students_waiting_an_idle_notebook_stops_early_and_the_first_in_line_starts(b.store.clone())),
        Box::pin(a_job_without_gpu_activity_is_reported_and_keeps_running(e.store.clone())),
    ];
    let (f, g) = (common::sqlite().await, common::sqlite().await);
    runs.push(Box::pin(a_job_is_judged_idle_only_on_a_signal_the_gpu_gives(f.store.clone(), g.store.clone())));
    let (c, d) = (common::postgres().await, common::postgres().await);
    if let (Some(c), Some(d)) = (&c, &d) {
        runs.push(Box::pin(idle_notebooks_are_warned_then_stopped_and_active_ones_are_not(c.store.clone())));
        runs.push(Box::pin(with_students_waiting_an_idle_notebook_stops_early_and_the_first_in_line_starts(d.store.clone())));
    }
    futures_util::future::join_all(runs).await;
}

async fn a_keep_written_during_a_pass_wins_and_one_pass_writes_at_a_time(store: Store) {
    let read = IdleRow { last_active_at: 1_000, stops_at: Some(61_000), early: false, stops: true };
    assert!(store.save_idle_if_unchanged("s-a", None, &read).await.unwrap());
    assert!(!store.save_idle_if_unchanged("s-a", None, &read).await.unwrap(), "a second first write loses");
    // The student keeps it running after a pass read `read`; the pass cannot write its stop.
    let kept = IdleRow { last_active_at: 50_000, stops_at: None, early: false, stops: true };
    store.save_idle("s-a", &kept).await.unwrap();
    assert!(!store.save_idle_if_unchanged("s-a", Some(read), &read).await.unwrap());
    assert_eq!(store.idle_rows().await.unwrap()["s-a"], kept);
    // Eight passes (two portals, say) decide from the same reading: one writes.
    let tries = (0..8).map(|i| {
        let store = store.clone();
        let row = IdleRow { stops_at: Some(110_000 + i), ..kept };
        async move { store.save_idle_if_unchanged("s-a", Some(kept), &row).await.unwrap() }
    });
    let wrote = futures_util::future::join_all(tries).await.into_iter().filter(|w| *w).count();
    assert_eq!(wrote, 1);
    assert_ne!(store.idle_rows().await.unwrap()["s-a"], kept);
}

on_both_databases!(a_keep_written_during_a_pass_wins_and_one_pass_writes_at_a_time);
