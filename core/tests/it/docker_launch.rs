//! The container spec on the real Docker engine: what a session's container actually got.
//! Needs the `slicehub/busybox:offline` image (scripts/test.sh builds it with
//! docker/offline/busybox.sh).

use bollard::query_parameters::{InspectContainerOptions, RemoveVolumeOptions};
use slicehub_core::auth::token_sha256;
use slicehub_core::runtime::spec::{ContainerSpec, LaunchRequest, Limits, Workload};
use slicehub_core::runtime::SessionNetwork;
use slicehub_docker::Engine;

const IMAGE: &str = "slicehub/busybox:offline";
const INSTANCE: &str = "i-docker-launch-test";

fn network() -> SessionNetwork {
    SessionNetwork::of(INSTANCE, true)
}

fn request(session_id: &str, user: &str, workload: Workload) -> LaunchRequest {
    LaunchRequest {
        instance: INSTANCE.to_string(),
        session_id: session_id.to_string(),
        username: user.to_string(),
        course: "CS-101".to_string(),
        gpu_uuid: "GPU-simulated-00-h100-80gb".to_string(),
        placement: "1g.10gb@3".to_string(),
        mig_uuid: "MIG-simulated-00-h100-80gb-1-0".to_string(),
        image: IMAGE.to_string(),
        workload,
        limits: Limits {
            cpus: 1.5,
            memory_mib: 256,
            pids: 128,
        },
        nvidia_runtime: false,
        network: network().name,
        share: None,
    }
}

fn unique(prefix: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    format!("{prefix}-{}-{nanos}", std::process::id())
}

async fn engine_with_image() -> Engine {
    let engine = Engine::new("");
    let client = engine
        .client()
        .await
        .expect("the Docker engine runs on this machine");
    assert!(
        client.inspect_image(IMAGE).await.is_ok(),
        "{IMAGE} is missing: run docker/offline/busybox.sh (scripts/test.sh does)"
    );
    engine.ensure_network(INSTANCE, &network()).await.unwrap();
    engine
}

/// Creates (and with `start`, starts) the container, inspects it, then removes it and its
/// home volume: what Docker made of the spec.
async fn made_by_docker(
    engine: &Engine,
    spec: &ContainerSpec,
    start: bool,
) -> bollard::models::ContainerInspectResponse {
    engine.create(spec).await.unwrap();
    if start {
        engine.start(&spec.name).await.unwrap();
    }
    let client = engine.client().await.unwrap();
    let got = client
        .inspect_container(&spec.name, None::<InspectContainerOptions>)
        .await
        .unwrap();
    engine.remove(&spec.name).await.unwrap();
    let gone = client
        .inspect_container(&spec.name, None::<InspectContainerOptions>)
        .await;
    assert!(gone.is_err(), "removed");
    engine
        .remove(&spec.name)
        .await
        .expect("removing what is gone is fine");
    let _ = client
        .remove_volume(&spec.home_volume, None::<RemoveVolumeOptions>)
        .await;
    got
}

#[tokio::test]
async fn a_job_container_gets_exactly_the_spec() {
    let engine = engine_with_image().await;
    let id = unique("t-job");
    let user = unique("tester");
    let argv = vec![
        "sleep".to_string(),
        "30".to_string(),
        "; rm -rf / #".to_string(),
    ];
    let spec =
        ContainerSpec::for_session(&request(&id, &user, Workload::Job { argv: argv.clone() }))
            .unwrap();
    let got = made_by_docker(&engine, &spec, false).await;

    let config = got.config.unwrap();
    assert_eq!(config.user.as_deref(), Some("1000:100"));
    assert_eq!(config.cmd.unwrap(), argv, "argv as given, no shell");
    let env = config.env.unwrap();
    assert!(
        env.contains(&"NVIDIA_VISIBLE_DEVICES=MIG-simulated-00-h100-80gb-1-0".to_string()),
        "{env:?}"
    );
    assert!(
        env.contains(&"CUDA_VISIBLE_DEVICES=MIG-simulated-00-h100-80gb-1-0".to_string()),
        "{env:?}"
    );
    let labels = config.labels.unwrap();
    assert_eq!(labels["org.slicehub.managed"], "true");
    assert_eq!(labels["org.slicehub.session"], id);
    assert_eq!(labels["org.slicehub.user"], user);
    assert_eq!(labels["org.slicehub.placement"], "1g.10gb@3");

    let host = got.host_config.unwrap();
    assert_eq!(host.cap_drop.unwrap(), ["ALL"]);
    assert_eq!(host.security_opt.unwrap(), ["no-new-privileges"]);
    assert_eq!(host.pids_limit, Some(128));
    assert_eq!(host.nano_cpus, Some(1_500_000_000));
    assert_eq!(host.memory, Some(256 << 20));
    assert_eq!(host.memory_swap, Some(256 << 20), "no swap beyond the memory limit");
    assert_eq!(host.shm_size, Some(128 << 20), "half the memory for /dev/shm");
    assert_eq!(host.readonly_rootfs, Some(true), "the image's layer takes no writes");
    let tmpfs = host.tmpfs.unwrap_or_default();
    assert!(tmpfs["/tmp"].contains(&format!("size={}", 64 << 20)), "{tmpfs:?}");
    let logs = host.log_config.unwrap();
    assert_eq!(logs.typ.as_deref(), Some("json-file"));
    assert_eq!(logs.config.unwrap()["max-size"], "10m");
    assert!(
        host.device_requests.unwrap_or_default().is_empty(),
        "a simulated GPU asks for no device"
    );
    assert!(
        host.port_bindings.unwrap_or_default().is_empty(),
        "a job publishes nothing"
    );
    let mounts = host.mounts.unwrap();
    assert_eq!(mounts.len(), 1);
    assert_eq!(mounts[0].source.as_deref(), Some(spec.home_volume.as_str()));
    assert_eq!(mounts[0].target.as_deref(), Some("/home/jovyan"));
    assert!(
        host.binds.unwrap_or_default().is_empty(),
        "never a host path, never the Docker socket"
    );
}

