//! The JupyterHub-compatible API (`/hub/api`) and the REST API (`/api/v1`) as the real
//! PyPI clients speak them, each checked for what its user notices:
//!
//! * nbgrader 0.9.6's `JupyterHubAuthPlugin` reads an instructor's students' courses from
//!   their groups and enrols and drops students through `nbgrader-CODE`;
//! * jupyterhub 6.1.1's `HubAuth` (what a notebook server asks) knows a token by its owner
//!   and takes a made-up one for nobody;
//! * python `requests` pages through every user by `_pagination.next`, as
//!   jupyterhub-idle-culler does;
//! * a client that openapi-python-client 0.29.1 generates from `/api/v1/openapi.json`
//!   lists a student's sessions and stops one.
//!
//! And the attacks: another student's token learns nothing of alice's account, cannot stop
//! or start her server or make tokens for her, and no token makes a token with more scopes
//! than its own; an instructor sees and stops only the servers of their own course.
//!
//! Needs the Python clients in `target/hub-venv`
//! (`python3 -m venv target/hub-venv && target/hub-venv/bin/pip install jupyterhub==6.1.1
//! nbgrader==0.9.6 openapi-python-client==0.29.1`; no network at test time), and for the
//! tests that run a session the Docker engine and `slicehub/busybox:offline`
//! (docker/offline/busybox.sh); a notebook image that never answers is made from it here.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use slicehub_end2end::{workspace_root, Portal};

use crate::common::on_sqlite_then_postgres;

const BIN: &str = env!("CARGO_BIN_EXE_slicehub");
const BUSYBOX: &str = "slicehub/busybox:offline";
/// Everyone the classroom has, the administrator included.
const EVERYONE: [&str; 6] = ["admin", "alice", "bob", "carol", "ian", "ivy"];

// ---------------------------------------------------------------------------------------
// The classroom: a portal, its people and their tokens

/// A portal with two courses: alice studies CS-101 (taught by ivy), bob studies ML-202
/// (taught by ian); carol has an account and no course. Each has a token.
struct Classroom {
    portal: Portal,
    /// read, course:manage, admin
    admin: String,
    /// read, course:manage
    ivy: String,
    /// read, course:manage
    ian: String,
    /// read, sessions
    alice: String,
    /// read, sessions
    bob: String,
}

impl Classroom {
    /// Where JupyterHub clients are told the hub's API is (no trailing `/`: nbgrader
    /// appends paths to it as they are).
    fn hub_api(&self) -> String {
        format!("{}/hub/api", self.portal.url)
    }
}

fn email(user: &str) -> String {
    format!("{user}-secret@example.edu")
}

async fn classroom(database: Option<&str>) -> Classroom {
    classroom_with(database, &[]).await
}

/// [`classroom`] with these further `SLICEHUB_*` settings.
async fn classroom_with(database: Option<&str>, extra: &[(&str, &str)]) -> Classroom {
    let mut env = vec![
        ("SLICEHUB_ADMIN_PASSWORD", "admin-password-1"),
        ("SLICEHUB_GPU_BACKEND", "simulated"),
        ("SLICEHUB_GPU_SIMULATED", "1 x H100-80GB"),
        ("SLICEHUB_SESSIONS_DEFAULT_IMAGE", BUSYBOX),
        ("SLICEHUB_SESSIONS_MEMORY_MIB_PER_MEMORY_SLICE", "128"),
    ];
    if let Some(url) = database {
        env.push(("SLICEHUB_DATABASE_URL", url));
    }
    env.extend_from_slice(extra);
    let portal = Portal::start(BIN.as_ref(), &env).await;
    for user in ["alice", "bob", "carol", "ivy", "ian"] {
        portal.cli(
            &["user", "add", user, "--email", &email(user), "--password-stdin"],
            &format!("{user}-password-1\n"),
        );
    }
    portal.cli(&["course", "add", "CS-101", "Deep Learning"], "");
    portal.cli(&["course", "add", "ML-202", "Machine Learning"], "");
    portal.cli(&["course", "instructor", "CS-101", "ivy"], "");
    portal.cli(&["course", "instructor", "ML-202", "ian"], "");
    portal.cli(&["course", "policy", "CS-101", "--images", BUSYBOX], "");
    let admin = token(&portal, "admin", &["read", "course:manage", "admin"]);
    enrol(&portal, &admin, "CS-101", "alice").await;
    enrol(&portal, &admin, "ML-202", "bob").await;
    Classroom {
        ivy: token(&portal, "ivy", &["read", "course:manage"]),
        ian: token(&portal, "ian", &["read", "course:manage"]),
        alice: token(&portal, "alice", &["read", "sessions"]),
        bob: token(&portal, "bob", &["read", "sessions"]),
        admin,
        portal,
    }
}

