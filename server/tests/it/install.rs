//! What an operator installs, tested as installed: the Debian package in a clean Debian
//! container (lintian clean; the binary started as its systemd unit says, as the `slicehub`
//! user; a student's job run on the host's Docker engine; removed, then purged), the portal
//! image built from it running a session, and a filled database of the previous release
//! upgraded by today's binary (SQLite, then PostgreSQL).
//! Needs `slicehub/debian:offline` and `slicehub/busybox:offline` (scripts/test.sh builds
//! them), cargo-deb and lintian (`scripts/setup.sh --test`), and the browser bundle in
//! target/site.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use slicehub_end2end::classroom::{enroll, password_of, COURSE};
use slicehub_end2end::form::{client, sign_in};
use slicehub_end2end::jobs::{start_job, wait_for_state};
use slicehub_end2end::{free_port, workspace_root, Portal};
use tokio::sync::OnceCell;

use crate::common::postgres_database;

const BIN: &str = env!("CARGO_BIN_EXE_slicehub");
const BUSYBOX: &str = "slicehub/busybox:offline";
const DEBIAN: &str = "slicehub/debian:offline";
const CONFIG: &str = "/etc/slicehub/slicehub.toml";
const SOCKET: &str = "/var/run/docker.sock";
const PREVIOUS_RELEASE: &str = "server/tests/fixtures/release-0.1.0";

/// What a `systemctl edit slicehub` drop-in would set for a classroom on simulated GPUs.
fn service_env(port: u16) -> Vec<(&'static str, String)> {
    vec![
        ("SLICEHUB_SERVER_BIND", format!("127.0.0.1:{port}")),
        ("SLICEHUB_GPU_BACKEND", "simulated".into()),
        ("SLICEHUB_GPU_SIMULATED", "1 x H100-80GB".into()),
        ("SLICEHUB_SESSIONS_DEFAULT_IMAGE", BUSYBOX.into()),
        ("SLICEHUB_SESSIONS_MEMORY_MIB_PER_MEMORY_SLICE", "128".into()),
    ]
}

/// The package, built once per run from the debug binary `cargo test` built (the release
/// build is the same code; building it here would add ten minutes to the suite).
async fn package() -> &'static PathBuf {
    static DEB: OnceCell<PathBuf> = OnceCell::const_new();
    DEB.get_or_init(|| async {
        let root = workspace_root();
        let out = Command::new(root.join("scripts/package-deb.sh"))
            .arg("--no-build")
            .env("SLICEHUB_DEB_PROFILE", "dev")
            .current_dir(&root)
            .output()
            .expect("scripts/package-deb.sh runs");
        let said = said(&out);
        assert!(out.status.success(), "packaging failed: {said}");
        let deb = said
            .lines()
            .rev()
            .find(|l| l.trim_end().ends_with(".deb"))
            .map(|l| root.join(l.trim()))
            .unwrap_or_else(|| panic!("cargo-deb named no package: {said}"));
        assert!(deb.is_file(), "{} is not there: {said}", deb.display());
        deb
    })
    .await
}

