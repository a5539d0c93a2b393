//! GPU sessions through the real portal binary: who may see and stop whose session, the
//! live event stream, and a `kill -9` of the portal in the middle of spawns.
//! Needs the Docker engine and `slicehub/busybox:offline`.

use std::time::{Duration, Instant};

use slicehub_end2end::classroom::{password_of, Classroom};
use slicehub_end2end::form::{client, post, sign_in, urlencode};
use slicehub_end2end::Portal;

const BIN: &str = env!("CARGO_BIN_EXE_slicehub");
const BUSYBOX: &str = "slicehub/busybox:offline";

/// A class on the busybox image, reconciled every second; students named `PREFIX` + name.
async fn lab_portal(prefix: &str, students: &[&str]) -> (Portal, Vec<String>, String) {
    let class = Classroom::start(
        BIN.as_ref(),
        &[
            ("SLICEHUB_SESSIONS_DEFAULT_IMAGE", BUSYBOX),
            ("SLICEHUB_SESSIONS_MEMORY_MIB_PER_MEMORY_SLICE", "128"),
            ("SLICEHUB_SESSIONS_RECONCILE_SECONDS", "1"),
        ],
    )
    .await;
    let names: Vec<String> = students.iter().map(|s| format!("{prefix}{s}")).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let cookies = class.enroll(&names).await;
    (class.portal, cookies, class.admin)
}

async fn start_job(portal: &Portal, cookie: &str, command: &str) -> String {
    let body = format!(
        "course_id=1&profile=1g.10gb&image={}&command={}",
        urlencode(BUSYBOX),
        urlencode(command)
    );
    let resp = post(&client(), &portal.url, Some(cookie), "start_session", body).await;
    let status = resp.status();
    let text = resp.text().await.unwrap();
    assert_eq!(status, 200, "{text}");
    let view: serde_json::Value = serde_json::from_str(&text).unwrap();
    view["id"].as_str().unwrap().to_string()
}

async fn state_of(portal: &Portal, cookie: &str, id: &str) -> String {
    let resp = post(&client(), &portal.url, Some(cookie), "my_sessions", String::new()).await;
    let list: serde_json::Value = resp.json().await.unwrap();
    list.as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == id)
        .map(|s| s["state"].as_str().unwrap().to_string())
        .unwrap_or_default()
}

fn docker_containers(label: &str) -> Vec<String> {
    let out = std::process::Command::new("docker")
        .args(["ps", "-a", "--filter", &format!("label={label}"), "--format", "{{.Names}} {{.State}}"])
        .output()
        .expect("docker CLI");
    String::from_utf8_lossy(&out.stdout).lines().map(str::to_string).collect()
}

