//! A notebook session with the real offline JupyterLab image: ready only once JupyterLab's
//! status API answers with the session's token under the portal's base URL; the container
//! got the hardening and device settings; stop cleans everything up.
//! Needs `slicehub/jupyterlab:offline` (scripts/test.sh builds it with docker/offline/build.sh).


use crate::common;

use std::time::Duration;

use bollard::query_parameters::InspectContainerOptions;
use crate::lab::lab;
use slicehub_core::sessions::{ClaimRequest, SessionState, Sessions, Workload};

const JUPYTERLAB: &str = "slicehub/jupyterlab:offline";

/// A bare HTTP/1.1 GET, so JupyterLab is checked with none of the portal's code.
async fn get(address: &str, path: &str, token: Option<&str>) -> u16 {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
    let auth = token
        .map(|t| format!("Authorization: token {t}\r\n"))
        .unwrap_or_default();
    let request = format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{auth}Connection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = Vec::new();
    stream.read_to_end(&mut response).await.unwrap();
    let text = String::from_utf8_lossy(&response);
    text.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[tokio::test]
async fn a_notebook_is_ready_when_jupyterlab_answers_with_its_token() {
    let fresh = common::sqlite().await;
    let lab = lab(fresh.store.clone(), "1 x H100-80GB", |c| {
        c.sessions.default_image = JUPYTERLAB.to_string();
        c.sessions.memory_mib_per_memory_slice = 1024;
    })
    .await;
    let alice = lab.student("alice").await;
    let session = lab
        .sessions
        .claim(ClaimRequest {
            user_id: alice,
            course_id: lab.course_id,
            profile: "2g.20gb".into(),
            image: JUPYTERLAB.into(),
            workload: Workload::Notebook,
        })
        .await
        .unwrap();
    let ready = lab
        .until(&session.id, &[SessionState::Ready, SessionState::Failed], Duration::from_secs(120))
        .await;
    assert_eq!(ready.state, SessionState::Ready, "{} {}", ready.reason, ready.log_tail);
    let address = ready.notebook_address.clone().expect("JupyterLab's address on the session network");
    let port = address.as_str();
    let base = format!("/user/alice/{}/", session.id);
    assert_eq!(get(port, &format!("{base}api/status"), Some(&ready.token)).await, 200);
    assert_eq!(get(port, &format!("{base}api/status"), None).await, 403, "no token, no entry");
    assert_eq!(get(port, &format!("{base}api/status"), Some("wrong-token-wrong-token-wrong-tok")).await, 403);

    let client = lab.engine.client().await.unwrap();
    let inspect = client
        .inspect_container(ready.container.as_deref().unwrap(), None::<InspectContainerOptions>)
        .await
        .unwrap();
    let host = inspect.host_config.unwrap();
    assert_eq!(host.cap_drop, Some(vec!["ALL".to_string()]));
    assert_eq!(host.security_opt, Some(vec!["no-new-privileges".to_string()]));
    // 2g.20gb covers 2 compute and 2 memory slices: 2 x 2 CPUs (at most the host's), 2 x 1024 MiB.
    let host_cpus = i64::from(lab.engine.host().await.unwrap().cpus.unwrap());
    assert_eq!(host.nano_cpus, Some(4.min(host_cpus) * 1_000_000_000));
    assert_eq!(host.memory, Some(2 * 1024 * 1024 * 1024));
    assert!(host.port_bindings.unwrap_or_default().is_empty(), "nothing published on the host");
    let config = inspect.config.unwrap();
    assert_eq!(config.user.as_deref(), Some("1000:100"));
    let env = config.env.unwrap();
    let mig = ready.mig_uuid.clone().unwrap();
    assert!(env.contains(&format!("CUDA_VISIBLE_DEVICES={mig}")), "{env:?}");
    assert!(env.contains(&format!("NVIDIA_VISIBLE_DEVICES={mig}")));
    assert!(env.iter().all(|e| !e.contains(&ready.token)), "the token is in no variable");
    let labels = config.labels.unwrap();
    assert_eq!(labels["org.slicehub.session"], session.id);
    assert_eq!(labels["org.slicehub.user"], "alice");
    assert_eq!(labels["org.slicehub.placement"], ready.placement.as_ref().unwrap().label);
    assert!(host.device_requests.is_none(), "a simulated GPU requests no NVIDIA device");

    let steps: Vec<String> = lab
        .store
        .session_events(&session.id)
        .await
        .unwrap()
        .into_iter()
        .map(|e| format!("{}: {}", e.state.as_str(), e.detail))
        .collect();
    assert!(steps.last().unwrap().starts_with("ready: JupyterLab answers"), "{steps:?}");

    // A deploy cut the launch off just after the container started, before its address was
    // written: the restarted portal takes it up, and it is ready on the same address.
    lab.store
        .execute_admin(&format!("UPDATE gpu_sessions SET state = 'creating', notebook_address = NULL WHERE id = '{}'", session.id))
        .await
        .unwrap();
    let restarted = Sessions::new(lab.store.clone(), lab.gpus.clone(), lab.engine.clone(), lab.config.clone());
    restarted.recover_after_restart().await.unwrap();
    let again = lab.until(&session.id, &[SessionState::Ready, SessionState::Failed], Duration::from_secs(60)).await;
    assert_eq!(again.state, SessionState::Ready, "{}", again.reason);
    assert_eq!(again.notebook_address.as_deref(), Some(address.as_str()));

    let ended = restarted.stop(&session.id, "stopped by alice").await.unwrap();
    assert_eq!(ended.token, "", "an ended session's token is forgotten");
    assert!(lab.engine.status(ready.container.as_deref().unwrap()).await.unwrap().is_none());
    assert_eq!(lab.instance_count(), 0);
}


/// A notebook that queued for longer than the course's time limit is not stopped "at the
/// time limit" while it starts: the limit counts from ready.
#[tokio::test]
async fn the_time_limit_counts_from_ready_not_from_the_claim() {
    let fresh = common::sqlite().await;
    let lab = lab(fresh.store.clone(), "1 x H100-80GB", |c| {
        c.sessions.default_image = JUPYTERLAB.to_string();
        c.sessions.memory_mib_per_memory_slice = 1024;
    })
    .await;
    let dana = lab.student("dana").await;
    let session = lab
        .sessions
        .claim(ClaimRequest {
            user_id: dana,
            course_id: lab.course_id,
            profile: "1g.10gb".into(),
            image: JUPYTERLAB.into(),
            workload: Workload::Notebook,
        })
        .await
        .unwrap();
    // As if it had waited two hours in the queue under a 60-minute limit.
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    lab.store
        .execute_admin(&format!(
            "UPDATE gpu_sessions SET requested_at = {}, deadline_at = {} WHERE id = '{}'",
            now - 7_200_000,
            now - 3_600_000,
            session.id
        ))
        .await
        .unwrap();
    let until = std::time::Instant::now() + Duration::from_secs(120);
    let ready = loop {
        lab.sessions.reconcile().await.unwrap();
        let now = lab.sessions.session(&session.id).await.unwrap();
        match now.state {
            SessionState::Ready => break now,
            s if s.is_final() => panic!("stopped before it was ever usable: {}", now.reason),
            _ => {}
        }
        assert!(std::time::Instant::now() < until, "not ready");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(ready.deadline_at_ms - ready.ready_at_ms.unwrap(), 3_600_000, "60 minutes from ready");
    lab.sessions.reconcile().await.unwrap();
    assert_eq!(lab.sessions.session(&session.id).await.unwrap().state, SessionState::Ready);
    lab.sessions.stop(&session.id, "test over").await.unwrap();
}

/// Sends a file of `megabytes` to JupyterLab's contents API in one request: the server
/// holds a request's whole body, and its decoded text, in its own memory.
async fn upload_in_one_request(address: &str, path: &str, token: &str, megabytes: usize) {
    use tokio::io::AsyncWriteExt;
    let Ok(mut stream) = tokio::net::TcpStream::connect(address).await else { return };
    let (head, tail) = (r#"{"type":"file","format":"text","content":""#, r#""}"#);
    let length = head.len() + megabytes * 1024 * 1024 + tail.len();
    let request = format!(
        "PUT {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: token {token}\r\n\
         Content-Type: application/json\r\nContent-Length: {length}\r\nConnection: close\r\n\r\n{head}"
    );
    if stream.write_all(request.as_bytes()).await.is_err() {
        return;
    }
    let megabyte = vec![b'a'; 1024 * 1024];
    for _ in 0..megabytes {
        // The server dies in the middle: the connection is reset.
        if stream.write_all(&megabyte).await.is_err() {
            return;
        }
    }
    let _ = stream.write_all(tail.as_bytes()).await;
}

/// JupyterLab's server itself (not a kernel) outgrows the container's memory limit: the
/// kernel kills it, the student reads that it ran out of memory, the slice is free at once.
#[tokio::test]
async fn a_notebook_server_out_of_memory_says_so_and_frees_its_slice() {
    let fresh = common::sqlite().await;
    let lab = lab(fresh.store.clone(), "1 x H100-80GB", |c| {
        c.sessions.default_image = JUPYTERLAB.to_string();
        c.sessions.memory_mib_per_memory_slice = 256;
    })
    .await;
    // As in the serving portal: container deaths are followed from the engine's events.
    let _tasks = lab.sessions.start_background().await;
    let olga = lab.student("olga").await;
    let session = lab
        .sessions
        .claim(ClaimRequest {
            user_id: olga,
            course_id: lab.course_id,
            profile: "1g.10gb".into(),
            image: JUPYTERLAB.into(),
            workload: Workload::Notebook,
        })
        .await
        .unwrap();
    let ready = lab
        .until(&session.id, &[SessionState::Ready, SessionState::Failed], Duration::from_secs(120))
        .await;
    assert_eq!(ready.state, SessionState::Ready, "{} {}", ready.reason, ready.log_tail);
    let address = ready.notebook_address.clone().unwrap();
    // Four at once, each under the server's body limit (Tornado's 100 MB).
    let uploads = (0..4).map(|i| {
        let path = format!("/user/olga/{}/api/contents/big{i}.txt", session.id);
        let (address, token) = (address.clone(), ready.token.clone());
        async move { upload_in_one_request(&address, &path, &token, 90).await }
    });
    futures_util::future::join_all(uploads).await;
    let done = lab
        .until(&session.id, &[SessionState::Ended, SessionState::Failed], Duration::from_secs(60))
        .await;
    assert_eq!(done.state, SessionState::Failed, "{}", done.reason);
    assert!(
        done.reason.starts_with("out of memory: the notebook server"),
        "{}",
        done.reason
    );
    let freed = std::time::Instant::now() + Duration::from_secs(5);
    while lab.store.count_slice_holds().await.unwrap() > 0 {
        assert!(std::time::Instant::now() < freed, "the slice is still held 5 s later");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(lab.instance_count(), 0);
    lab.clean_up().await;
}
