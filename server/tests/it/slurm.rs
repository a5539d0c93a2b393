//! Sessions on the Slurm pool, against a real Slurm cluster (slurmctld, slurmrestd and two
//! slurmd nodes with MIG-typed GRES, node 1 also L40S GPUs and shards, in containers, `scripts/slurm-cluster.sh`) and the real
//! portal: a notebook runs as a Slurm job, as the student's own Unix user, and a cell executes
//! on the node through the proxy (and cannot read another student's job there); nothing Slurm
//! keeps of the job opens the notebook, and a student squatting the node's ports is never sent
//! the token;
//! ten claims on seven 1g GRES queue in Slurm with its reason and estimate; a cancel from
//! outside, a portal restart and a node going down are followed, a controller failing over
//! (slurmrestd answering an empty list and errors, through `slurm_failover`) ends nothing,
//! a job cancelled while the portal is down is charged only until it ended (or, once Slurm has
//! forgotten it, until it was last seen running); a student's own job
//! carrying another session's comment changes nothing. On SQLite, then on
//! PostgreSQL (the watcher, the stops and the claims race on both); one test, as the runs
//! share the cluster's seven slices. And whole GPUs and shards without MIG, node 1's two
//! L40S-typed GPUs and their 8 shards: each claim asks Slurm for its own GRES and runs
//! where Slurm places it, a third whole GPU waits; GRES entries crafted to reach a job's
//! `--gres` (played by the relay) are neither offered nor submitted.

use std::time::{Duration, Instant};

use slicehub_end2end::classroom::Classroom;
use slicehub_end2end::form::{client, post, urlencode};
use slicehub_end2end::kernel::{run_code, start_kernel, ws_connect};
use slicehub_end2end::notebook::NotebookVisit;
use slicehub_end2end::slurm_cluster::SlurmCluster;
use slicehub_end2end::slurm_failover::SlurmFailover;
use slicehub_end2end::Portal;

use crate::common::postgres_database;

const BIN: &str = env!("CARGO_BIN_EXE_slicehub");
const JUPYTERLAB: &str = "slicehub/jupyterlab:offline";

async fn start(portal: &Portal, cookie: &str, body: String) -> String {
    let resp = post(&client(), &portal.url, Some(cookie), "start_session", body).await;
    assert_eq!(resp.status(), 200, "{}", resp.text().await.unwrap_or_default());
    let view: serde_json::Value = resp.json().await.unwrap();
    view["id"].as_str().unwrap().to_string()
}

async fn view_of(portal: &Portal, cookie: &str, id: &str) -> serde_json::Value {
    let resp = post(&client(), &portal.url, Some(cookie), "my_sessions", String::new()).await;
    let list: serde_json::Value = resp.json().await.unwrap();
    list.as_array().unwrap().iter().find(|s| s["id"] == id).expect("the session is listed").clone()
}

