//! Tenants on one Docker engine, tried from inside real containers: a session cannot open
//! connections to another session's container, to the portal host's services, or (by
//! rule) to link-local addresses or the LAN's private ranges beyond the listed blocks; a course without internet runs on an internal network;
//! two portals on one engine with the same usernames share no volume, network or
//! container; one student's two courses share no home; a session writes only its home and
//! a sized /tmp. Positive controls show each refused connection would otherwise succeed.
//! Needs the Docker engine, root (iptables) and `slicehub/busybox:offline`.


// A binary of its own: these tests must not share the host with other modules' portals
// (see ONE_AT_A_TIME), and cargo runs test binaries one after another.
#[macro_use]
#[path = "it/common/mod.rs"]
mod common;
#[path = "it/lab/mod.rs"]
mod lab;


use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use bollard::models::{ContainerCreateBody, HostConfig};
use bollard::query_parameters::{
    CreateContainerOptionsBuilder, InspectNetworkOptions, RemoveContainerOptionsBuilder,
    WaitContainerOptions,
};
use futures_util::StreamExt;
use crate::lab::{host_service, lab, Lab, BUSYBOX};
use slicehub_core::runtime::{firewall, SessionNetwork};
use slicehub_core::sessions::SessionState;
use slicehub_core::courses::CoursePolicy;
use slicehub_core::CourseId;
use slicehub_core::UserId;

const LONG: Duration = Duration::from_secs(60);