#[tokio::test]
async fn a_notebook_publishes_nothing_joins_the_session_network_and_holds_only_its_tokens_hash() {
    let engine = engine_with_image().await;
    let id = unique("t-nb");
    let user = unique("tester");
    let workload = Workload::Notebook {
        token: "x".repeat(40),
        base_url: format!("/user/{user}/{id}/"),
    };
    let mut spec = ContainerSpec::for_session(&request(&id, &user, workload)).unwrap();
    // busybox stands in for JupyterLab: keep the container alive to look at it running.
    spec.cmd = vec!["sleep".to_string(), "30".to_string()];
    let got = made_by_docker(&engine, &spec, true).await;

    assert_eq!(got.state.unwrap().running, Some(true));
    let settings = got.network_settings.unwrap();
    let published = settings.ports.unwrap_or_default();
    assert!(
        published.values().all(|b| b.as_ref().is_none_or(|b| b.is_empty())),
        "nothing published on the host: {published:?}"
    );
    let networks = settings.networks.unwrap();
    assert_eq!(networks.keys().collect::<Vec<_>>(), [&network().name], "only the session network");
    let host = got.host_config.unwrap();
    assert_eq!(host.network_mode.as_deref(), Some(network().name.as_str()));

    let env = got.config.unwrap().env.unwrap();
    let token = "x".repeat(40);
    assert!(env.iter().all(|e| !e.contains(&token)), "the token is in no variable: {env:?}");
    assert!(env.contains(&format!("SLICEHUB_TOKEN_SHA256={}", token_sha256(&token))));
    assert!(env.iter().all(|e| !e.starts_with("JUPYTER_TOKEN")), "no token variable: {env:?}");
    assert!(env.contains(&format!("SLICEHUB_BASE_URL=/user/{user}/{id}/")));
    let mounts = host.mounts.unwrap_or_default();
    assert_eq!(
        mounts.iter().map(|m| m.target.as_deref().unwrap_or_default()).collect::<Vec<_>>(),
        ["/home/jovyan"],
        "nothing but the home is mounted: no volume holds a token"
    );
}

