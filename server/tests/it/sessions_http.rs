//! GPU sessions through the real portal binary: who may see and stop whose session, the
//! live event stream, a `kill -9` of the portal in the middle of spawns, and twenty of them
//! at random moments of launches and stops on SQLite and PostgreSQL.
//! Needs the Docker engine and `slicehub/busybox:offline`.

use std::time::{Duration, Instant};

use slicehub_end2end::classroom::{password_of, Classroom};
use slicehub_end2end::form::{client, post, sign_in, urlencode};
use slicehub_end2end::Portal;

use crate::common::postgres_database;

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

/// The caller's session event stream, opened.
async fn follow_events(portal: &Portal, cookie: &str) -> reqwest::Response {
    client()
        .get(format!("{}/api/sessions/events", portal.url))
        .header("cookie", cookie)
        .send()
        .await
        .unwrap()
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
    let mut events = follow_events(&portal, alice).await;
    assert_eq!(events.status(), 200);
    // Bob follows his own, which must carry nothing of hers.
    let mut bobs_events = follow_events(&portal, bob).await;
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
    // Each event carries her sessions as her page shows them: the job's command among them.
    assert!(seen.contains("\"sessions\":[") && seen.contains("echo epoch 1"), "{seen}");
    let mut bob_saw = String::new();
    let until = Instant::now() + Duration::from_secs(1);
    while Instant::now() < until {
        if let Ok(Ok(Some(chunk))) = tokio::time::timeout(Duration::from_millis(200), bobs_events.chunk()).await {
            bob_saw.push_str(&String::from_utf8_lossy(&chunk));
        }
    }
    assert!(!bob_saw.contains(&id) && !bob_saw.contains("epoch"), "bob's stream carried alice's session: {bob_saw}");

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
    // Another process stopped it: the portal's remembered answer catches up within 2 s.
    let until = Instant::now() + Duration::from_secs(5);
    while state_of(&portal, bob, &bobs).await != "ended" {
        assert!(Instant::now() < until, "bob's page never showed the stop made from the command line");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(docker_containers(&format!("org.slicehub.session={bobs}")).is_empty());

    // Alice signs out with her stream still open: it carries none of her sessions after
    // that, only "read again", and ends (her page would reconnect as whoever she is then).
    let last = start_job(&portal, alice, "sleep 600").await;
    let until = Instant::now() + Duration::from_secs(30);
    while state_of(&portal, alice, &last).await != "ready" {
        assert!(Instant::now() < until, "alice's last job never got ready");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    while let Ok(Ok(Some(_))) = tokio::time::timeout(Duration::from_millis(500), events.chunk()).await {}
    post(&client(), &portal.url, Some(alice), "logout", String::new()).await;
    let resp = post(&client(), &portal.url, Some(&admin), "stop_session", format!("id={last}")).await;
    assert_eq!(resp.status(), 200, "an administrator stops alice's job");
    let mut after = String::new();
    let until = Instant::now() + Duration::from_secs(15);
    loop {
        match tokio::time::timeout(Duration::from_secs(1), events.chunk()).await {
            Ok(Ok(Some(chunk))) => after.push_str(&String::from_utf8_lossy(&chunk)),
            Ok(_) => break,
            Err(_) => assert!(Instant::now() < until, "the stream went on after she signed out: {after}"),
        }
    }
    assert!(after.contains("lagged") && !after.contains("sessions") && !after.contains(&last), "{after}");
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

/// Twenty `kill -9`s at random moments of launches and stops, each followed by a restart:
/// afterwards no orphan container, no slice held by an ended session, no usage row left
/// open, no session stuck between states, no placement held twice, and as many MIG
/// instances as sessions holding slices.
async fn twenty_kills_leave_nothing_behind(database_url: Option<String>, prefix: &str) {
    let students = ["a", "b", "c", "d"];
    let mut env = vec![
        ("SLICEHUB_SESSIONS_DEFAULT_IMAGE", BUSYBOX.to_string()),
        ("SLICEHUB_SESSIONS_MEMORY_MIB_PER_MEMORY_SLICE", "128".to_string()),
        ("SLICEHUB_SESSIONS_RECONCILE_SECONDS", "1".to_string()),
    ];
    if let Some(url) = &database_url {
        env.push(("SLICEHUB_DATABASE_URL", url.clone()));
    }
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let class = Classroom::start(BIN.as_ref(), &env).await;
    let names: Vec<String> = students.iter().map(|s| format!("{prefix}{s}")).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let cookies = class.enroll(&names).await;
    let mut portal = class.portal;
    let mut seed = u64::from(std::process::id()).wrapping_mul(6364136223846793005);
    let mut next = |n: u64| {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (seed >> 33) % n
    };
    for _ in 0..20 {
        // Every student either starts a job or stops the one they have, all at once.
        for cookie in &cookies {
            let url = portal.url.clone();
            let cookie = cookie.clone();
            tokio::spawn(async move {
                let resp = post(&client(), &url, Some(&cookie), "my_sessions", String::new()).await;
                let list: serde_json::Value = resp.json().await.unwrap_or_default();
                let live = list.as_array().and_then(|l| {
                    l.iter().find(|s| !matches!(s["state"].as_str(), Some("ended" | "failed")))
                        .map(|s| s["id"].as_str().unwrap_or_default().to_string())
                });
                let (function, body) = match live {
                    Some(id) => ("stop_session", format!("id={id}")),
                    None => ("start_session", format!(
                        "course_id=1&profile=1g.10gb&image={}&command=sleep+600", urlencode(BUSYBOX))),
                };
                let _ = post(&client(), &url, Some(&cookie), function, body).await;
            });
        }
        tokio::time::sleep(Duration::from_millis(next(600))).await;
        portal.kill_hard();
        portal.restart().await;
    }

    let until = Instant::now() + Duration::from_secs(40);
    loop {
        let listed: serde_json::Value =
            serde_json::from_str(&portal.cli(&["session", "list", "--json"], "")).unwrap();
        let sessions = listed.as_array().unwrap().clone();
        let settled = sessions
            .iter()
            .all(|s| matches!(s["state"].as_str().unwrap(), "ready" | "queued" | "failed" | "ended"));
        if settled {
            assert!(sessions.len() >= 8, "the kills came at launches and stops: {listed}");
            let mut placements = std::collections::HashSet::new();
            let mut holding = 0;
            for s in &sessions {
                let id = s["id"].as_str().unwrap();
                let containers = docker_containers(&format!("org.slicehub.session={id}"));
                if s["state"] == "ready" {
                    holding += 1;
                    assert_eq!(containers.len(), 1, "{id}: {containers:?}");
                    let placement = s["placement"].as_str().unwrap().to_string();
                    assert!(placements.insert(placement.clone()), "{placement} held twice: {listed}");
                } else {
                    assert!(containers.is_empty(), "orphan container of {id}: {containers:?}");
                }
                if matches!(s["state"].as_str().unwrap(), "ended" | "failed") {
                    assert_eq!(s["released"], true, "{id} ended but holds its slice");
                    assert_eq!(s["usage_open"], false, "{id} ended with its usage open");
                }
            }
            let gpus: serde_json::Value =
                serde_json::from_str(&portal.cli(&["gpu", "inspect", "--json"], "")).unwrap();
            let instances = gpus.to_string().matches("\"gpu_instance_id\"").count();
            assert_eq!(instances, holding, "MIG instances vs sessions holding slices: {gpus}");
            break;
        }
        assert!(Instant::now() < until, "not settled 40 s after the last restart: {listed}");
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    for cookie in &cookies {
        let resp = post(&client(), &portal.url, Some(cookie), "my_sessions", String::new()).await;
        let list: serde_json::Value = resp.json().await.unwrap();
        for s in list.as_array().unwrap() {
            if s["state"] == "ready" || s["state"] == "queued" {
                let id = s["id"].as_str().unwrap();
                post(&client(), &portal.url, Some(cookie), "stop_session", format!("id={id}")).await;
            }
        }
    }
}

#[tokio::test]
async fn twenty_kills_at_random_moments_leave_nothing_behind_on_sqlite() {
    twenty_kills_leave_nothing_behind(None, "ks-").await;
}

#[tokio::test]
async fn twenty_kills_at_random_moments_leave_nothing_behind_on_postgres() {
    match postgres_database().await {
        Some(url) => twenty_kills_leave_nothing_behind(Some(url), "kp-").await,
        None => assert_eq!(
            std::env::var("SLICEHUB_SKIP_POSTGRES").as_deref(),
            Ok("1"),
            "SLICEHUB_TEST_DATABASE_URL is not set: run the tests through scripts/test.sh"
        ),
    }
}

/// The history reaches every past session, page by page, however many there are (the
/// sessions page once listed only the last 50).
#[tokio::test]
async fn the_history_reaches_every_past_session() {
    let (portal, cookies, _admin) = lab_portal("hist-", &["kim"]).await;
    let kim = &cookies[0];
    let mut ids = Vec::new();
    for _ in 0..57 {
        let id = start_job(&portal, kim, "true").await;
        let until = Instant::now() + Duration::from_secs(30);
        while !matches!(state_of(&portal, kim, &id).await.as_str(), "ended" | "failed") {
            assert!(Instant::now() < until, "{id} never ended");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        ids.push(id);
    }
    let mut seen = Vec::new();
    for page in 0.. {
        let resp = post(&client(), &portal.url, Some(kim), "session_history", format!("page={page}")).await;
        assert_eq!(resp.status(), 200);
        let history: serde_json::Value = resp.json().await.unwrap();
        assert_eq!(history["pages"], 12, "57 sessions, 5 a page: {history}");
        assert_eq!(history["page"], page.min(11));
        for s in history["sessions"].as_array().unwrap() {
            seen.push(s["id"].as_str().unwrap().to_string());
        }
        if page == 12 {
            break;
        }
    }
    let oldest = ids[0].clone();
    ids.reverse();
    seen.truncate(57);
    assert_eq!(seen, ids, "every session once, newest first");
    assert!(seen.contains(&oldest), "the first session of all is reachable");
}