#[tokio::test(flavor = "multi_thread")]
async fn the_debian_package_is_lintian_clean_serves_as_its_unit_says_and_purges() {
    let deb = package().await;
    let lintian = Command::new("lintian")
        .args(["--fail-on", "error,warning", "--suppress-tags", LINTIAN_ACCEPTED])
        .arg(deb)
        .output()
        .expect("lintian is installed (scripts/setup.sh --test)");
    let said = said(&lintian);
    assert!(lintian.status.success(), "lintian: {said}");

    // The host's network and Docker socket; NET_ADMIN, which root has on a host.
    let socket = format!("{SOCKET}:{SOCKET}");
    let debian = Container::start("deb", &["--network", "host", "--cap-add", "NET_ADMIN", "-v", &socket, DEBIAN, "sleep", "infinity"]);
    debian.copy_in(deb, "/tmp/slicehub.deb");
    debian.root("apt-get install -y --no-install-recommends /tmp/slicehub.deb");
    assert_eq!(debian.root("stat -c '%a %U %G' /usr/bin/slicehub"), "755 root root");
    assert!(debian.root("dpkg-query -W -f='${Conffiles}' slicehub").contains(CONFIG), "the configuration is a conffile");
    assert_eq!(debian.root(&format!("stat -c '%a %U %G' {CONFIG}")), "640 root slicehub", "it may hold the database's password");
    assert_eq!(debian.root("getent passwd slicehub | cut -d: -f7"), "/usr/sbin/nologin");
    assert_eq!(debian.root("stat -c '%a %U' /var/lib/slicehub"), "700 slicehub");
    assert!(debian.root("ls /usr/share/slicehub/site/pkg").contains("slicehub.wasm"), "the browser bundle");
    assert!(debian.root("ls /usr/share/slicehub/docker/common").contains("slicehub_auth.py"), "the notebook image recipe");
    for who in ["cat /etc/slicehub/slicehub.toml", "ls /var/lib/slicehub"] {
        let (ok, said) = debian.try_sh(&format!("setpriv --reuid=nobody --regid=nogroup --clear-groups {who}"));
        assert!(!ok && said.contains("Permission denied"), "another account reads what is the portal's alone ({who}): {said}");
    }

    let unit = Unit::parse(&debian.root("cat \"$(dpkg -L slicehub | grep '/slicehub.service$')\""));
    assert_eq!(unit.get("User"), "slicehub");
    assert_eq!(unit.get("SupplementaryGroups"), "docker");
    assert_eq!(unit.get("StateDirectory"), "slicehub");
    assert_eq!(unit.get("ProtectSystem"), "strict");
    assert_eq!(unit.get("NoNewPrivileges"), "yes");
    assert_eq!(unit.get("CapabilityBoundingSet"), "CAP_NET_ADMIN", "only the firewall's capability");
    assert_eq!(unit.get("AmbientCapabilities"), "CAP_NET_ADMIN");
    // As the engine's own package would have it: the docker group owns the host's socket.
    debian.root(&format!("groupmod -o -g {} docker", socket_group()));
    let port = free_port();
    let env = service_env(port);
    debian.start_as_unit(&unit, &env);
    let url = format!("http://127.0.0.1:{port}");
    wait_answering(&url, || debian.root("cat /tmp/portal.log")).await;
    debian.assert_portal_unprivileged("$(cat /tmp/portal.pid)");
    assert_eq!(debian.root("stat -c '%a %U' /var/lib/slicehub/first-admin-password"), "600 slicehub");
    assert_eq!(debian.root("stat -c '%a %U' /var/lib/slicehub/slicehub.db"), "600 slicehub");

    let cli = |args: &[&str], stdin: &str| debian.cli(&env, args, stdin);
    cli(&["user", "passwd", "admin", "--password-stdin"], "deb-admin-password-1\n");
    run_a_class(&url, "deb-admin-password-1", cli).await;

    debian.root("kill -TERM \"$(cat /tmp/portal.pid)\"");
    wait_refused(&url).await;
    debian.root("apt-get remove -y slicehub");
    assert!(!debian.exists("/usr/bin/slicehub"), "removed");
    assert!(debian.exists(CONFIG) && debian.exists("/var/lib/slicehub/slicehub.db"), "remove keeps configuration and data");
    debian.root("apt-get purge -y slicehub");
    for gone in ["/etc/slicehub", "/var/lib/slicehub", "/usr/share/slicehub"] {
        assert!(!debian.exists(gone), "purge leaves {gone}");
    }
    let status = debian.root("dpkg-query -W -f='${Status}' slicehub 2>&1 || true");
    assert!(status.contains("no packages found"), "purged, not only removed: {status}");
}

/// CapEff with CAP_NET_ADMIN (capability 12) alone.
const NET_ADMIN_ONLY: &str = "0000000000001000";

/// Tags lintian reports that follow from what the package is, each with why: the binary
/// is Rust (no C fortify functions to use; its crates are statically linked, which lintian
/// reads as embedded libraries); the package is not uploaded to Debian, so its first
/// changelog entry closes no "intent to package" bug.
const LINTIAN_ACCEPTED: &str = "hardening-no-fortify-functions,embedded-library,initial-upload-closes-no-bugs";