#[tokio::test]
async fn only_the_owner_an_instructor_or_an_admin_reach_a_session() {
    let (portal, cookies, admin) = lab_portal("ac-", &["alice", "bob"]).await;
    portal.cli(&["user", "add", "ac-ivy", "--password-stdin"], &format!("{}\n", password_of("ac-ivy")));
    portal.cli(&["course", "instructor", "CS-101", "ac-ivy"], "");
    let ivy = sign_in(&client(), &portal.url, "ac-ivy", &password_of("ac-ivy")).await.unwrap();
    let (alice, bob) = (&cookies[0], &cookies[1]);

    // Alice follows her events while she starts a job.
    let mut events = client()
        .get(format!("{}/api/sessions/events", portal.url))
        .header("cookie", alice.as_str())
        .send()
        .await
        .unwrap();
    assert_eq!(events.status(), 200);
    let id = start_job(&portal, alice, "sh -c 'echo epoch 1; sleep 600'").await;
    let mut seen = String::new();
    let until = Instant::now() + Duration::from_secs(30);
    while !seen.contains("\"state\":\"ready\"") {
        assert!(Instant::now() < until, "no ready event in 30 s: {seen}");
        if let Ok(Ok(Some(chunk))) = tokio::time::timeout(Duration::from_secs(1), events.chunk()).await {
            seen.push_str(&String::from_utf8_lossy(&chunk));
        }
    }
    for step in ["requested", "allocating", "creating", "starting", "ready"] {
        assert!(seen.contains(&format!("\"state\":\"{step}\"")), "{step} missing: {seen}");
    }
    assert!(seen.contains(&id));

    let logs = |who: &str| format!("id={id}&who={who}");
    for (name, cookie, expected) in [("bob", bob, 404), ("ivy", &ivy, 200), ("admin", &admin, 200), ("alice", alice, 200)] {
        let resp = post(&client(), &portal.url, Some(cookie), "session_logs", logs(name)).await;
        assert_eq!(resp.status(), expected, "{name} reading the logs");
    }
    let resp = post(&client(), &portal.url, Some(alice), "session_logs", format!("id={id}")).await;
    assert!(resp.text().await.unwrap().contains("epoch 1"));
    let resp = post(&client(), &portal.url, Some(bob), "stop_session", format!("id={id}")).await;
    assert_eq!(resp.status(), 404, "bob cannot even learn the session exists");
    assert_eq!(state_of(&portal, alice, &id).await, "ready");

    let resp = post(&client(), &portal.url, Some(alice), "stop_session", format!("id={id}")).await;
    assert_eq!(resp.status(), 200);
    assert_eq!(state_of(&portal, alice, &id).await, "ended");
    assert!(docker_containers(&format!("org.slicehub.session={id}")).is_empty());

    // An administrator can stop anyone's session from the command line too.
    let bobs = start_job(&portal, bob, "sleep 600").await;
    let until = Instant::now() + Duration::from_secs(30);
    while state_of(&portal, bob, &bobs).await != "ready" {
        assert!(Instant::now() < until, "bob's job never got ready");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let out = portal.cli(&["session", "stop", &bobs, "--reason", "lab is over"], "");
    assert!(out.contains("ended (lab is over)"), "{out}");
    assert_eq!(state_of(&portal, bob, &bobs).await, "ended");
    assert!(docker_containers(&format!("org.slicehub.session={bobs}")).is_empty());
}

#[tokio::test]
async fn a_portal_killed_mid_spawn_leaks_nothing_after_restart() {
    let students = ["amy", "ben", "cat", "dan", "eve"];
    let (mut portal, cookies, _admin) = lab_portal("kr-", &students).await;
    let mut ids = Vec::new();
    for cookie in &cookies {
        ids.push(start_job(&portal, cookie, "sleep 600").await);
    }
    // The launches run in the background: some are creating containers right now.
    portal.kill_hard();
    portal.restart().await;

    let until = Instant::now() + Duration::from_secs(30);
    loop {
        let listed: serde_json::Value =
            serde_json::from_str(&portal.cli(&["session", "list", "--json"], "")).unwrap();
        let sessions = listed.as_array().unwrap();
        let settled = sessions.iter().all(|s| {
            let state = s["state"].as_str().unwrap();
            matches!(state, "ready" | "failed" | "ended")
        });
        if settled {
            let mut ready = 0;
            for s in sessions {
                let id = s["id"].as_str().unwrap();
                let containers = docker_containers(&format!("org.slicehub.session={id}"));
                match s["state"].as_str().unwrap() {
                    "ready" => {
                        ready += 1;
                        assert_eq!(containers.len(), 1, "{id}: {containers:?}");
                        assert!(containers[0].ends_with("running"), "{containers:?}");
                        assert_eq!(s["usage_open"], true);
                    }
                    _ => {
                        assert!(containers.is_empty(), "orphan container of {id}: {containers:?}");
                        assert_eq!(s["released"], true, "{id} still holds its slice");
                        assert_eq!(s["usage_open"], false, "{id} left a usage row open");
                    }
                }
            }
            let interrupted = sessions
                .iter()
                .filter(|s| s["reason"].as_str().unwrap().contains("portal restarted"))
                .count();
            assert!(interrupted > 0, "the kill came after every launch: {listed}");
            let gpus: serde_json::Value =
                serde_json::from_str(&portal.cli(&["gpu", "inspect", "--json"], "")).unwrap();
            let instances = gpus.to_string().matches("\"gpu_instance_id\"").count();
            assert_eq!(instances, ready, "MIG instances vs ready sessions: {gpus}");
            break;
        }
        assert!(Instant::now() < until, "not settled 30 s after the restart: {listed}");
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    for (id, cookie) in ids.iter().zip(&cookies) {
        if state_of(&portal, cookie, id).await == "ready" {
            post(&client(), &portal.url, Some(cookie), "stop_session", format!("id={id}")).await;
        }
    }
    for id in &ids {
        assert!(docker_containers(&format!("org.slicehub.session={id}")).is_empty());
    }
}