/// Waits until the session's state is one of `states`.
async fn until(portal: &Portal, cookie: &str, id: &str, states: &[&str], limit: Duration) -> serde_json::Value {
    let deadline = Instant::now() + limit;
    loop {
        let me = view_of(portal, cookie, id).await;
        if states.iter().any(|s| me["state"] == *s) {
            return me;
        }
        assert!(Instant::now() < deadline, "after {limit:?} not {states:?}: {me}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn job_of(view: &serde_json::Value) -> u64 {
    let placement = view["placement"].as_str().unwrap_or_default();
    placement.strip_prefix("Slurm job ").and_then(|j| j.parse().ok()).unwrap_or_else(|| panic!("no Slurm job: {view}"))
}

async fn stop(portal: &Portal, cookie: &str, id: &str) {
    let resp = post(&client(), &portal.url, Some(cookie), "stop_session", format!("id={id}")).await;
    assert_eq!(resp.status(), 200, "{}", resp.text().await.unwrap_or_default());
}

/// The tests of this file take turns: they share the cluster's seven slices.
static CLUSTER: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

#[tokio::test(flavor = "multi_thread")]
async fn sessions_run_as_slurm_jobs_and_follow_what_slurm_does() {
    let _turn = CLUSTER.lock().await;
    let cluster = SlurmCluster::up();
    follow_slurm(&cluster, None, "sl").await;
    match postgres_database().await {
        Some(url) => follow_slurm(&cluster, Some(url), "sp").await,
        None => assert_eq!(
            std::env::var("SLICEHUB_SKIP_POSTGRES").as_deref(),
            Ok("1"),
            "SLICEHUB_TEST_DATABASE_URL is not set: run the tests through scripts/test.sh"
        ),
    }
}

/// Whole GPUs and shards without MIG (issue #28), on the test cluster's node 1, whose
/// slurm.conf and gres.conf give it two L40S-typed GPUs without MIG and 8 shards beside its
/// MIG GRES (Slurm 22.05 reports `gpu:l40s:2,shard:l40s:8`): the launch card offers
/// `l40s.48gb` and `l40s.48gb.1of4`, a claim of each becomes a job asking for exactly
/// `gpu:l40s:1` or `shard:l40s:1` that Slurm places and runs on node 1 (the whole GPU on one
/// L40S, the shard on the other: Slurm gives no GPU both ways), and a third whole-GPU claim
/// waits in Slurm for resources. No relay: the portal talks to slurmrestd. On SQLite, then
/// on PostgreSQL.
#[tokio::test(flavor = "multi_thread")]
async fn whole_gpus_and_shards_run_as_jobs_asking_for_their_own_gres() {
    let _turn = CLUSTER.lock().await;
    let cluster = SlurmCluster::up();
    let node = cluster.ctl(&["scontrol", "show", "node", "-o", "slurmnode1"]);
    let gres = node.split_whitespace().find_map(|w| w.strip_prefix("Gres=")).unwrap_or_default().to_string();
    assert_eq!(
        gres, "gpu:1g.10gb:4,gpu:3g.40gb:1,gpu:l40s:2,shard:1g.10gb:0,shard:3g.40gb:0,shard:l40s:8",
        "node 1's GRES as Slurm has them (docker/slurm/): is the cluster running an older image?"
    );
    whole_gpus_and_shards(&cluster, None, "sg").await;
    match postgres_database().await {
        Some(url) => whole_gpus_and_shards(&cluster, Some(url), "pg-sg").await,
        None => eprintln!("SLICEHUB_TEST_DATABASE_URL not set: the whole-GPU and shard jobs ran on SQLite only"),
    }
}

async fn whole_gpus_and_shards(cluster: &SlurmCluster, database_url: Option<String>, prefix: &str) {
    // The L40S weighs 2 compute slices.
    let mut extra = vec![("SLICEHUB_SLURM_COURSES", "*"), ("SLICEHUB_GPU_WEIGHTS", "l40s.48gb = 2")];
    if let Some(url) = &database_url {
        extra.push(("SLICEHUB_DATABASE_URL", url.as_str()));
    }
    let class = Classroom::start(BIN.as_ref(), &cluster.shared_env(&extra)).await;
    let names: Vec<String> = (0..3).map(|i| format!("{prefix}-{i}")).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let cookies = class.enroll(&names).await;

    // The launch card offers both, each charged its weight: the GPU's, and a quarter of it;
    // the partition's MIG slices stay (node 1's four and node 2's three 1g). Read until the
    // jobs an earlier run cancelled have let their GRES go.
    let deadline = Instant::now() + Duration::from_secs(30);
    let card = loop {
        let options = post(&client(), &class.portal.url, Some(&cookies[0]), "launch_options", String::new()).await;
        assert_eq!(options.status(), 200);
        let card: serde_json::Value = serde_json::from_str(&options.text().await.unwrap()).unwrap();
        let offered: Vec<(String, String, u64)> = card[0]["profiles"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| (p["name"].as_str().unwrap().to_string(), p["per_hour"].as_str().unwrap().to_string(), p["free"].as_u64().unwrap()))
            .collect();
        let has = |name: &str, per_hour: &str, free: u64| offered.contains(&(name.to_string(), per_hour.to_string(), free));
        let three_g = offered.iter().any(|(name, _, free)| name == "3g.40gb" && *free == 1);
        if has("l40s.48gb", "2", 2) && has("l40s.48gb.1of4", "0.5", 8) && has("1g.10gb", "1", 7) && three_g {
            break card;
        }
        assert!(Instant::now() < deadline, "the launch card does not offer node 1's L40S GPUs and shards: {card}");
        tokio::time::sleep(Duration::from_millis(300)).await;
    };
    let share = card[0]["profiles"].as_array().unwrap().iter().find(|p| p["name"] == "l40s.48gb.1of4").unwrap();
    assert!(share["guarantees"].as_str().unwrap_or_default().contains("not isolated"), "the card says a shard shares: {share}");

    // A whole GPU, then a shard: each runs on node 1 with the GRES it asked for, on its own
    // L40S (the stand-in devices gpu5 and gpu6 of gres.conf).
    let mut jobs = Vec::new();
    let mut devices = Vec::new();
    // The shard asks for node 1's typed shards (`shard:l40s:1`); Slurm writes what it
    // allocates untyped (`JOB_GRES=shard:1`, `GRES=shard:1(IDX:5)`).
    let claims = [("l40s.48gb", "gpu:l40s:1", "gpu:l40s:1"), ("l40s.48gb.1of4", "shard:l40s:1", "shard:1")];
    for ((profile, gres, allocated), cookie) in claims.into_iter().zip(&cookies) {
        let body = format!("course_id=1&profile={}&image={}&command=sleep+600", urlencode(profile), urlencode(JUPYTERLAB));
        let id = start(&class.portal, cookie, body).await;
        let me = until(&class.portal, cookie, &id, &["ready", "failed"], Duration::from_secs(60)).await;
        assert_eq!((me["state"].as_str(), me["profile"].as_str()), (Some("ready"), Some(profile)), "{me}");
        let job = job_of(&me);
        let record = cluster.job(job);
        assert_eq!(
            (record["JobState"].as_str(), record["NodeList"].as_str(), record["TresPerNode"].as_str()),
            ("RUNNING", "slurmnode1", format!("gres:{gres}").as_str()),
            "{record:?}"
        );
        let placed = cluster.job_detail(job);
        assert_eq!(placed["JOB_GRES"], allocated, "{placed:?}");
        let device = placed["GRES"].strip_prefix(&format!("{allocated}(IDX:")).and_then(|d| d.strip_suffix(')')).map(str::to_string);
        assert!(matches!(device.as_deref(), Some("5" | "6")), "{gres} on an L40S: {placed:?}");
        devices.push(device.unwrap());
        jobs.push((id, job, cookie));
    }
    assert_ne!(devices[0], devices[1], "Slurm gives the shard the L40S not given whole");

    // A third whole GPU: node 1 has two, one whole and one with a shard in use, so Slurm
    // keeps the claim waiting for resources.
    let body = format!("course_id=1&profile=l40s.48gb&image={}&command=sleep+600", urlencode(JUPYTERLAB));
    let id = start(&class.portal, &cookies[2], body).await;
    let deadline = Instant::now() + Duration::from_secs(30);
    let (me, job) = loop {
        let me = view_of(&class.portal, &cookies[2], &id).await;
        assert!(!["ready", "failed", "ended"].contains(&me["state"].as_str().unwrap_or_default()), "the third L40S claim does not wait: {me}");
        if me["state"] == "queued" && me["cluster_wait"]["reason"] == "Resources" {
            let job = job_of(&me);
            break (me, job);
        }
        assert!(Instant::now() < deadline, "the third L40S claim does not wait in Slurm for resources: {me}");
        tokio::time::sleep(Duration::from_millis(300)).await;
    };
    let record = cluster.job(job);
    assert_eq!(
        (record["JobState"].as_str(), record["Reason"].as_str(), record["TresPerNode"].as_str()),
        ("PENDING", "Resources", "gres:gpu:l40s:1"),
        "{me} {record:?}"
    );
    jobs.push((id, job, &cookies[2]));

    for (id, job, cookie) in jobs.iter().rev() {
        stop(&class.portal, cookie, id).await;
        until(&class.portal, cookie, id, &["ended"], Duration::from_secs(10)).await;
        let deadline = Instant::now() + Duration::from_secs(10);
        while cluster.job(*job)["JobState"] != "CANCELLED" {
            assert!(Instant::now() < deadline, "job {job} not cancelled: {:?}", cluster.job(*job));
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
}

/// From the attacker's side: entries a node's GRES could be crafted with to reach a job's
/// `--gres` (`;`, spaces, `$(…)`, commas) are neither offered nor submitted, and claims
/// naming them are refused. No node of the test cluster is configured with such names: the
/// relay (`slurm_failover`) shows node 2 with them beside its real `gpu:1g.10gb:3`; node 1's
/// L40S GPUs and shards are the cluster's own.
#[tokio::test(flavor = "multi_thread")]
async fn crafted_node_gres_are_neither_offered_nor_submitted() {
    let _turn = CLUSTER.lock().await;
    let cluster = SlurmCluster::up();
    let upstream = cluster.settings.iter().find(|(k, _)| k == "SLICEHUB_SLURM_URL").map(|(_, v)| v.clone()).expect("slurm url");
    let relay = SlurmFailover::start(&upstream).await;
    let crafted = ["gpu:l40s;rm -rf ~:1", "gpu:a10 --wrap=id:1", "gpu:x$(id):1", "gpu:(null)", "gpu:l40s:x", "gpu:l40s:99999999999", "shard:l40s,x:4"];
    relay.node_gres("slurmnode2", &format!("gpu:1g.10gb:3,{}", crafted.join(",")), "gpu:1g.10gb:0(IDX:N/A)");
    // A student may take 7 compute slices at once, so that the crafted names below meet the
    // cluster's check, not the course's cap.
    let mut env = cluster.shared_env(&[
        ("SLICEHUB_SLURM_COURSES", "*"),
        ("SLICEHUB_GPU_WEIGHTS", "l40s.48gb = 2"),
        ("SLICEHUB_SESSIONS_MAX_COMPUTE_SLICES", "7"),
    ]);
    env.retain(|(k, _)| *k != "SLICEHUB_SLURM_URL");
    env.push(("SLICEHUB_SLURM_URL", relay.url.as_str()));
    let class = Classroom::start(BIN.as_ref(), &env).await;
    let cookies = class.enroll(&["sc-0"]).await;
    let jobs_before = cluster.known_jobs();

    let options = post(&client(), &class.portal.url, Some(&cookies[0]), "launch_options", String::new()).await;
    assert_eq!(options.status(), 200);
    let options = options.text().await.unwrap();
    assert!(options.contains("\"l40s.48gb.1of4\"") && options.contains("\"1g.10gb\""), "the real GRES stay offered: {options}");
    for word in ["rm -rf", "--wrap", "$(id)", "(null)", "99999999999", "l40s;", "x:4"] {
        assert!(!options.contains(word), "a crafted GRES reached the launch card ({word}): {options}");
    }
    for profile in ["l40s;rm -rf ~", "a10 --wrap=id", "x$(id)", "gpu:l40s:1,shard", "l40s.48gb.1of8"] {
        let body = format!("course_id=1&profile={}&image={}&command=true", urlencode(profile), urlencode(JUPYTERLAB));
        let resp = post(&client(), &class.portal.url, Some(&cookies[0]), "start_session", body).await;
        let text = resp.text().await.unwrap_or_default();
        assert!(text.contains("no node of the Slurm cluster offers the profile"), "{profile:?} was not refused: {text}");
    }
    assert_eq!(cluster.known_jobs(), jobs_before, "no claim reached Slurm");
}

async fn follow_slurm(cluster: &SlurmCluster, database_url: Option<String>, prefix: &str) {
    let mut extra = vec![("SLICEHUB_SLURM_COURSES", "*"), ("SLICEHUB_SESSIONS_READY_TIMEOUT_SECONDS", "120")];
    if let Some(url) = &database_url {
        extra.push(("SLICEHUB_DATABASE_URL", url.as_str()));
    }
    // The administrator's links from portal users to cluster users: the students, and the
    // lines an instructor's roster would like to exploit, which the portal leaves out: `0`
    // (Slurm reads an all-digit name as a uid: root), the portal's own cluster account, and
    // a student linked to root.
    let users_file = tempfile::NamedTempFile::new().expect("users file");
    let mut links: Vec<String> = (0..11).map(|i| format!("{prefix}-{i}")).collect();
    links.push(format!("{prefix}-nouser"));
    links.push(format!("{prefix}-late"));
    links.extend(["0".to_string(), "jovyan".to_string(), format!("{prefix}-mallory root")]);
    std::fs::write(users_file.path(), links.join("\n")).expect("users file written");
    let users_path = users_file.path().to_str().expect("utf-8 path").to_string();
    extra.push(("SLICEHUB_SLURM_USERS_FILE", users_path.as_str()));
    // slurmrestd behind a relay that can play a controller failing over.
    let upstream = cluster.settings.iter().find(|(k, _)| k == "SLICEHUB_SLURM_URL").map(|(_, v)| v.clone()).expect("slurm url");
    let failover = SlurmFailover::start(&upstream).await;
    let mut env = cluster.env(&extra);
    env.retain(|(k, _)| *k != "SLICEHUB_SLURM_URL");
    env.push(("SLICEHUB_SLURM_URL", failover.url.as_str()));
    // Someone else's job on the same cluster, same Slurm user: the portal never touches it.
    let submitted = cluster.ctl_as(
        "jovyan",
        &["sbatch", "--partition=gpu", "--nodelist=slurmnode1", "--chdir=/tmp", "--output=/dev/null", "--comment=another-team", "--wrap=sleep 900"],
    );
    let outsider: u64 = submitted.trim().rsplit(' ').next().unwrap().parse().expect("sbatch names the job");
    let mut class = Classroom::start(BIN.as_ref(), &env).await;
    let names: Vec<String> = (0..11).map(|i| format!("{prefix}-{i}")).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let cookies = class.enroll(&names).await;
    // The portal read the file before these accounts existed: an administrator binds each
    // line to its account.
    let stranger = format!("{prefix}-nouser");
    let stranger_cookie = class.enroll(&[&stranger]).await.remove(0);
    for name in names.iter().copied().chain([stranger.as_str()]) {
        let linked = class.portal.cli(&["slurm", "link", name], "");
        assert!(linked.contains(&format!("{name}'s jobs run as the cluster user {name}")), "{linked}");
    }
    // A student the cluster has no account for: the claim fails with words, nothing waits.
    let id = start(&class.portal, &stranger_cookie, format!("course_id=1&profile=1g.10gb&image={}&command=true", urlencode(JUPYTERLAB))).await;
    let me = until(&class.portal, &stranger_cookie, &id, &["failed"], Duration::from_secs(15)).await;
    assert_eq!(
        me["reason"],
        format!("your account {stranger} does not exist on the Slurm cluster's nodes; ask an administrator to add it"),
        "{me}"
    );
    // Names an instructor can invent never become cluster identities: each fails at once with
    // words, and nothing runs on the cluster for any of them.
    // `{prefix}-late` is listed, but its account is one a roster made after the portal read
    // the file: it waits for an administrator.
    let late = format!("{prefix}-late");
    let attackers = ["0".to_string(), "jovyan".to_string(), format!("{prefix}-mallory"), format!("{prefix}-unlinked"), late.clone()];
    let attackers: Vec<&str> = attackers.iter().map(String::as_str).collect();
    let attacker_cookies = class.enroll(&attackers).await;
    cluster.add_users(&[late.as_str()]);
    let mut attacker_sessions = Vec::new();
    for (name, cookie) in attackers.iter().zip(&attacker_cookies) {
        let id = start(&class.portal, cookie, format!("course_id=1&profile=1g.10gb&image={}&command=id", urlencode(JUPYTERLAB))).await;
        let me = until(&class.portal, cookie, &id, &["failed"], Duration::from_secs(15)).await;
        let words = match *name == late {
            true => "your account's link to the Slurm cluster waits for an administrator to confirm it",
            false => "your account is not linked to an account on the Slurm cluster; ask an administrator to link it",
        };
        assert_eq!(me["reason"], words, "{name}: {me}");
        attacker_sessions.push(id);
    }
    let refused = class.portal.cli_fails(&["slurm", "link", &format!("{prefix}-unlinked")]);
    assert!(refused.contains("not linked to a cluster user in slurm.users_file"), "{refused}");
    let comments = cluster.ctl(&["squeue", "-h", "-o", "%i %u %k"]);
    for id in &attacker_sessions {
        assert!(!comments.contains(id.as_str()), "a job of {id} reached Slurm: {comments}");
    }
    assert!(!comments.lines().any(|l| l.split(' ').nth(1) == Some("root")), "a job runs as root: {comments}");
    cluster.add_users(&names);

    // A notebook: a Slurm job on a node, asking for one 1g GRES under the course's account,
    // run as the student's own Unix user; a cell runs on that node through the portal's
    // proxy and cannot read another student's job on the same node; another student's door
    // stays shut. (Node 2 is drained meanwhile, so both land on node 1.)
    cluster.ctl(&["scontrol", "update", "nodename=slurmnode2", "state=drain", "reason=isolation check"]);
    let (alice, bob) = (&cookies[0], &cookies[1]);
    let bobs = start(&class.portal, bob, format!("course_id=1&profile=1g.10gb&image={}&command=sleep+600", urlencode(JUPYTERLAB))).await;
    until(&class.portal, bob, &bobs, &["ready"], Duration::from_secs(30)).await;
    let id = start(&class.portal, alice, format!("course_id=1&profile=1g.10gb&image={}", urlencode(JUPYTERLAB))).await;
    let me = until(&class.portal, alice, &id, &["ready"], Duration::from_secs(120)).await;
    let job = job_of(&me);
    let record = cluster.job(job);
    assert_eq!(record["JobState"], "RUNNING");
    assert_eq!(record["TresPerNode"], "gres:gpu:1g.10gb:1");
    assert_eq!(record["Account"], "cs-101");
    assert_eq!(record["Partition"], "gpu");
    assert!(record["UserId"].starts_with(&format!("{prefix}-0(")), "the student's own user: {}", record["UserId"]);
    let node = record["NodeList"].clone();
    assert!(node.starts_with("slurmnode"), "{node}");
    let base = format!("/user/{prefix}-0/{id}/");
    let door = client().get(format!("{}{base}lab", class.portal.url)).header("cookie", bob.as_str()).send().await.unwrap();
    assert_eq!(door.status(), 404, "another student's door stays shut");
    let visit = NotebookVisit::open(&class.portal, alice, &format!("{base}lab")).await;
    let kernel = start_kernel(&visit, &base).await;
    let channels = format!("{base}api/kernels/{kernel}/channels");
    let mut socket = ws_connect(&class.portal, &visit, &channels, &visit.origin).await.expect("the owner's socket");
    let probe = format!(
        r#"import glob, os, pwd, socket
seen = set()
for p in glob.glob('/proc/[0-9]*'):
    try:
        if pwd.getpwuid(os.stat(p).st_uid).pw_name != '{prefix}-1':
            continue
        open(p + '/environ', 'rb').read()
        seen.add('environ read')
    except PermissionError:
        seen.add('environ denied')
    except (FileNotFoundError, KeyError, ProcessLookupError):
        pass
try:
    os.listdir('/home/{prefix}-1')
    seen.add('home read')
except PermissionError:
    seen.add('home denied')
print(pwd.getpwuid(os.getuid()).pw_name, socket.gethostname(), os.environ['SLURM_JOB_ID'], sorted(seen))"#
    );
    let printed = run_code(&mut socket, &probe).await;
    assert_eq!(
        printed.trim(),
        format!("{prefix}-0 {node} {job} ['environ denied', 'home denied']"),
        "the cell ran inside the Slurm job as its student, and another student's job on the node stayed closed"
    );
    socket.close(None).await.ok();
    // What Slurm keeps of alice's job (its state files: environment and script) holds no
    // token, and nothing in it opens her notebook when sent straight to the node.
    let database = database_url.clone().unwrap_or_else(|| format!("sqlite://{}?mode=rwc", class.portal.dir.path().join("data/slicehub.db").display()));
    let store = slicehub_core::store::Store::connect(&database, 1).await.unwrap();
    let session = store.gpu_session(&id).await.unwrap().expect("alice's session");
    store.close().await;
    let address = session.notebook_address.clone().expect("a node address");
    let kept = cluster.ctl(&["sh", "-c", &format!("cat /var/spool/slurmctld/hash.*/job.{job}/environment /var/spool/slurmctld/hash.*/job.{job}/script")]);
    assert!(kept.contains("SLICEHUB_TOKEN_SHA256="), "the job's kept environment was read: {kept}");
    assert!(!kept.contains(&session.token), "Slurm keeps alice's token");
    let values: Vec<&str> = kept.split(['\0', '\n']).filter_map(|w| w.split_once('=')).map(|(_, v)| v).filter(|v| !v.is_empty()).collect();
    for value in &values {
        let tried = client().get(format!("http://{address}{base}api/status")).header("authorization", format!("token {value}")).send().await;
        let status = tried.map(|r| r.status().as_u16()).unwrap_or(0);
        assert_ne!(status, 200, "{value:?} from the job's kept environment opens alice's notebook");
    }
    let with_token = client().get(format!("http://{address}{base}api/status")).header("authorization", format!("token {}", session.token)).send().await.unwrap();
    assert_eq!(with_token.status(), 200, "the portal's token, never given to Slurm, opens it");
    // From the attacker's side: bob's own job carrying alice's session tag (the comment is
    // anyone's to write) and failing at once is neither followed nor adopted: alice's
    // notebook keeps running on its own job.
    let tag = cluster.ctl(&["squeue", "-h", "-j", &job.to_string(), "-o", "%k"]).trim().to_string();
    assert!(tag.ends_with(id.as_str()), "{tag}");
    let spoof = cluster.ctl_as(
        &format!("{prefix}-1"),
        &["sbatch", "--partition=gpu", "--chdir=/tmp", "--output=/dev/null", &format!("--comment={tag}"), "--wrap=exit 1"],
    );
    let spoof: u64 = spoof.trim().rsplit(' ').next().unwrap().parse().expect("sbatch names the job");
    let watched = Instant::now();
    while watched.elapsed() < Duration::from_secs(4) {
        let me = view_of(&class.portal, alice, &id).await;
        assert_eq!((me["state"].as_str(), job_of(&me)), (Some("ready"), job), "a spoofed job moved alice's session: {me}");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let _ = std::process::Command::new("docker").args(["exec", "slurmctl", "scancel", &spoof.to_string()]).output();
    stop(&class.portal, bob, &bobs).await;
    // A stop cancels the job.
    stop(&class.portal, alice, &id).await;
    let me = until(&class.portal, alice, &id, &["ended"], Duration::from_secs(10)).await;
    assert_eq!(me["reason"], format!("stopped by {prefix}-0"), "{me}");
    let deadline = Instant::now() + Duration::from_secs(10);
    while cluster.job(job)["JobState"] != "CANCELLED" {
        assert!(Instant::now() < deadline, "job {job} not cancelled: {:?}", cluster.job(job));
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // A student who takes every port a notebook could use on the node first: alice's next
    // notebook fails, and the squatter is asked for a proof but never sent her token.
    let squatter = format!("{prefix}-1");
    let _ = std::process::Command::new("docker").args(["exec", "slurmnode1", "rm", "-f", &format!("/tmp/squat-{squatter}.log")]).status();
    let squat = std::process::Command::new("docker")
        .args(["exec", "-d", "-u", &squatter, "slurmnode1", "python3", "-c", SQUATTER])
        .status()
        .expect("docker exec runs");
    assert!(squat.success());
    let deadline = Instant::now() + Duration::from_secs(20);
    while !node_file(&format!("/tmp/squat-{squatter}.log")).starts_with("listening") {
        assert!(Instant::now() < deadline, "the squatter did not take the ports");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let squatted = start(&class.portal, alice, format!("course_id=1&profile=1g.10gb&image={}", urlencode(JUPYTERLAB))).await;
    // Its token while it lives (the database forgets a token when its session ends).
    let store = slicehub_core::store::Store::connect(&database, 1).await.unwrap();
    let victim = store.gpu_session(&squatted).await.unwrap().expect("the squatted session");
    store.close().await;
    assert!(!victim.token.is_empty(), "{victim:?}");
    let me = until(&class.portal, alice, &squatted, &["ready", "failed", "ended"], Duration::from_secs(60)).await;
    let heard = node_file(&format!("/tmp/squat-{squatter}.log"));
    // The node has no pkill: the squatter ends everything it runs there (no job of its own).
    let _ = std::process::Command::new("docker").args(["exec", "-u", &squatter, "slurmnode1", "sh", "-c", "kill -9 -1"]).status();
    assert_eq!(me["state"], "failed", "a notebook whose port was taken never counts as ready: {me}");
    assert!(heard.contains("/api/slicehub/proof?nonce="), "the squatter was asked to prove itself: {heard}");
    assert!(!heard.contains(&victim.token), "the squatter received alice's token: {heard}");
    assert!(!heard.to_ascii_lowercase().contains("authorization"), "the squatter was sent credentials: {heard}");
    cluster.ctl(&["scontrol", "update", "nodename=slurmnode2", "state=resume"]);

    // Jobs end with their command: exit 0 ends the session, exit 3 fails it with the code
    // (however briefly Slurm shows them completing).
    let job = |command: &str| format!("course_id=1&profile=1g.10gb&image={}&command={}", urlencode(JUPYTERLAB), urlencode(command));
    let id = start(&class.portal, alice, job("true")).await;
    let me = until(&class.portal, alice, &id, &["ended", "failed"], Duration::from_secs(30)).await;
    assert_eq!(me["reason"], "the job finished (exit code 0)", "{me}");
    assert_eq!(me["state"], "ended");
    let id = start(&class.portal, alice, job("sh -c 'sleep 1; exit 3'")).await;
    let me = until(&class.portal, alice, &id, &["ended", "failed"], Duration::from_secs(30)).await;
    assert_eq!(me["reason"], "the job exited with code 3", "{me}");
    assert_eq!((me["state"].as_str(), me["exit_code"].as_i64()), (Some("failed"), Some(3)));

    // Ten claims on seven 1g GRES: seven run, three wait in Slurm with its reason and
    // estimated start.
    let job_body = format!("course_id=1&profile=1g.10gb&image={}&command=sleep+600", urlencode(JUPYTERLAB));
    let mut ids = Vec::new();
    for cookie in &cookies[1..11] {
        ids.push(start(&class.portal, cookie, job_body.clone()).await);
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    let (running, waiting) = loop {
        let mut views = Vec::new();
        for (cookie, id) in cookies[1..11].iter().zip(&ids) {
            views.push(view_of(&class.portal, cookie, id).await);
        }
        let running: Vec<usize> = (0..10).filter(|&i| views[i]["state"] == "ready").collect();
        let waiting: Vec<usize> = (0..10)
            .filter(|&i| views[i]["state"] == "queued" && views[i]["cluster_wait"]["expected_start_ms"].is_i64())
            .collect();
        if running.len() == 7 && waiting.len() == 3 {
            for &i in &waiting {
                let wait = &views[i]["cluster_wait"];
                assert!(["Resources", "Priority"].contains(&wait["reason"].as_str().unwrap()), "{wait}");
                assert!(wait["expected_start_ms"].as_i64().unwrap() > views[i]["requested_at_ms"].as_i64().unwrap());
            }
            let places: Vec<u64> = waiting.iter().map(|&i| views[i]["queue_position"].as_u64().unwrap()).collect();
            assert_eq!(places, vec![1, 2, 3], "Slurm's order, oldest first");
            break (running, waiting);
        }
        assert!(Instant::now() < deadline, "not 7 running and 3 waiting: {views:?}");
        tokio::time::sleep(Duration::from_millis(300)).await;
    };
    let held: usize = cluster.live_jobs().iter().filter(|(job, s)| s == "RUNNING" && *job != outsider).count();
    assert_eq!(held, 7, "Slurm runs the seven");

    // A job cancelled outside the portal ends its session within 5 s; the first waiting
    // claim starts in its place.
    let victim = running[0];
    let victim_view = view_of(&class.portal, &cookies[1 + victim], &ids[victim]).await;
    let victim_job = job_of(&victim_view);
    cluster.ctl(&["scancel", &victim_job.to_string()]);
    let cancelled_at = Instant::now();
    let me = until(&class.portal, &cookies[1 + victim], &ids[victim], &["failed", "ended"], Duration::from_secs(5)).await;
    assert!(cancelled_at.elapsed() <= Duration::from_secs(5));
    assert_eq!(me["reason"], format!("Slurm job {victim_job} was cancelled outside the portal"), "{me}");
    let first = waiting[0];
    until(&class.portal, &cookies[1 + first], &ids[first], &["ready"], Duration::from_secs(30)).await;

    // A portal restart re-adopts the running jobs: same jobs, still ready, still stoppable.
    let before: Vec<(usize, u64)> = {
        let mut r = Vec::new();
        for i in (0..10).filter(|&i| i != victim) {
            let v = view_of(&class.portal, &cookies[1 + i], &ids[i]).await;
            if v["state"] == "ready" {
                r.push((i, job_of(&v)));
            }
        }
        r
    };
    assert_eq!(before.len(), 7);
    class.portal.restart().await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    for &(i, job) in &before {
        let v = view_of(&class.portal, &cookies[1 + i], &ids[i]).await;
        assert_eq!(v["state"], "ready", "adopted after the restart: {v}");
        assert_eq!(job_of(&v), job);
        assert_eq!(cluster.job(job)["JobState"], "RUNNING");
    }
    let adopted = Instant::now();

    // A node taken down fails its sessions with a clear reason, and only those.
    let on_node2: Vec<usize> = before
        .iter()
        .filter(|(_, job)| cluster.job(*job)["NodeList"] == "slurmnode2")
        .map(|(i, _)| *i)
        .collect();
    assert!(!on_node2.is_empty(), "some sessions run on slurmnode2");
    cluster.ctl(&["scontrol", "update", "nodename=slurmnode2", "state=down", "reason=disk replaced"]);
    for &i in &on_node2 {
        let v = until(&class.portal, &cookies[1 + i], &ids[i], &["failed"], Duration::from_secs(10)).await;
        let reason = v["reason"].as_str().unwrap();
        assert!(reason.contains("slurmnode2") && reason.contains("disk replaced"), "{reason}");
    }
    for &(i, _) in before.iter().filter(|(i, _)| !on_node2.contains(i)) {
        assert_eq!(view_of(&class.portal, &cookies[1 + i], &ids[i]).await["state"], "ready");
    }
    cluster.ctl(&["scontrol", "update", "nodename=slurmnode2", "state=resume"]);

    // The controller fails over for a few seconds (an empty job list, errors by id) once
    // the sessions have been quiet past the watcher's grace: nothing is ended or cancelled.
    tokio::time::sleep(Duration::from_secs(32).saturating_sub(adopted.elapsed())).await;
    failover.failing(true);
    tokio::time::sleep(Duration::from_secs(4)).await;
    failover.failing(false);
    tokio::time::sleep(Duration::from_secs(2)).await;
    for &(i, job) in before.iter().filter(|(i, _)| !on_node2.contains(i)) {
        let v = view_of(&class.portal, &cookies[1 + i], &ids[i]).await;
        assert_eq!(v["state"], "ready", "a failover ends nothing: {v}");
        assert_eq!(cluster.job(job)["JobState"], "RUNNING", "a failover cancels nothing");
    }

    // A job cancelled while the portal is down is charged until it ended, not until the
    // restarted portal noticed.
    // So is one that Slurm has forgotten by the time the portal is back (its MinJobAge
    // passed): charged until the watcher last saw it running.
    let still: Vec<(usize, u64)> = before.iter().filter(|(i, _)| !on_node2.contains(i)).copied().collect();
    let [(k, job), (f, forgotten), ..] = still[..] else { panic!("two sessions still running: {still:?}") };
    class.portal.kill_hard();
    let cancelled_at = now_ms();
    cluster.ctl(&["scancel", &job.to_string(), &forgotten.to_string()]);
    failover.forget(Some(forgotten));
    tokio::time::sleep(Duration::from_secs(8)).await;
    class.portal.restart().await;
    until(&class.portal, &cookies[1 + k], &ids[k], &["failed"], Duration::from_secs(15)).await;
    let gone = until(&class.portal, &cookies[1 + f], &ids[f], &["failed"], Duration::from_secs(15)).await;
    assert_eq!(gone["reason"], format!("Slurm no longer knows job {forgotten}"), "{gone}");
    failover.forget(None);
    let store = slicehub_core::store::Store::connect(&database, 1).await.unwrap();
    let rows = store.usage_rows().await.unwrap();
    store.close().await;
    for (i, what) in [(k, "a job cancelled"), (f, "a job Slurm forgot")] {
        let row = rows.iter().find(|r| r.session_id == ids[i]).expect("its usage row");
        let ended = row.ended_at_ms.expect("closed");
        assert!(
            ended < cancelled_at + 3_000,
            "{what} while the portal was down is charged until {} ms after the cancel, the downtime included",
            ended - cancelled_at
        );
    }

    // Everything stopped: no job of the portal is left on the cluster, and the other
    // team's job still runs.
    for (cookie, id) in cookies[1..11].iter().zip(&ids) {
        if view_of(&class.portal, cookie, id).await["live"] == true {
            stop(&class.portal, cookie, id).await;
        }
    }
    let deadline = Instant::now() + Duration::from_secs(15);
    while cluster.live_jobs().iter().any(|(job, _)| *job != outsider) {
        assert!(Instant::now() < deadline, "jobs left: {:?}", cluster.live_jobs());
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    assert_eq!(cluster.job(outsider)["JobState"], "RUNNING", "another team's job is left alone");
    cluster.ctl(&["scancel", &outsider.to_string()]);
}

/// Takes every port a notebook may try on the node (20000 to 40009), answers each request "200 ok" and
/// writes down what it was sent. (The log starts over for each run: "listening" first.)
const SQUATTER: &str = r#"
import getpass, os, resource, selectors, socket
_, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
log = open('/tmp/squat-%s.log' % getpass.getuser(), 'a', buffering=1)
# Two processes, half the ports each: one process may not hold 20,000 sockets.
ready_r, ready_w = os.pipe()
first = os.fork() == 0
sel = selectors.DefaultSelector()
for port in range(20000, 30000) if first else range(30000, 40010):
    s = socket.socket()
    try:
        s.bind(('0.0.0.0', port))
    except OSError:
        s.close()
        continue
    s.listen(8)
    s.setblocking(False)
    sel.register(s, selectors.EVENT_READ)
if first:
    os.write(ready_w, b'x')
else:
    os.read(ready_r, 1)
    log.write('listening\n')
while True:
    for key, _ in sel.select():
        conn, _ = key.fileobj.accept()
        conn.settimeout(2)
        try:
            log.write(conn.recv(4096).decode('latin-1') + '\n---\n')
            conn.sendall(b'HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok')
        except OSError:
            pass
        conn.close()
"#;

/// A file on the first node ("" while it does not exist).
fn node_file(path: &str) -> String {
    let out = std::process::Command::new("docker").args(["exec", "slurmnode1", "cat", path]).output().expect("docker exec runs");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn now_ms() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64
}