#[tokio::test(flavor = "multi_thread")]
async fn the_portal_image_built_from_the_package_runs_a_session() {
    let deb = package().await;
    let out = Command::new(workspace_root().join("docker/offline/portal.sh"))
        .arg(deb)
        .output()
        .expect("docker/offline/portal.sh runs");
    let said = said(&out);
    assert!(out.status.success(), "{said}");
    let image = said
        .split_whitespace()
        .find(|w| w.starts_with("slicehub/portal:") && !w.ends_with(":offline"))
        .unwrap_or_else(|| panic!("no image named: {said}"))
        .trim_end_matches([',', ')'])
        .to_string();

    let port = free_port();
    let mut env = service_env(port);
    env.push(("SLICEHUB_ADMIN_PASSWORD", "image-admin-password-1".into()));
    let mut args: Vec<String> =
        ["--network", "host", "--cap-add", "NET_ADMIN", "-v", &format!("{SOCKET}:{SOCKET}"), "--group-add", &socket_group()]
        .iter()
        .map(|s| s.to_string())
        .collect();
    for (k, v) in &env {
        args.extend(["-e".into(), format!("{k}={v}")]);
    }
    args.push(image.clone());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let portal = Container::start("image", &args);
    let url = format!("http://127.0.0.1:{port}");
    wait_answering(&url, || docker(&["logs", &portal.name]).1).await;
    portal.assert_portal_unprivileged("1");
    let cli = |args: &[&str], stdin: &str| portal.cli(&[], args, stdin);
    run_a_class(&url, "image-admin-password-1", cli).await;
}

/// Course CS-101 (course id 1), one student signed in through the browser's API, a job
/// run to `ready` on the host's Docker engine, then stopped by the CLI; the container is
/// gone after.
async fn run_a_class(url: &str, admin_password: &str, cli: impl Fn(&[&str], &str) -> String) {
    let admin = sign_in(&client(), url, "admin", admin_password).await.expect("the administrator signs in");
    cli(&["course", "add", COURSE, "Deep Learning"], "");
    let student = enroll(url, &admin, &["student"], |args, stdin| {
        cli(args, stdin);
    })
    .await;
    let list = || -> Vec<Value> { serde_json::from_str(&cli(&["session", "list", "--json"], "")).expect("the list as JSON") };
    let id = start_job(url, &student[0], BUSYBOX, "sleep 600").await;
    let running = wait_for_state(list, &id, &["ready"], Duration::from_secs(90)).await;
    let container = running["container"].as_str().expect("a container").to_string();
    assert_eq!(inspect(&container, "{{.State.Running}}"), "true", "the job runs on the host's engine");
    assert!(cli(&["session", "stop", &id], "").contains("ended"));
    assert!(!docker(&["inspect", &container]).0, "the job's container is removed");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_filled_database_of_the_previous_release_is_upgraded_in_place() {
    upgrade(None).await;
    match postgres_database().await {
        Some(url) => upgrade(Some(url)).await,
        None => assert_eq!(
            std::env::var("SLICEHUB_SKIP_POSTGRES").as_deref(),
            Ok("1"),
            "SLICEHUB_TEST_DATABASE_URL is not set: run the tests through scripts/test.sh"
        ),
    }
}

async fn upgrade(postgres: Option<String>) {
    let fixture = workspace_root().join(PREVIOUS_RELEASE).join(if postgres.is_some() { "postgres" } else { "sqlite" });
    let expected: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture.join("expected.json")).expect("expected.json")).unwrap();
    let dump = fixture.join("dump.sql");
    let place = tempfile::tempdir().unwrap();
    let data = place.path().join("data");
    let mut env = vec![
        ("SLICEHUB_DATA_DIR", data.to_str().unwrap().to_string()),
        ("SLICEHUB_GPU_BACKEND", "simulated".to_string()),
        ("SLICEHUB_GPU_SIMULATED", "1 x H100-80GB".to_string()),
        ("SLICEHUB_SESSIONS_DEFAULT_IMAGE", BUSYBOX.to_string()),
        ("SLICEHUB_SESSIONS_MEMORY_MIB_PER_MEMORY_SLICE", "128".to_string()),
    ];
    match &postgres {
        Some(url) => {
            load(Command::new("psql").args(["-q", "-v", "ON_ERROR_STOP=1", "-f"]).arg(&dump).arg(url));
            env.push(("SLICEHUB_DATABASE_URL", url.clone()));
        }
        None => {
            std::fs::create_dir_all(&data).unwrap();
            load(Command::new("sqlite3").arg(data.join("slicehub.db")).stdin(std::fs::File::open(&dump).unwrap()));
        }
    }
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let portal = Portal::start(BIN.as_ref(), &env).await;
    let json = |args: &[&str]| -> Value { serde_json::from_str(&portal.cli(args, "")).expect("JSON") };
    // The data, compared field by field: what the CLI prints may grow between releases.
    let users = |list: &Value| -> Vec<String> {
        list.as_array().unwrap().iter().map(|u| format!("{} {} {} {}", u["username"], u["display_name"], u["admin"], u["disabled"])).collect()
    };
    assert_eq!(users(&json(&["user", "list", "--json"])), users(&expected["users"]), "accounts as the release left them");
    let courses = |list: &Value| -> Vec<String> {
        list.as_array().unwrap().iter().map(|c| format!("{} {} {} {}", c["code"], c["title"], c["instructors"], c["students"])).collect()
    };
    assert_eq!(courses(&json(&["course", "list", "--json"])), courses(&expected["courses"]), "courses and rosters");
    let policy = portal.cli(&["course", "policy", "CS-101"], "");
    for kept in ["profiles 1g.10gb, 2g.20gb", "stop after 120 minutes", "quota 10 slice-hours per student per week"] {
        assert!(policy.contains(kept), "the policy lost {kept:?}: {policy}");
    }
    let list = || -> Vec<Value> { json(&["session", "list", "--json"]).as_array().cloned().expect("a JSON array") };
    let record = |s: &Value| format!("{} {} {} {} {} {}", s["id"], s["user"], s["profile"], s["state"], s["released"], s["reason"]);
    let ended = expected["ended"].as_str().unwrap();
    let before = expected["sessions"].as_array().unwrap().iter().find(|s| s["id"] == ended).map(record);
    assert_eq!(list().iter().find(|s| s["id"] == ended).map(record), before, "a finished job's record is unchanged");
    // Its container went with the old host: the session is closed, not left holding a slice.
    let running = expected["running"].as_str().unwrap();
    wait_for_state(list, running, &["ended", "failed"], Duration::from_secs(60)).await;

    assert!(sign_in(&client(), &portal.url, "ines", "ines-password-1").await.is_some(), "the instructor signs in");
    let sam = sign_in(&client(), &portal.url, "sam", &password_of("sam")).await.expect("a student signs in");
    let id = start_job(&portal.url, &sam, BUSYBOX, "sleep 600").await;
    wait_for_state(list, &id, &["ready"], Duration::from_secs(60)).await;
    assert!(portal.cli(&["session", "stop", &id], "").contains("ended"));
}