/// Enrols `student` in `course` with an administrator's roster import (REST, a CSV body).
async fn enrol(portal: &Portal, admin: &str, course: &str, student: &str) {
    let csv = format!("username,display_name\n{student},{student}\n");
    let resp = reqwest::Client::new()
        .post(format!("{}/api/v1/courses/{course}/roster", portal.url))
        .bearer_auth(admin)
        .header("content-type", "text/csv")
        .body(csv)
        .send()
        .await
        .unwrap();
    let status = resp.status();
    let text = resp.text().await.unwrap();
    assert!(status == 200 && text.contains("\"enrolled\":1"), "enrolling {student} in {course}: {status} {text}");
}

/// A new 30-day token of `user` with these scopes, made with the CLI (which prints the
/// secret alone on standard output; its note to standard error comes along here).
fn token(portal: &Portal, user: &str, scopes: &[&str]) -> String {
    let printed = portal.cli(
        &["token", "create", user, "--name", "hub api tests", "--scope", &scopes.join(","), "--days", "30"],
        "",
    );
    printed
        .lines()
        .find(|l| l.starts_with("shp_"))
        .unwrap_or_else(|| panic!("no token in {printed}"))
        .to_string()
}

/// A token of the right shape that the portal never made.
fn made_up_token() -> String {
    format!("shp_{}", "Q".repeat(43))
}

// ---------------------------------------------------------------------------------------
// HTTP

struct Reply {
    status: u16,
    headers: reqwest::header::HeaderMap,
    body: String,
}

impl Reply {
    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|_| panic!("not JSON ({}): {}", self.status, self.body))
    }
}

/// One request, with `Authorization: token T` (JupyterHub's spelling) when there is a
/// token and a JSON body when there is one.
async fn send(portal: &Portal, method: &str, path: &str, token: Option<&str>, body: Option<Value>) -> Reply {
    let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
    let mut request = reqwest::Client::new().request(method, format!("{}{path}", portal.url));
    if let Some(token) = token {
        request = request.header("authorization", format!("token {token}"));
    }
    if let Some(body) = body {
        request = request.json(&body);
    }
    let resp = tokio::time::timeout(Duration::from_secs(30), request.send())
        .await
        .unwrap_or_else(|_| panic!("{path} did not answer"))
        .unwrap();
    let (status, headers) = (resp.status().as_u16(), resp.headers().clone());
    Reply { status, headers, body: resp.text().await.unwrap_or_default() }
}

async fn get_json(portal: &Portal, path: &str, token: &str) -> Value {
    let reply = send(portal, "GET", path, Some(token), None).await;
    assert_eq!(reply.status, 200, "GET {path}: {}", reply.body);
    reply.json()
}

/// The users of a hub group, as an administrator reads them.
async fn group_users(room: &Classroom, group: &str) -> Vec<String> {
    let group = get_json(&room.portal, &format!("/hub/api/groups/{group}"), &room.admin).await;
    group["users"].as_array().unwrap().iter().map(|u| u.as_str().unwrap().to_string()).collect()
}

/// `user`'s role in `course` as the course page (REST) shows it to an administrator,
/// and whether they are invited.
async fn role_in(room: &Classroom, course: &str, user: &str) -> (Option<String>, bool) {
    let detail = get_json(&room.portal, &format!("/api/v1/courses/{course}"), &room.admin).await;
    let role = detail["members"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["username"] == user)
        .map(|m| m["role"].as_str().unwrap().to_string());
    let invited = detail["invited"].as_array().unwrap().iter().any(|i| i.as_str().unwrap().starts_with(user));
    (role, invited)
}

/// The ids of the live tokens of `token`'s owner, as the REST API lists them.
async fn token_ids(portal: &Portal, token: &str) -> Vec<i64> {
    let tokens = get_json(portal, "/api/v1/tokens", token).await;
    tokens.as_array().unwrap().iter().map(|t| t["id"].as_i64().unwrap()).collect()
}

/// Starts a session for the owner of `token` through the REST API (a job with `command`,
/// else a notebook), with the first profile the launch options offer in `course`; its id.
async fn start_session(room: &Classroom, token: &str, course: &str, image: &str, command: Option<&str>) -> String {
    let options = get_json(&room.portal, "/api/v1/launch-options", token).await;
    let offered = options.as_array().unwrap().iter().find(|c| c["code"] == course);
    let profile = offered.unwrap_or_else(|| panic!("{course} not offered: {options}"))["profiles"][0]["name"].clone();
    let new = json!({ "course": course, "profile": profile, "image": image, "command": command });
    let reply = send(&room.portal, "POST", "/api/v1/sessions", Some(token), Some(new)).await;
    assert_eq!(reply.status, 201, "starting a session in {course}: {}", reply.body);
    reply.json()["id"].as_str().unwrap().to_string()
}