/// A share of an MPS GPU as Docker made it: the GPU by UUID, the caps as variables, the
/// GPU's MPS volume beside the home, and on real hardware the daemon's IPC namespace.
/// This engine has no NVIDIA runtime, so nothing here is started: the engine checks a
/// device request and an IPC namespace to join only at start.
#[tokio::test]
async fn an_mps_share_gets_its_gpu_its_caps_and_the_daemon_of_its_gpu() {
    use slicehub_core::runtime::mps::{MpsCaps, MpsDaemon, MPS_DIR};
    use slicehub_core::runtime::spec::ShareRequest;

    let engine = engine_with_image().await;
    let client = engine.client().await.unwrap();
    let gpu = format!("GPU-{}", unique("share"));
    let caps = MpsCaps { memory_mib: 5758, compute_percent: 25, shares: 4 };
    let daemon = MpsDaemon::for_gpu(INSTANCE, &gpu, IMAGE, caps, 64 << 20);
    let started = engine.ensure_mps_daemon(&daemon).await;
    assert!(started.is_err(), "no NVIDIA runtime here to start it: {started:?}");
    let made = client.inspect_container(&daemon.name, None::<InspectContainerOptions>).await.unwrap();
    let daemon_id = made.id.clone().unwrap();
    let host = made.host_config.unwrap();
    assert_eq!(host.ipc_mode.as_deref(), Some("shareable"));
    assert_eq!(host.shm_size, Some(4 * (64 << 20)), "each share's /dev/shm, shared through the daemon");
    assert_eq!(host.network_mode.as_deref(), Some("none"), "the daemon reaches no network");
    let device = &host.device_requests.unwrap()[0];
    assert_eq!(device.device_ids.as_deref(), Some(&[gpu.clone()][..]), "exactly its GPU");
    let config = made.config.unwrap();
    assert_eq!(config.entrypoint.unwrap_or_default(), ["sh", "-c"], "the image's own entry point does not run");
    let env = config.env.unwrap_or_default();
    assert!(env.contains(&"CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=0=5758M".to_string()), "the daemon caps every client: {env:?}");
    assert!(env.contains(&"CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=25".to_string()), "{env:?}");
    let labels = config.labels.unwrap();
    assert_eq!(labels["org.slicehub.role"], "mps-daemon");
    let listed = engine.managed_containers(INSTANCE).await.unwrap();
    assert!(listed.iter().any(|c| c.name == daemon.name && c.daemon && c.session_id.is_none()));

    let user = unique("sharer");
    let mut request = request(&unique("t-share"), &user, Workload::Job { argv: vec!["sleep".into(), "30".into()] });
    request.gpu_uuid = gpu.clone();
    request.mig_uuid = gpu.clone();
    request.nvidia_runtime = true;
    request.share = Some(ShareRequest::Mps(caps));
    let spec = ContainerSpec::for_session(&request).unwrap();
    let got = made_by_docker(&engine, &spec, false).await;
    let env = got.config.unwrap().env.unwrap();
    for wanted in [
        format!("NVIDIA_VISIBLE_DEVICES={gpu}"),
        "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=0=5758M".to_string(),
        "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=25".to_string(),
        "CUDA_MPS_PIPE_DIRECTORY=/run/nvidia-mps/pipe".to_string(),
    ] {
        assert!(env.contains(&wanted), "{wanted} in {env:?}");
    }
    let host = got.host_config.unwrap();
    assert_eq!(host.ipc_mode, Some(format!("container:{daemon_id}")), "the engine names the daemon by id");
    assert_eq!(host.device_requests.unwrap()[0].device_ids.as_deref(), Some(&[gpu.clone()][..]));
    let mounts = host.mounts.unwrap();
    let targets: Vec<_> = mounts.iter().map(|m| (m.source.clone().unwrap(), m.target.clone().unwrap())).collect();
    assert_eq!(targets, [(spec.home_volume.clone(), "/home/jovyan".to_string()), (daemon.volume.clone(), MPS_DIR.to_string())]);
    assert_eq!(host.cap_drop.unwrap(), ["ALL"], "a share is hardened as any session");
    assert_eq!(mounts[1].read_only, Some(true), "the daemon's sockets are not the session's to replace");

    // A student on a share tries to put a socket of their own where the GPU's other
    // sessions look for the daemon's.
    request.session_id = unique("t-share-attack");
    request.nvidia_runtime = false;
    request.workload = Workload::Job {
        argv: vec!["sh".into(), "-c".into(), "mkdir -p /run/nvidia-mps/pipe; touch /run/nvidia-mps/control; ls -a /run/nvidia-mps".into()],
    };
    let attack = ContainerSpec::for_session(&request).unwrap();
    engine.create(&attack).await.unwrap();
    engine.start(&attack.name).await.unwrap();
    assert_eq!(engine.wait_exit(&attack.name).await.unwrap(), 0, "ls ran");
    let out = engine.logs_tail(&attack.name, 20).await.unwrap();
    engine.remove(&attack.name).await.unwrap();
    let _ = client.remove_volume(&attack.home_volume, None::<RemoveVolumeOptions>).await;
    assert!(out.contains("Read-only file system"), "{out}");
    assert!(!out.lines().any(|l| l.trim() == "control" || l.trim() == "pipe"), "nothing was put there: {out}");

    engine.remove(&daemon.name).await.unwrap();
    let _ = client.remove_volume(&daemon.volume, None::<RemoveVolumeOptions>).await;
}
