//! The activity and memory of a session on a GPU split into shares are its own
//! container's GPU processes', found through the real Docker engine's cgroups: two jobs
//! share a simulated L4 passing for NVML, whose driver lists each job's main process. A
//! time-sliced share reads its processes' activity; an MPS share reads their memory and
//! no activity (the MPS server runs the kernels), so it is never judged idle.
//! Needs `slicehub/busybox:offline`.

use std::sync::Arc;
use std::time::Duration;

use bollard::query_parameters::InspectContainerOptions;
use slicehub_core::config::parse_shares;
use slicehub_core::gpu::{GpuBackend, GpuProcess, SharedGpus};
use slicehub_core::sessions::{ClaimRequest, SessionState::*, Sessions, Workload};

use crate::common;
use crate::lab::{self, faulty_gpus::FaultyGpus, Lab};

/// Two jobs on the two shares of an L4 split `how`, the driver listing the first job's
/// process 80% busy with 1000 MiB and the second's with 500 MiB and no kernels run:
/// what the sampler reads for each, (busy, memory).
async fn two_jobs_on_shares(lab: &Lab, how: &str) -> [(Option<u32>, Option<u64>); 2] {
    let faulty = FaultyGpus::over(lab.gpus.clone());
    let shared: Arc<dyn GpuBackend> = SharedGpus::wrap(faulty.clone(), &parse_shares(how).unwrap());
    let sessions = Sessions::new(lab.store.clone(), shared, lab.engine.clone(), lab.config.clone());
    let mut pids = Vec::new();
    let mut ids = Vec::new();
    for name in ["ana", "bo"] {
        let user = lab.student(&format!("{name}-{}", how.len())).await;
        let claim = ClaimRequest {
            user_id: user,
            course_id: lab.course_id,
            profile: "l4.24gb.1of2".into(),
            image: lab::BUSYBOX.into(),
            workload: Workload::Job(vec!["sleep".into(), "600".into()]),
        };
        let job = sessions.claim(claim).await.unwrap();
        let running = wait_ready(&sessions, &job.id).await;
        let inspect = lab
            .engine
            .client()
            .await
            .unwrap()
            .inspect_container(running.container.as_deref().unwrap(), None::<InspectContainerOptions>)
            .await
            .unwrap();
        pids.push(inspect.state.unwrap().pid.unwrap() as u32);
        ids.push(job.id);
    }
    faulty.as_nvml_with_processes(vec![
        GpuProcess { pid: pids[0], memory_mib: Some(1000), busy_percent: Some(80) },
        GpuProcess { pid: pids[1], memory_mib: Some(500), busy_percent: None },
        // A process of no container (the MPS server, say) is no session's.
        GpuProcess { pid: std::process::id(), memory_mib: Some(66), busy_percent: Some(99) },
    ]);
    sessions.sample_slices().await.unwrap();
    let read = |id: &str| sessions.slice_samples(id).last().map(|s| (s.busy_percent, s.memory_mib)).unwrap();
    let out = [read(&ids[0]), read(&ids[1])];
    for id in &ids {
        sessions.stop(id, "test over").await.unwrap();
    }
    out
}

async fn wait_ready(sessions: &Sessions, id: &str) -> slicehub_core::sessions::GpuSession {
    let until = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        let s = sessions.session(id).await.unwrap();
        if s.state == Ready {
            return s;
        }
        assert!(!s.state.is_final() && std::time::Instant::now() < until, "{:?}: {}", s.state, s.reason);
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_shares_activity_and_memory_are_its_own_containers_processes() {
    let db = common::sqlite().await;
    let lab = lab::lab(db.store.clone(), "1 x L4-24GB", |c| {
        c.sessions.max_compute_slices = 7;
        c.sessions.max_per_user = 2;
    })
    .await;
    let [first, second] = two_jobs_on_shares(&lab, "0 = 2 time-sliced-no-isolation").await;
    assert_eq!(first, (Some(80), Some(1000)), "the busy job's own process");
    assert_eq!(second, (Some(0), Some(500)), "a process that ran no kernels is idle, not another's 80%");

    let [first, second] = two_jobs_on_shares(&lab, "0 = 2 mps").await;
    assert_eq!(first, (None, Some(1000)), "under MPS a client's memory, not its activity");
    assert_eq!(second, (None, Some(500)));
    lab.clean_up().await;
}