fn load(command: &mut Command) {
    let out = command.stdout(Stdio::null()).output().expect("the database's client runs");
    assert!(out.status.success(), "loading the release's database: {}", String::from_utf8_lossy(&out.stderr));
}

/// The systemd unit's `Key=value` lines (the last one of each key wins, as in systemd).
struct Unit(Vec<(String, String)>);

impl Unit {
    fn parse(text: &str) -> Unit {
        let lines = text.lines().map(str::trim).filter(|l| !l.starts_with('#') && !l.starts_with('['));
        Unit(lines.filter_map(|l| l.split_once('=')).map(|(k, v)| (k.trim().to_string(), v.trim().to_string())).collect())
    }

    fn get(&self, key: &str) -> &str {
        self.0.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v.as_str()).unwrap_or_else(|| panic!("the unit sets no {key}"))
    }
}

/// A container removed when the test ends, however it ends.
struct Container {
    name: String,
}

impl Container {
    fn start(what: &str, args: &[&str]) -> Container {
        let name = format!("slicehub-install-test-{what}-{}", std::process::id());
        let _ = docker(&["rm", "-f", &name]);
        let mut all = vec!["run", "-d", "--name", &name];
        all.extend_from_slice(args);
        let (ok, said) = docker(&all);
        assert!(ok, "docker run {args:?}: {said}");
        Container { name }
    }

    fn copy_in(&self, from: &Path, to: &str) {
        let (ok, said) = docker(&["cp", from.to_str().unwrap(), &format!("{}:{to}", self.name)]);
        assert!(ok, "{said}");
    }

    fn try_sh(&self, script: &str) -> (bool, String) {
        let (ok, said) = docker(&["exec", "-e", "DEBIAN_FRONTEND=noninteractive", &self.name, "sh", "-c", script]);
        (ok, said.trim().to_string())
    }

    /// `script` as root in the container; its output. Panics when it fails.
    fn root(&self, script: &str) -> String {
        let (ok, said) = self.try_sh(script);
        assert!(ok, "{script}: {said}");
        said
    }

