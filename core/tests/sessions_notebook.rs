//! A notebook session with the real offline JupyterLab image: ready only once JupyterLab's
//! status API answers with the session's token under the portal's base URL; the container
//! got the hardening and device settings; stop cleans everything up.
//! Needs `slicehub/jupyterlab:offline` (scripts/test.sh builds it with docker/offline/build.sh).

mod common;
mod lab;

use std::time::Duration;

use bollard::query_parameters::InspectContainerOptions;
use lab::lab;
use slicehub_core::sessions::{ClaimRequest, SessionState, Workload};

const JUPYTERLAB: &str = "slicehub/jupyterlab:offline";

/// A bare HTTP/1.1 GET, so JupyterLab is checked with none of the portal's code.
async fn get(port: u16, path: &str, token: Option<&str>) -> u16 {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port)).await.unwrap();
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
        c.sessions_default_image = JUPYTERLAB.to_string();
        c.sessions_memory_mib_per_memory_slice = 1024;
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
    let port = ready.host_port.expect("JupyterLab's port is published");
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
    let bindings = host.port_bindings.unwrap();
    let binding = &bindings["8888/tcp"].as_ref().unwrap()[0];
    assert_eq!(binding.host_ip.as_deref(), Some("127.0.0.1"));
    let config = inspect.config.unwrap();
    assert_eq!(config.user.as_deref(), Some("1000:100"));
    let env = config.env.unwrap();
    let mig = ready.mig_uuid.clone().unwrap();
    assert!(env.contains(&format!("CUDA_VISIBLE_DEVICES={mig}")), "{env:?}");
    assert!(env.contains(&format!("NVIDIA_VISIBLE_DEVICES={mig}")));
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

    lab.sessions.stop(&session.id, "stopped by alice").await.unwrap();
    assert!(lab.engine.status(ready.container.as_deref().unwrap()).await.unwrap().is_none());
    assert_eq!(lab.instance_count(), 0);
}