/// The tests here run one at a time: each starts a portal whose first launch sweeps the
/// host's firewall rules of session bridges that are gone, and with several such sweeps
/// and launches interleaved on one host a bridge's link-local rule was once seen missing
/// (metadata reached) in a full run. Not yet explained.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// A shell line that tries each `ip port` and prints `REACHED name` or `BLOCKED name`.
fn probes(targets: &[(&str, &str, u16)]) -> String {
    targets
        .iter()
        .map(|(name, ip, port)| {
            format!("if nc -w 3 {ip} {port} </dev/null >/dev/null 2>&1; then echo REACHED-{name}; else echo BLOCKED-{name}; fi")
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// The host's address on a Docker network: its gateway (Docker's default bridge names
/// none in its IPAM config; there it is the subnet's first address).
async fn gateway_of(lab: &Lab, network: &str) -> String {
    let client = lab.engine.client().await.unwrap();
    let inspect = client.inspect_network(network, None::<InspectNetworkOptions>).await.unwrap();
    let config = inspect.ipam.unwrap().config.unwrap().remove(0);
    config.gateway.filter(|g| !g.is_empty()).unwrap_or_else(|| {
        let subnet = config.subnet.unwrap();
        let base: std::net::Ipv4Addr = subnet.split('/').next().unwrap().parse().unwrap();
        std::net::Ipv4Addr::from(u32::from(base) + 1).to_string()
    })
}

/// The output of `script` run in a plain container on Docker's default bridge, outside
/// every SliceHub rule: the control.
async fn outside_slicehub(lab: &Lab, script: &str) -> String {
    let client = lab.engine.client().await.unwrap();
    static CONTROLS: AtomicUsize = AtomicUsize::new(0);
    let name = format!("slicehub-control-{}-{}", std::process::id(), CONTROLS.fetch_add(1, Ordering::SeqCst));
    let options = CreateContainerOptionsBuilder::default().name(&name).build();
    client
        .create_container(
            Some(options),
            ContainerCreateBody {
                image: Some(BUSYBOX.to_string()),
                cmd: Some(vec!["sh".into(), "-c".into(), script.into()]),
                host_config: Some(HostConfig::default()),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    client.start_container(&name, None::<bollard::query_parameters::StartContainerOptions>).await.unwrap();
    let _ = client.wait_container(&name, None::<WaitContainerOptions>).next().await;
    let out = lab.engine.logs_tail(&name, 50).await.unwrap();
    let remove = RemoveContainerOptionsBuilder::default().force(true).build();
    client.remove_container(&name, Some(remove)).await.unwrap();
    out
}

async fn job_output(lab: &Lab, user: UserId, script: &str) -> String {
    job_output_in(lab, lab.course_id, user, script).await
}

async fn job_output_in(lab: &Lab, course_id: CourseId, user: UserId, script: &str) -> String {
    let mut claim = lab.job(user, &["sh", "-c", script]);
    claim.course_id = course_id;
    let job = lab.sessions.claim(claim).await.unwrap();
    let done = lab.until(&job.id, &[SessionState::Ended, SessionState::Failed], LONG).await;
    done.log_tail
}

#[tokio::test]
async fn a_session_reaches_neither_other_sessions_nor_the_host_nor_link_local() {
    let _alone = ONE_AT_A_TIME.lock().await;
    let fresh = common::sqlite().await;
    let lab = lab(fresh.store.clone(), "1 x H100-80GB", |_| {}).await;
    let (alice, bob) = (lab.student("iso-alice").await, lab.student("iso-bob").await);
    let instance = lab.sessions.instance_id().await.unwrap();
    let network = SessionNetwork::of(&instance, true);

    // Alice serves on 8888, as JupyterLab would.
    let server = lab
        .sessions
        .claim(lab.job(alice, &["sh", "-c", "while true; do echo hello | nc -l -p 8888; done"]))
        .await
        .unwrap();
    let server = lab.until(&server.id, &[SessionState::Ready], LONG).await;
    let container = server.container.clone().unwrap();
    let alice_ip = lab.engine.address_on(&container, &network.name).await.unwrap().unwrap();
    let gateway = gateway_of(&lab, &network.name).await;
    let (host_port, accepted) = host_service();

    // The portal host reaches Alice (the proxy's way in): her server does listen.
    let from_host = tokio::net::TcpStream::connect((alice_ip.as_str(), 8888)).await;
    assert!(from_host.is_ok(), "the host reaches a session container");
    drop(from_host);

    let script = probes(&[
        ("alice", &alice_ip, 8888),
        ("host", &gateway, host_port),
        ("metadata", "169.254.169.254", 80),
    ]);
    let out = job_output(&lab, bob, &script).await;
    for name in ["alice", "host", "metadata"] {
        assert!(out.contains(&format!("BLOCKED-{name}")), "from Bob's session: {out}");
    }
    assert_eq!(accepted.load(Ordering::SeqCst), 0, "the host service saw no connection");

    // Control: outside SliceHub's networks the same host service answers.
    let bridge_gateway = gateway_of(&lab, "bridge").await;
    let control = outside_slicehub(&lab, &probes(&[("host", &bridge_gateway, host_port)])).await;
    assert!(control.contains("REACHED-host"), "the control reaches the host service: {control}");

    // The rules behind it, on this host now.
    assert_eq!(firewall::missing(&[network.bridge.as_str()], &[]).unwrap(), Vec::<String>::new());

    // A firewall reload drops the host and metadata rules under the portal, just restarted
    // after a deploy (it made no network itself): its next reconcile pass puts them back,
    // in their order, and Bob is kept out again.
    let shared_rules = || {
        let out = std::process::Command::new("iptables").args(["-w", "-S", "DOCKER-USER"]).output().unwrap();
        String::from_utf8_lossy(&out.stdout).lines().filter(|l| l.contains(network.bridge.as_str())).map(str::to_string).collect::<Vec<_>>()
    };
    let in_order = shared_rules();
    for rule in [
        format!("INPUT -i {} -j {}", network.bridge, firewall::CHAIN),
        format!("DOCKER-USER -i {} -d {} -j DROP", network.bridge, firewall::LINK_LOCAL),
        // One from below the DNS exceptions: put back first, it would cut DNS off.
        format!("DOCKER-USER -i {} -d 10.0.0.0/8 -j DROP", network.bridge),
    ] {
        let words: Vec<&str> = rule.split(' ').collect();
        let out = std::process::Command::new("iptables").args([&["-w", "-D"], words.as_slice()].concat()).output().unwrap();
        assert!(out.status.success(), "{rule}: {}", String::from_utf8_lossy(&out.stderr));
    }
    assert_eq!(firewall::missing(&[network.bridge.as_str()], &[]).unwrap().len(), 3);
    let restarted = slicehub_core::sessions::Sessions::new(lab.store.clone(), lab.gpus.clone(), lab.engine.clone(), lab.config.clone());
    let report = restarted.reconcile().await.unwrap();
    assert_eq!(report.firewall_rules_restored, 3, "{report:?}");
    assert_eq!(firewall::missing(&[network.bridge.as_str()], &[]).unwrap(), Vec::<String>::new());
    assert_eq!(shared_rules(), in_order, "the bridge's rules are back in their order, once each");
    let chain = std::process::Command::new("iptables").args(["-w", "-S", firewall::CHAIN]).output().unwrap();
    let chain = String::from_utf8_lossy(&chain.stdout).lines().filter(|l| l.starts_with("-A ")).count();
    assert_eq!(chain, 2, "the isolation chain holds its two rules, not more");
    let seen = accepted.load(Ordering::SeqCst);
    let out = job_output(&lab, bob, &probes(&[("host", &gateway, host_port), ("metadata", "169.254.169.254", 80)])).await;
    assert!(out.contains("BLOCKED-host") && out.contains("BLOCKED-metadata"), "after the reload: {out}");
    assert_eq!(accepted.load(Ordering::SeqCst), seen, "the host service saw no connection from Bob");
    let client = lab.engine.client().await.unwrap();
    let inspect = client.inspect_network(&network.name, None::<InspectNetworkOptions>).await.unwrap();
    assert_eq!(inspect.enable_ipv6, Some(false), "no IPv6 route around the IPv4 rules");
    lab.clean_up().await;
}

/// A host of the campus LAN: a network namespace at 10.231.N.2 behind a veth pair from this
/// host, with a TCP service on `port` and one on 53 (a name server's); removed on drop.
struct LanHost {
    namespace: String,
    address: String,
    port: u16,
    service: std::process::Child,
}

impl LanHost {
    fn start(n: u8) -> LanHost {
        let namespace = format!("slh-lan-{}-{n}", std::process::id());
        let veth = format!("slhl{}{n}", std::process::id() % 100_000);
        let (near, address) = (format!("10.231.{n}.1"), format!("10.231.{n}.2"));
        let ip = |args: &[&str]| {
            let out = std::process::Command::new("ip").args(args).output().expect("ip runs");
            assert!(out.status.success(), "ip {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        };
        ip(&["netns", "add", &namespace]);
        ip(&["link", "add", &veth, "type", "veth", "peer", "name", "lan0", "netns", &namespace]);
        ip(&["addr", "add", &format!("{near}/24"), "dev", &veth]);
        ip(&["link", "set", &veth, "up"]);
        ip(&["-n", &namespace, "addr", "add", &format!("{address}/24"), "dev", "lan0"]);
        ip(&["-n", &namespace, "link", "set", "lan0", "up"]);
        ip(&["-n", &namespace, "route", "add", "default", "via", &near]);
        let port = 18_000 + u16::from(n);
        let serve = format!(
            "import socket, threading\ndef serve(port):\n    s = socket.socket()\n    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n    s.bind(('0.0.0.0', port))\n    s.listen()\n    while True:\n        c, _ = s.accept()\n        c.close()\nfor p in ({port}, 53):\n    threading.Thread(target=serve, args=(p,)).start()\n"
        );
        let service = std::process::Command::new("ip")
            .args(["netns", "exec", &namespace, "python3", "-c", &serve])
            .spawn()
            .expect("the LAN service starts");
        std::thread::sleep(Duration::from_millis(500));
        LanHost { namespace, address, port, service }
    }
}

impl Drop for LanHost {
    fn drop(&mut self) {
        let _ = self.service.kill();
        let _ = self.service.wait();
        let _ = std::process::Command::new("ip").args(["netns", "del", &self.namespace]).output();
    }
}

/// Sessions with internet reach no private address of the LAN, except the blocks the
/// administrator lists; the control (a plain container) reaches the same LAN host.
#[tokio::test]
async fn a_session_with_internet_reaches_no_lan_address_but_the_listed_ones() {
    let _alone = ONE_AT_A_TIME.lock().await;
    let lan = LanHost::start(7);
    let target = [("lan", lan.address.as_str(), lan.port)];
    let control = outside_slicehub_lab(&probes(&target)).await;
    assert!(control.contains("REACHED-lan"), "the control reaches the LAN host: {control}");

    let fresh = common::sqlite().await;
    let closed = lab(fresh.store.clone(), "1 x H100-80GB", |_| {}).await;
    let student = closed.student("lan-dora").await;
    let out = job_output(&closed, student, &probes(&[target[0], ("dns", lan.address.as_str(), 53)])).await;
    assert!(out.contains("BLOCKED-lan"), "a session reached the LAN: {out}");
    assert!(out.contains("REACHED-dns"), "name servers on the LAN still answer: {out}");
    let bridge = SessionNetwork::of(&closed.instance, true).bridge;
    assert_eq!(firewall::missing(&[bridge.as_str()], &[]).unwrap(), Vec::<String>::new());
    closed.clean_up().await;

    let mirror = vec!["10.231.7.0/24".to_string()];
    let fresh = common::sqlite().await;
    let listed = lab(fresh.store.clone(), "1 x H100-80GB", |c| c.sessions.reachable_private_ranges = mirror.clone()).await;
    let student = listed.student("lan-eve").await;
    let out = job_output(&listed, student, &probes(&target)).await;
    assert!(out.contains("REACHED-lan"), "the listed block stays reachable: {out}");
    let out = job_output(&listed, student, &probes(&[("metadata", "169.254.169.254", 80)])).await;
    assert!(out.contains("BLOCKED-metadata"), "{out}");
    // The administrator takes the block off the list: the network made before follows.
    let bridge = SessionNetwork::of(&listed.instance, true).bridge;
    firewall::isolate(&[bridge.as_str()], &[]).unwrap();
    let out = job_output(&listed, student, &probes(&target)).await;
    assert!(out.contains("BLOCKED-lan"), "a block taken off the list stays open: {out}");
    listed.clean_up().await;
}

/// [`outside_slicehub`] without a lab of its own.
async fn outside_slicehub_lab(script: &str) -> String {
    let fresh = common::sqlite().await;
    let lab = lab(fresh.store.clone(), "1 x H100-80GB", |_| {}).await;
    outside_slicehub(&lab, script).await
}

#[tokio::test]
async fn a_course_without_internet_runs_on_an_internal_network() {
    let _alone = ONE_AT_A_TIME.lock().await;
    let fresh = common::sqlite().await;
    let lab = lab(fresh.store.clone(), "1 x H100-80GB", |_| {}).await;
    let student = lab.student("offline-carol").await;
    let policy = CoursePolicy {
        images: vec![BUSYBOX.to_string()],
        max_minutes: 60,
        internet: false,
        ..CoursePolicy::defaults(&lab.config)
    };
    slicehub_core::courses::set_policy(&lab.store, &lab.config, lab.course_id, &policy, &["1g.10gb".to_string()], "test")
        .await
        .unwrap();
    let (host_port, accepted) = host_service();
    let instance = lab.sessions.instance_id().await.unwrap();
    let offline = SessionNetwork::of(&instance, false);
    let job = lab
        .sessions
        .claim(lab.job(student, &["sh", "-c", "sleep 30"]))
        .await
        .unwrap();
    let job = lab.until(&job.id, &[SessionState::Ready], LONG).await;
    let client = lab.engine.client().await.unwrap();
    let inspect = client
        .inspect_container(job.container.as_deref().unwrap(), None::<bollard::query_parameters::InspectContainerOptions>)
        .await
        .unwrap();
    let networks = inspect.network_settings.unwrap().networks.unwrap();
    assert_eq!(networks.keys().collect::<Vec<_>>(), [&offline.name]);
    let network = client.inspect_network(&offline.name, None::<InspectNetworkOptions>).await.unwrap();
    assert_eq!(network.internal, Some(true), "no route out of the host");
    let gateway = gateway_of(&lab, &offline.name).await;
    lab.sessions.stop(&job.id, "test").await.unwrap();

    let out = job_output(&lab, student, &probes(&[("host", &gateway, host_port)])).await;
    assert!(out.contains("BLOCKED-host"), "{out}");
    assert_eq!(firewall::missing(&[offline.bridge.as_str()], &[]).unwrap(), Vec::<String>::new());
    assert_eq!(accepted.load(Ordering::SeqCst), 0);
    lab.clean_up().await;
}

#[tokio::test]
async fn two_portals_on_one_engine_share_no_volume_network_or_container() {
    let _alone = ONE_AT_A_TIME.lock().await;
    let (one, two) = (common::sqlite().await, common::sqlite().await);
    let first = lab(one.store.clone(), "1 x H100-80GB", |_| {}).await;
    let second = lab(two.store.clone(), "1 x H100-80GB", |_| {}).await;
    let name = format!("twin{}", std::process::id());
    let (a1, a2) = (first.student(&name).await, second.student(&name).await);

    let wrote = job_output(&first, a1, "echo first-portal-secret > $HOME/mine.txt && echo written").await;
    assert!(wrote.contains("written"), "{wrote}");
    let read = job_output(&second, a2, "ls -a $HOME; cat $HOME/mine.txt 2>&1; echo done").await;
    assert!(read.contains("done"), "{read}");
    assert!(!read.contains("first-portal-secret"), "the second portal's {name} read the first's file: {read}");

    let (i1, i2) = (first.sessions.instance_id().await.unwrap(), second.sessions.instance_id().await.unwrap());
    assert_ne!(i1, i2);
    assert_ne!(SessionNetwork::of(&i1, true).name, SessionNetwork::of(&i2, true).name);
    let client = first.engine.client().await.unwrap();
    for (instance, expected) in [(&i1, 1), (&i2, 1)] {
        let volumes = client
            .list_volumes(Some(
                bollard::query_parameters::ListVolumesOptionsBuilder::default()
                    .filters(&std::collections::HashMap::from([(
                        "label",
                        vec![format!("org.slicehub.instance={instance}")],
                    )]))
                    .build(),
            ))
            .await
            .unwrap()
            .volumes
            .unwrap_or_default();
        assert_eq!(volumes.len(), expected, "one home volume labelled for {instance}");
        assert!(volumes[0].name.contains(instance.as_str()), "{}", volumes[0].name);
    }

    // The second portal's reconciler leaves the first portal's running container alone.
    let running = first.sessions.claim(first.job(a1, &["sleep", "30"])).await.unwrap();
    let running = first.until(&running.id, &[SessionState::Ready], LONG).await;
    second.sessions.reconcile().await.unwrap();
    assert!(first.container_exists(running.container.as_deref().unwrap()).await);
    first.clean_up().await;
    second.clean_up().await;
    for instance in [&i1, &i2] {
        let volume = slicehub_core::runtime::spec::home_volume(instance, &name, "CS-101");
        let _ = client.remove_volume(&volume, None::<bollard::query_parameters::RemoveVolumeOptions>).await;
    }
}

/// An image one course chose sees only that course's folder: what a student keeps in one
/// course's home is not in their home of another course.
#[tokio::test]
async fn one_students_courses_share_no_home() {
    let _alone = ONE_AT_A_TIME.lock().await;
    let fresh = common::sqlite().await;
    let lab = lab(fresh.store.clone(), "1 x H100-80GB", |_| {}).await;
    let name = format!("two-courses{}", std::process::id());
    let student = lab.student(&name).await;
    let other = lab.store.insert_course("ML-200", "Other course").await.unwrap();
    lab.store.set_member_role(other.id, student, slicehub_core::store::Role::Student).await.unwrap();

    let wrote = job_output(&lab, student, "echo cs-course-secret > $HOME/work.txt && echo written").await;
    assert!(wrote.contains("written"), "{wrote}");
    let elsewhere = job_output_in(&lab, other.id, student, "ls -a $HOME; cat $HOME/work.txt 2>&1; echo done").await;
    assert!(elsewhere.contains("done"), "{elsewhere}");
    assert!(!elsewhere.contains("cs-course-secret"), "ML-200's image read CS-101's file: {elsewhere}");
    // Control: the same course finds its file again in the next session.
    let again = job_output(&lab, student, "cat $HOME/work.txt").await;
    assert!(again.contains("cs-course-secret"), "{again}");

    lab.clean_up().await;
    let client = lab.engine.client().await.unwrap();
    for code in ["CS-101", "ML-200"] {
        let volume = slicehub_core::runtime::spec::home_volume(&lab.instance, &name, code);
        let _ = client.remove_volume(&volume, None::<bollard::query_parameters::RemoveVolumeOptions>).await;
    }
}

/// Nothing a session writes fills the engine's disk: the image's layer is read-only, and
/// `/tmp` is a sized tmpfs; the home volume takes the student's files.
#[tokio::test]
async fn a_session_writes_only_its_home_and_a_sized_tmp() {
    let _alone = ONE_AT_A_TIME.lock().await;
    let fresh = common::sqlite().await;
    let lab = lab(fresh.store.clone(), "1 x H100-80GB", |_| {}).await;
    let student = lab.student("disk-fiona").await;
    let script = "dd if=/dev/zero of=/filler bs=1M count=1 2>&1; echo root=$?; \
                  dd if=/dev/zero of=/tmp/filler bs=1M count=64 2>&1; echo tmp=$?; \
                  echo kept > $HOME/notes.txt && echo home=ok";
    let out = job_output(&lab, student, script).await;
    assert!(out.contains("Read-only file system") && out.contains("root=1"), "{out}");
    assert!(out.contains("No space left on device") && out.contains("tmp=1"), "/tmp is capped: {out}");
    assert!(out.contains("home=ok"), "{out}");
    lab.clean_up().await;
    let client = lab.engine.client().await.unwrap();
    let volume = slicehub_core::runtime::spec::home_volume(&lab.instance, "disk-fiona", "CS-101");
    let _ = client.remove_volume(&volume, None::<bollard::query_parameters::RemoveVolumeOptions>).await;
}