    /// The portal's process (`pid`, a shell word) runs as `slicehub` with no capability
    /// but CAP_NET_ADMIN.
    fn assert_portal_unprivileged(&self, pid: &str) {
        let status = self.root(&format!("cat /proc/{pid}/status"));
        let field = |name: &str| {
            let line = status.lines().find_map(|l| l.strip_prefix(name)).unwrap_or_default();
            line.split_whitespace().next().unwrap_or_default().to_string()
        };
        assert_eq!(field("Uid:"), self.root("id -u slicehub"), "the portal runs as slicehub, not root: {status}");
        assert_eq!(field("CapEff:"), NET_ADMIN_ONLY, "no capability but the firewall's: {status}");
        assert_ne!(field("Gid:"), "0", "not root's group: {status}");
        let groups = status.lines().find_map(|l| l.strip_prefix("Groups:")).unwrap_or_default();
        assert!(!groups.split_whitespace().any(|g| g == "0"), "root's group is not among its groups: {status}");
    }

    fn exists(&self, path: &str) -> bool {
        self.try_sh(&format!("test -e {path}")).0
    }

    /// The unit's command line as its user, groups, capabilities, directory and umask make
    /// it (not its sandboxing: no systemd runs here), in the background (pid in
    /// /tmp/portal.pid, output in /tmp/portal.log).
    fn start_as_unit(&self, unit: &Unit, env: &[(&str, String)]) {
        let groups = unit.get("SupplementaryGroups");
        let caps: Vec<String> =
            unit.get("AmbientCapabilities").split_whitespace().map(|c| format!("+{}", c.trim_start_matches("CAP_").to_lowercase())).collect();
        let caps = std::iter::once("-all".to_string()).chain(caps).collect::<Vec<_>>().join(",");
        let script = format!(
            "echo $$ > /tmp/portal.pid; umask {umask}; cd {dir} && exec setpriv --reuid={user} --regid={group} \
             --groups=$(getent group {groups} | cut -d: -f3) --no-new-privs --inh-caps={caps} --ambient-caps={caps} \
             --bounding-set={caps} -- {exec} >/tmp/portal.log 2>&1",
            umask = unit.get("UMask"),
            dir = unit.get("WorkingDirectory"),
            user = unit.get("User"),
            group = unit.get("Group"),
            exec = unit.get("ExecStart"),
        );
        let mut args = vec!["exec".to_string(), "-d".to_string()];
        for (k, v) in env {
            args.extend(["-e".to_string(), format!("{k}={v}")]);
        }
        args.extend([self.name.clone(), "sh".into(), "-c".into(), script]);
        let (ok, said) = docker(&args.iter().map(String::as_str).collect::<Vec<_>>());
        assert!(ok, "{said}");
    }

    /// `slicehub --config CONFIG ARGS` as the slicehub user, with the service's settings.
    fn cli(&self, env: &[(&str, String)], args: &[&str], stdin: &str) -> String {
        use std::io::Write;
        let mut all = vec!["exec".to_string(), "-i".into(), "-u".into(), "slicehub".into(), "-w".into(), "/tmp".into()];
        for (k, v) in env {
            all.extend(["-e".to_string(), format!("{k}={v}")]);
        }
        all.extend([self.name.clone(), "slicehub".into(), "--config".into(), CONFIG.into()]);
        all.extend(args.iter().map(|a| a.to_string()));
        let mut child = Command::new("docker")
            .args(&all)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("docker runs");
        child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
        let out = child.wait_with_output().unwrap();
        let said = said(&out);
        assert!(out.status.success(), "slicehub {args:?}: {said}");
        said
    }
}

impl Drop for Container {
    /// SIGTERM first, so a portal inside ends its sessions' networks and rules as it would.
    fn drop(&mut self) {
        let _ = docker(&["stop", "-t", "10", &self.name]);
        let _ = docker(&["rm", "-f", &self.name]);
    }
}

/// What a program printed, standard output then standard error.
fn said(out: &std::process::Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

fn docker(args: &[&str]) -> (bool, String) {
    let out = Command::new("docker").args(args).output().expect("docker runs");
    let said = said(&out);
    (out.status.success(), said)
}

fn inspect(what: &str, format: &str) -> String {
    let (ok, said) = docker(&["inspect", "--format", format, what]);
    assert!(ok, "docker inspect {what}: {said}");
    said.trim().to_string()
}

/// The group id that owns the host's Docker socket.
fn socket_group() -> String {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(SOCKET).expect("the Docker socket").gid().to_string()
}

async fn wait_answering(url: &str, log: impl Fn() -> String) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while client().get(format!("{url}/healthz")).send().await.is_err() {
        assert!(Instant::now() < deadline, "the installed portal never answered:\n{}", log());
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

async fn wait_refused(url: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while client().get(format!("{url}/healthz")).send().await.is_ok() {
        assert!(Instant::now() < deadline, "the portal ignored SIGTERM");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}