/// Starts a long busybox job in CS-101 for the owner of `token` and waits until it runs.
async fn running_job(room: &Classroom, token: &str) -> String {
    let id = start_session(room, token, "CS-101", BUSYBOX, Some("sleep 600")).await;
    assert_eq!(session_state_within(room, token, &id, &["ready"], Duration::from_secs(60)).await, "ready");
    id
}

/// `slicehub/busybox:offline` with a `slicehub-notebook` that never answers: a notebook of
/// it stays `starting` (a JupyterHub server pending) until the portal gives up on it
/// (`sessions.ready_timeout_seconds`, 180 s). Made here, without a registry, when missing.
const SILENT_NOTEBOOK: &str = "slicehub/busybox:hub-api-silent-notebook";

fn silent_notebook_image() -> &'static str {
    let docker = |args: &[&str]| {
        let out = Command::new("docker").args(args).output().expect("docker runs");
        (out.status.success(), format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)))
    };
    if docker(&["image", "inspect", SILENT_NOTEBOOK]).0 {
        return SILENT_NOTEBOOK;
    }
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
    let name = format!("slicehub-hub-api-test-{}-{nanos}", std::process::id());
    let script = r#"printf '#!/bin/sh\nexec sleep 600\n' > /bin/slicehub-notebook && chmod 755 /bin/slicehub-notebook"#;
    let made = docker(&["run", "--name", &name, "--user", "0:0", BUSYBOX, "sh", "-c", script]);
    assert!(made.0, "cannot make {SILENT_NOTEBOOK} from {BUSYBOX}: {}", made.1);
    let committed = docker(&["commit", "--change", "USER 1000:100", "--change", r#"CMD ["sh"]"#, &name, SILENT_NOTEBOOK]);
    docker(&["rm", &name]);
    assert!(committed.0, "cannot commit {SILENT_NOTEBOOK}: {}", committed.1);
    SILENT_NOTEBOOK
}

/// The state of session `id` once it is one of `wanted`, read by its owner through
/// `GET /api/v1/sessions/{id}`; panics when it is not within `within`.
async fn session_state_within(room: &Classroom, token: &str, id: &str, wanted: &[&str], within: Duration) -> String {
    let until = Instant::now() + within;
    loop {
        let session = get_json(&room.portal, &format!("/api/v1/sessions/{id}"), token).await;
        let state = session["state"].as_str().unwrap_or_default().to_string();
        if wanted.contains(&state.as_str()) {
            return state;
        }
        assert!(Instant::now() < until, "session {id} is {state}, not {wanted:?}, after {within:?}: {session}");
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
}

// ---------------------------------------------------------------------------------------
// Python

fn venv() -> PathBuf {
    let bin = workspace_root().join("target/hub-venv/bin");
    assert!(
        bin.join("python").exists(),
        "{} is missing: python3 -m venv target/hub-venv && target/hub-venv/bin/pip install \
         jupyterhub==6.1.1 nbgrader==0.9.6 openapi-python-client==0.29.1",
        bin.display()
    );
    bin
}

/// The venv's python (or another of its programs) with a clean environment for the
/// clients: no JupyterHub variables from outside, no proxy for the loopback portal.
fn venv_command(program: &str) -> Command {
    let bin = venv();
    let mut command = Command::new(bin.join(program));
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    command.env("PATH", path).env("NO_PROXY", "127.0.0.1,localhost").env("no_proxy", "127.0.0.1,localhost");
    for (name, _) in std::env::vars().filter(|(k, _)| k.starts_with("JUPYTERHUB_")) {
        command.env_remove(name);
    }
    command
}

/// Runs `script` (`python -c`) with these arguments in `dir`; its standard output, or a
/// panic with all it printed.
fn python(script: &str, args: &[&str], dir: &Path) -> String {
    let out = venv_command("python").arg("-c").arg(script).args(args).current_dir(dir).output().expect("python runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "python failed:\n{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    stdout
}

/// One JSON value per line of a script's output.
fn json_lines(out: &str) -> Vec<Value> {
    out.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|_| panic!("not JSON: {l}"))).collect()
}

/// Answers each line `{"token", "user", "call", "args"}` with nbgrader's plugin, setting the
/// environment nbgrader reads at every call; one line back, `{"ok": …}` or `{"raised": …}`.
const NBGRADER: &str = r#"
import json, os, sys
from nbgrader.auth.jupyterhub import JupyterHubAuthPlugin
plugin = JupyterHubAuthPlugin()
for line in sys.stdin:
    ask = json.loads(line)
    os.environ["JUPYTERHUB_API_TOKEN"] = ask["token"]
    os.environ["JUPYTERHUB_USER"] = ask["user"]
    try:
        result = getattr(plugin, ask["call"])(*ask["args"])
        answer = {"ok": sorted(result) if isinstance(result, list) else result}
    except Exception as e:
        answer = {"raised": "%s: %s" % (type(e).__name__, e)}
    print(json.dumps(answer), flush=True)
"#;

/// nbgrader's JupyterHub auth plugin in one Python process (importing nbgrader takes
/// seconds), called as a given person with their token.
struct Nbgrader {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    log: tempfile::NamedTempFile,
}

impl Nbgrader {
    fn start(hub_api: &str) -> Nbgrader {
        let log = tempfile::NamedTempFile::new().unwrap();
        let mut child = venv_command("python")
            .arg("-c")
            .arg(NBGRADER)
            .env("JUPYTERHUB_API_URL", hub_api)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(log.reopen().unwrap()))
            .spawn()
            .expect("python runs");
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Nbgrader { stdin: child.stdin.take(), child, lines, log }
    }

    /// `plugin.CALL(*args)` as `user` with `token`: what it returned, or what it raised.
    fn call(&mut self, token: &str, user: &str, call: &str, args: &[&str]) -> Result<Value, String> {
        let ask = json!({ "token": token, "user": user, "call": call, "args": args });
        writeln!(self.stdin.as_mut().unwrap(), "{ask}").expect("nbgrader's process reads");
        let line = self.lines.recv_timeout(Duration::from_secs(90)).unwrap_or_else(|_| {
            panic!("nbgrader did not answer {ask}:\n{}", std::fs::read_to_string(self.log.path()).unwrap_or_default())
        });
        let answer: Value = serde_json::from_str(&line).unwrap();
        match answer.get("raised") {
            Some(raised) => Err(raised.as_str().unwrap().to_string()),
            None => Ok(answer["ok"].clone()),
        }
    }
}

impl Drop for Nbgrader {
    fn drop(&mut self) {
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline && matches!(self.child.try_wait(), Ok(None)) {
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

// ---------------------------------------------------------------------------------------
// 1. nbgrader

#[tokio::test]
async fn nbgrader_reads_courses_and_changes_rosters_through_the_hub_groups() {
    on_sqlite_then_postgres(|database| async move { nbgrader_groups(database.as_deref()).await }).await;
}

async fn nbgrader_groups(database: Option<&str>) {
    let room = classroom(database).await;
    let mut nbgrader = Nbgrader::start(&room.hub_api());
    let cs101 = json!(["CS-101"]);

    // ivy's formgrader sees her student's course, and her own courses (`*` is herself).
    assert_eq!(nbgrader.call(&room.ivy, "ivy", "get_student_courses", &["alice"]), Ok(cs101.clone()));
    assert_eq!(nbgrader.call(&room.ivy, "ivy", "get_student_courses", &["*"]), Ok(cs101.clone()));
    // alice's own `nbgrader list` sees hers.
    assert_eq!(nbgrader.call(&room.alice, "alice", "get_student_courses", &["*"]), Ok(cs101.clone()));

    // Someone else's student is no one to an instructor: 404, as for no such account.
    for (token, instructor, student) in [(&room.ivy, "ivy", "bob"), (&room.ian, "ian", "alice")] {
        let refused = nbgrader.call(token, instructor, "get_student_courses", &[student]).unwrap_err();
        assert!(refused.contains("status code of: 404"), "{instructor} asking for {student}: {refused}");
    }
    let bob = send(&room.portal, "GET", "/hub/api/users/bob", Some(&room.ivy), None).await;
    let nobody = send(&room.portal, "GET", "/hub/api/users/nobody", Some(&room.ivy), None).await;
    assert_eq!((bob.status, nobody.status), (404, 404));
    assert_eq!(bob.body.replace("bob", "NAME"), nobody.body.replace("nobody", "NAME"), "bob told apart from no one");

    // An instructor's add only invites an existing account: carol is no student yet.
    assert_eq!(nbgrader.call(&room.ivy, "ivy", "add_student_to_course", &["carol", "CS-101"]), Ok(Value::Null));
    assert_eq!(group_users(&room, "nbgrader-CS-101").await, ["alice"], "ivy's add enrolled carol");
    assert_eq!(role_in(&room, "CS-101", "carol").await, (None, true), "carol should be invited only");

    // An administrator's add enrols her: the course page lists her, her group has her,
    // and nbgrader gives her the course.
    assert_eq!(nbgrader.call(&room.admin, "admin", "add_student_to_course", &["carol", "CS-101"]), Ok(Value::Null));
    assert_eq!(role_in(&room, "CS-101", "carol").await.0.as_deref(), Some("student"));
    assert_eq!(group_users(&room, "nbgrader-CS-101").await, ["alice", "carol"]);
    assert_eq!(nbgrader.call(&room.admin, "admin", "get_student_courses", &["carol"]), Ok(cs101.clone()));
    assert_eq!(nbgrader.call(&room.ivy, "ivy", "get_student_courses", &["carol"]), Ok(cs101.clone()));

    // ... and the remove drops her again.
    assert_eq!(nbgrader.call(&room.admin, "admin", "remove_student_from_course", &["carol", "CS-101"]), Ok(Value::Null));
    assert_eq!(role_in(&room, "CS-101", "carol").await.0, None);
    assert_eq!(group_users(&room, "nbgrader-CS-101").await, ["alice"]);
    assert_eq!(nbgrader.call(&room.admin, "admin", "get_student_courses", &["carol"]), Ok(json!([])));
    // Taking her out again is done already, as on JupyterHub: 200 and the group as it is.
    let carol = json!({ "users": ["carol"] });
    let again = send(&room.portal, "DELETE", "/hub/api/groups/nbgrader-CS-101/users", Some(&room.admin), Some(carol)).await;
    assert_eq!((again.status, again.json()["users"].clone()), (200, json!(["alice"])), "{}", again.body);

    // A student sees no groups and changes none, whether through nbgrader or by hand.
    let listed = send(&room.portal, "GET", "/hub/api/groups", Some(&room.alice), None).await;
    assert_eq!((listed.status, listed.json()), (200, json!([])));
    assert_eq!(nbgrader.call(&room.alice, "alice", "add_student_to_course", &["carol", "CS-101"]), Ok(Value::Null));
    let members = json!({ "users": ["carol"] });
    let added = send(&room.portal, "POST", "/hub/api/groups/nbgrader-CS-101/users", Some(&room.alice), Some(members)).await;
    assert_eq!(added.status, 403, "{}", added.body);
    let members = json!({ "users": ["alice"] });
    let removed = send(&room.portal, "DELETE", "/hub/api/groups/nbgrader-CS-101/users", Some(&room.alice), Some(members)).await;
    assert_eq!(removed.status, 403, "{}", removed.body);
    assert_eq!(group_users(&room, "nbgrader-CS-101").await, ["alice"], "a student changed the roster");
    assert_eq!(role_in(&room, "CS-101", "carol").await, (None, false), "a student's add invited carol");
}

// ---------------------------------------------------------------------------------------
// 2. HubAuth, as a notebook server asks who a token is

/// `HubAuth.user_for_token` for each token after the first two arguments (the API URL and
/// the service's own token); one JSON line each, `null` for "no user".
const HUB_AUTH: &str = r#"
import json, sys
from jupyterhub.services.auth import HubAuth
auth = HubAuth(api_url=sys.argv[1], api_token=sys.argv[2], cache_max_age=0)
for token in sys.argv[3:]:
    print(json.dumps(auth.user_for_token(token)), flush=True)
"#;

#[tokio::test]
async fn hub_auth_knows_a_token_by_its_owner_and_a_made_up_one_as_nobody() {
    let room = classroom(None).await;
    let here = tempfile::tempdir().unwrap();

    // jupyterhub-singleuser's start-up check: the version header, without a token.
    for path in ["/hub/api", "/hub/api/"] {
        let reply = send(&room.portal, "GET", path, None, None).await;
        assert_eq!(reply.status, 200, "{path}: {}", reply.body);
        let version = reply.headers.get("x-jupyterhub-version").map(|v| v.to_str().unwrap().to_string());
        assert_eq!(version.as_deref(), Some("6.1.1"), "{path}");
    }

    let made_up = made_up_token();
    let out = python(HUB_AUTH, &[&room.hub_api(), &room.alice, &room.alice, &room.bob, &made_up], here.path());
    let [alice, bob, nobody] = <[Value; 3]>::try_from(json_lines(&out)).unwrap_or_else(|v| panic!("{v:?}"));
    let scopes = |model: &Value| -> Vec<String> {
        model["scopes"].as_array().unwrap_or_else(|| panic!("no scopes: {model}")).iter().map(|s| s.as_str().unwrap().into()).collect()
    };
    assert_eq!(alice["name"], "alice", "{alice}");
    assert_eq!(alice["groups"], json!(["nbgrader-CS-101"]), "{alice}");
    assert!(scopes(&alice).contains(&"access:servers!user=alice".to_string()), "{alice}");
    // bob's token opens bob's server, never alice's.
    assert_eq!(bob["name"], "bob", "{bob}");
    assert!(scopes(&bob).contains(&"access:servers!user=bob".to_string()), "{bob}");
    assert!(!bob.to_string().contains("alice"), "{bob}");
    // A token the portal never made is nobody: 403, which HubAuth takes for "no user"
    // (a 401 would make a notebook server answer 500).
    assert_eq!(nobody, Value::Null);
    let reply = send(&room.portal, "GET", "/hub/api/user", Some(&made_up), None).await;
    assert_eq!(reply.status, 403, "{}", reply.body);
}

// ---------------------------------------------------------------------------------------
// 3. Pagination

/// Follows `_pagination.next.url` as it is given (jupyterhub-idle-culler's way) from
/// `users?limit=2`; one JSON list of the pages, each its status and names or its body.
const PAGES: &str = r#"
import json, sys, requests
url, token = sys.argv[1] + "/users?limit=2", sys.argv[2]
headers = {"Authorization": "token " + token, "Accept": "application/jupyterhub-pagination+json"}
pages = []
while url and len(pages) < 20:
    r = requests.get(url, headers=headers, timeout=30)
    if r.status_code != 200:
        pages.append({"status": r.status_code, "body": r.text})
        break
    body = r.json()
    pages.append({"status": 200, "names": [u["name"] for u in body["items"]], "pagination": body["_pagination"]})
    url = (body["_pagination"]["next"] or {}).get("url")
print(json.dumps(pages))
"#;

#[tokio::test]
async fn an_administrator_pages_through_every_user_and_no_one_else_lists_them() {
    on_sqlite_then_postgres(|database| async move { paging(database.as_deref()).await }).await;
}

async fn paging(database: Option<&str>) {
    let room = classroom(database).await;
    let here = tempfile::tempdir().unwrap();
    let pages: Value = serde_json::from_str(&python(PAGES, &[&room.hub_api(), &room.admin], here.path())).unwrap();
    let pages = pages.as_array().unwrap();
    let mut names = Vec::new();
    for (i, page) in pages.iter().enumerate() {
        assert_eq!(page["status"], 200, "page {i}: {page}");
        let pagination = &page["pagination"];
        assert_eq!((pagination["offset"].as_u64(), pagination["limit"].as_u64()), (Some(2 * i as u64), Some(2)), "{page}");
        assert_eq!(pagination["total"], EVERYONE.len(), "{page}");
        let on_page = page["names"].as_array().unwrap();
        assert!(!on_page.is_empty() && on_page.len() <= 2, "{page}");
        names.extend(on_page.iter().map(|n| n.as_str().unwrap().to_string()));
    }
    assert_eq!(pages.len(), 3, "{pages:?}");
    assert!(pages[2]["pagination"]["next"].is_null(), "{pages:?}");
    names.sort();
    assert_eq!(names, EVERYONE, "every user once: {pages:?}");

    // Without the pagination media type, a plain list of everyone (older clients).
    let all = get_json(&room.portal, "/hub/api/users", &room.admin).await;
    assert_eq!(all.as_array().map(Vec::len), Some(EVERYONE.len()), "{all}");

    // An instructor or a student lists no one, paged or not.
    for token in [&room.ivy, &room.alice] {
        let pages: Value = serde_json::from_str(&python(PAGES, &[&room.hub_api(), token], here.path())).unwrap();
        assert_eq!(pages[0]["status"], 403, "{pages}");
        assert!(!pages.to_string().contains("carol"), "{pages}");
        let plain = send(&room.portal, "GET", "/hub/api/users", Some(token), None).await;
        assert_eq!(plain.status, 403, "{}", plain.body);
    }
}

// ---------------------------------------------------------------------------------------
// 4. A client generated from the OpenAPI document

/// With the generated package `slicehub_client` beside it: lists the caller's sessions,
/// stops the running one, and lists with a made-up token. One JSON line.
const GENERATED_CLIENT: &str = r#"
import json, sys
from slicehub_client import AuthenticatedClient
from slicehub_client.api.sessions import list_, stop
base, token, stranger = sys.argv[1], sys.argv[2], sys.argv[3]
with AuthenticatedClient(base_url=base, token=token, prefix="Bearer", raise_on_unexpected_status=True) as client:
    sessions = list_.sync(client=client)
    running = [s for s in sessions if s.state.value == "ready"]
    stopped = stop.sync_detailed(id=running[0].id, client=client) if running else None
with AuthenticatedClient(base_url=base, token=stranger, prefix="Bearer") as client:
    refused = list_.sync(client=client)
print(json.dumps({
    "listed": [{"id": s.id, "state": s.state.value, "kind": s.kind.value} for s in sessions],
    "stopped": running[0].id if running else None,
    "stop_status": stopped.status_code if stopped else None,
    "stranger": {"answer": type(refused).__name__, "status": getattr(refused, "status", None)},
}))
"#;

#[tokio::test]
async fn a_client_generated_from_the_openapi_document_lists_and_stops_a_session() {
    let room = classroom(None).await;
    let here = tempfile::tempdir().unwrap();

    // The document is for everyone; the generator works offline from the file.
    let document = send(&room.portal, "GET", "/api/v1/openapi.json", None, None).await;
    assert_eq!(document.status, 200, "{}", document.body);
    std::fs::write(here.path().join("openapi.json"), &document.body).unwrap();
    let out = venv_command("openapi-python-client")
        .args(["generate", "--path", "openapi.json", "--output-path", "slicehub_client", "--meta", "none"])
        .current_dir(here.path())
        .output()
        .expect("openapi-python-client runs");
    let printed = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "openapi-python-client rejected /api/v1/openapi.json:\n{printed}");
    for (file, endpoint) in [("list_.py", "GET /sessions"), ("stop.py", "DELETE /sessions/{id}")] {
        let generated = here.path().join("slicehub_client/api/sessions").join(file);
        assert!(generated.exists(), "the generated client has no {endpoint}:\n{printed}");
    }

    // alice runs a job; her script finds it and stops it.
    let session = running_job(&room, &room.alice).await;
    let base = format!("{}/api/v1", room.portal.url);
    let out = python(GENERATED_CLIENT, &[&base, &room.alice, &made_up_token()], here.path());
    let result: Value = serde_json::from_str(out.trim()).unwrap_or_else(|_| panic!("{out}"));
    assert_eq!(result["listed"], json!([{ "id": session, "state": "ready", "kind": "job" }]), "{result}");
    assert_eq!(result["stopped"], session.as_str(), "{result}");
    assert_eq!(result["stop_status"], 204, "{result}");
    // A made-up token gets the documented refusal, parsed as the error model.
    assert_eq!(result["stranger"], json!({ "answer": "AppError", "status": 401 }), "{result}");

    let state = session_state_within(&room, &room.alice, &session, &["ended", "failed"], Duration::from_secs(60)).await;
    assert_eq!(state, "ended", "a stopped session ends, it does not fail");
}

// ---------------------------------------------------------------------------------------
// 5. Attacks on the hub API

#[tokio::test]
async fn another_students_token_reaches_nothing_of_alices_and_makes_no_stronger_token() {
    on_sqlite_then_postgres(|database| async move { attacks(database.as_deref()).await }).await;
}

async fn attacks(database: Option<&str>) {
    let room = classroom(database).await;
    let session = running_job(&room, &room.alice).await;
    let portal = &room.portal;
    let bob = Some(room.bob.as_str());
    let alices_tokens = token_ids(portal, &room.alice).await;
    let mut replies = Vec::new();

    // alice's account is as if it did not exist.
    let seen = send(portal, "GET", "/hub/api/users/alice", bob, None).await;
    let nobody = send(portal, "GET", "/hub/api/users/nobody", bob, None).await;
    assert_eq!((seen.status, nobody.status), (404, 404), "{}", seen.body);
    assert_eq!(seen.body.replace("alice", "NAME"), nobody.body.replace("nobody", "NAME"), "alice told apart from no one");
    replies.push(("GET /hub/api/users/alice", seen));

    // Her server: not stopped, not started in her name, not followed.
    let stop = send(portal, "DELETE", "/hub/api/users/alice/server", bob, None).await;
    assert_eq!(stop.status, 404, "{}", stop.body);
    replies.push(("DELETE /hub/api/users/alice/server", stop));
    let options = json!({ "user_options": { "course": "CS-101", "image": BUSYBOX } });
    let start = send(portal, "POST", "/hub/api/users/alice/server", bob, Some(options.clone())).await;
    assert!([403, 404].contains(&start.status), "{} {}", start.status, start.body);
    replies.push(("POST /hub/api/users/alice/server", start));
    let progress = send(portal, "GET", "/hub/api/users/alice/server/progress", bob, None).await;
    assert_eq!(progress.status, 404, "{}", progress.body);
    replies.push(("GET /hub/api/users/alice/server/progress", progress));
    // Her instructor may read her account, but starts nothing in her name.
    let start = send(portal, "POST", "/hub/api/users/alice/server", Some(&room.ivy), Some(options)).await;
    assert_eq!(start.status, 403, "{}", start.body);

    // Her tokens: none listed, none made.
    let asked = json!({ "note": "mine now", "scopes": ["read", "sessions"] });
    let made = send(portal, "POST", "/hub/api/users/alice/tokens", bob, Some(asked)).await;
    assert!([403, 404].contains(&made.status), "{} {}", made.status, made.body);
    replies.push(("POST /hub/api/users/alice/tokens", made));
    let listed = send(portal, "GET", "/hub/api/users/alice/tokens", bob, None).await;
    assert!([403, 404].contains(&listed.status), "{} {}", listed.status, listed.body);
    replies.push(("GET /hub/api/users/alice/tokens", listed));

    for (what, reply) in &replies {
        for secret in [email("alice"), session.clone(), "shp_".to_string()] {
            assert!(!reply.body.contains(&secret), "{what} as bob shows {secret}: {}", reply.body);
        }
    }

    // No token makes a token with a scope it lacks: bob's read-only token asks for admin
    // (or sessions) for himself and is refused, and he holds no new token.
    let read_only = token(portal, "bob", &["read"]);
    let bobs_tokens = token_ids(portal, &room.bob).await;
    for scopes in [json!(["admin"]), json!(["read", "sessions"]), json!(["course:manage"])] {
        let asked = json!({ "note": "stronger", "scopes": scopes });
        let made = send(portal, "POST", "/hub/api/users/bob/tokens", Some(&read_only), Some(asked)).await;
        assert_eq!(made.status, 403, "{scopes}: {}", made.body);
        assert!(!made.body.contains("shp_"), "{}", made.body);
    }
    let asked = json!({ "note": "admin please", "scopes": ["admin"] });
    let made = send(portal, "POST", "/hub/api/users/bob/tokens", bob, Some(asked)).await;
    assert_eq!(made.status, 403, "{}", made.body);
    assert_eq!(token_ids(portal, &room.bob).await, bobs_tokens, "bob got a new token");
    // What a read-only token may make: a read-only token, shown once.
    let asked = json!({ "note": "read only", "scopes": ["read"] });
    let made = send(portal, "POST", "/hub/api/users/bob/tokens", Some(&read_only), Some(asked)).await;
    assert_eq!(made.status, 201, "{}", made.body);
    assert_eq!(made.json()["scopes"], json!(["read"]), "{}", made.body);
    assert!(made.json()["token"].as_str().is_some_and(|t| t.starts_with("shp_")), "{}", made.body);

    // After all of it: alice's job runs on, hers alone; bob has none; her tokens are hers.
    let alices = get_json(portal, "/api/v1/sessions", &room.alice).await;
    let live: Vec<(&str, &str)> =
        alices.as_array().unwrap().iter().map(|s| (s["id"].as_str().unwrap(), s["state"].as_str().unwrap())).collect();
    assert_eq!(live, [(session.as_str(), "ready")], "{alices}");
    assert_eq!(get_json(portal, "/api/v1/sessions", &room.bob).await, json!([]));
    assert_eq!(token_ids(portal, &room.alice).await, alices_tokens, "alice's tokens changed");

    let stopped = send(portal, "DELETE", &format!("/api/v1/sessions/{session}"), Some(&room.alice), None).await;
    assert_eq!(stopped.status, 204, "{}", stopped.body);
    session_state_within(&room, &room.alice, &session, &["ended"], Duration::from_secs(60)).await;
}

/// alice studies both courses and starts a notebook in ML-202: ian, who teaches it, sees
/// her server starting; ivy, who teaches her only CS-101, learns nothing of it (not its
/// id, course or image), and can neither stop nor follow it. alice stops it herself.
#[tokio::test]
async fn an_instructor_sees_and_stops_only_the_servers_of_their_own_course() {
    let image = silent_notebook_image();
    let room = classroom_with(None, &[("SLICEHUB_SESSIONS_IMAGES", image)]).await;
    let portal = &room.portal;
    enrol(portal, &room.admin, "ML-202", "alice").await;
    portal.cli(&["course", "policy", "ML-202", "--images", image], "");
    let session = start_session(&room, &room.alice, "ML-202", image, None).await;
    session_state_within(&room, &room.alice, &session, &["starting"], Duration::from_secs(60)).await;

    let ians = get_json(portal, "/hub/api/users/alice", &room.ian).await;
    assert_eq!(ians["groups"], json!(["nbgrader-ML-202"]), "{ians}");
    assert_eq!(ians["pending"], "spawn", "{ians}");
    assert!(ians["servers"][""]["url"].as_str().is_some_and(|u| u.contains(&session)), "{ians}");

    let ivys = send(portal, "GET", "/hub/api/users/alice", Some(&room.ivy), None).await;
    assert_eq!(ivys.status, 200, "{}", ivys.body);
    assert_eq!(ivys.json()["groups"], json!(["nbgrader-CS-101"]), "{}", ivys.body);
    assert_eq!((ivys.json()["servers"].clone(), ivys.json()["pending"].clone()), (json!({}), Value::Null), "{}", ivys.body);
    let ivy = token(portal, "ivy", &["read", "sessions"]);
    let stop = send(portal, "DELETE", "/hub/api/users/alice/server", Some(&ivy), None).await;
    assert_eq!(stop.status, 204, "nothing of hers ivy may stop: {}", stop.body);
    let progress = send(portal, "GET", "/hub/api/users/alice/server/progress", Some(&ivy), None).await;
    assert_eq!(progress.status, 404, "{}", progress.body);
    for (what, reply) in [("GET", &ivys), ("DELETE server", &stop), ("GET progress", &progress)] {
        for secret in [session.as_str(), "ML-202", image] {
            assert!(!reply.body.contains(secret), "{what} shows ivy {secret}: {}", reply.body);
        }
    }
    assert_eq!(get_json(portal, &format!("/api/v1/sessions/{session}"), &room.alice).await["state"], "starting");

    // Her own stop, JupyterHub's way: accepted, and the notebook ends.
    let stop = send(portal, "DELETE", "/hub/api/users/alice/server", Some(&room.alice), None).await;
    assert_eq!(stop.status, 202, "{}", stop.body);
    session_state_within(&room, &room.alice, &session, &["ended"], Duration::from_secs(60)).await;
}
