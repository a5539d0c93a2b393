//! Backups that restore, against the real binary and the Docker engine: `slicehub backup`
//! copies a busy portal's database (a job running), a second job starts after the copy, the
//! portal dies, `slicehub restore` puts the copy into an empty database elsewhere, and the
//! portal started on it takes up the job still running and removes the container the backup
//! knows nothing of. The backup is the portal's alone (0700, 0600), and a restore never
//! writes over a database that has tables. On SQLite, then on PostgreSQL.
//! Needs `slicehub/busybox:offline`.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::{Duration, Instant};

use slicehub_end2end::classroom::{password_of, Classroom};
use slicehub_end2end::form::{client, post, sign_in, urlencode};
use slicehub_end2end::Portal;

use crate::common::postgres_database;

const BIN: &str = env!("CARGO_BIN_EXE_slicehub");
const BUSYBOX: &str = "slicehub/busybox:offline";

#[tokio::test(flavor = "multi_thread")]
async fn a_busy_portals_backup_restores_into_an_empty_database_elsewhere() {
    backup_and_restore(None).await;
    match (postgres_database().await, postgres_database().await) {
        (Some(first), Some(second)) => backup_and_restore(Some((first, second))).await,
        _ => assert_eq!(
            std::env::var("SLICEHUB_SKIP_POSTGRES").as_deref(),
            Ok("1"),
            "SLICEHUB_TEST_DATABASE_URL is not set: run the tests through scripts/test.sh"
        ),
    }
}

async fn backup_and_restore(databases: Option<(String, String)>) {
    let mut env = vec![
        ("SLICEHUB_GPU_BACKEND", "simulated"),
        ("SLICEHUB_GPU_SIMULATED", "1 x H100-80GB"),
        ("SLICEHUB_SESSIONS_DEFAULT_IMAGE", BUSYBOX),
        ("SLICEHUB_SESSIONS_MEMORY_MIB_PER_MEMORY_SLICE", "128"),
    ];
    if let Some((first, _)) = &databases {
        env.push(("SLICEHUB_DATABASE_URL", first.as_str()));
    }
    let mut class = Classroom::start(BIN.as_ref(), &env).await;
    let cookies = class.enroll(&["kept", "later"]).await;
    let kept = running_job(&class.portal, &cookies[0]).await;
    let place = tempfile::tempdir().unwrap();
    let backup = place.path().join("backup");
    let said = class.portal.cli(&["backup", backup.to_str().unwrap()], "");
    assert!(said.contains("backed up the database"), "{said}");
    let file = backup.join(if databases.is_some() { "slicehub.pgdump" } else { "slicehub.db" });
    assert_eq!(mode(&backup), 0o700, "the backup directory is the portal's alone");
    assert_eq!(mode(&file), 0o600, "the copy holds live tokens: the portal's alone");
    let again = class.portal.cli_fails(&["backup", backup.to_str().unwrap()]);
    assert!(again.contains("exists already"), "a backup never writes over another: {again}");
    if databases.is_none() {
        // Run with another configuration than the portal's: no new empty database is made,
        // copied and called a backup.
        let stray = place.path().join("stray-data");
        let (ok, said) = cli(&[("SLICEHUB_DATA_DIR", stray.to_str().unwrap())], &["backup", place.path().join("b2").to_str().unwrap()]);
        assert!(!ok && said.contains("there is no database at"), "{said}");
        assert!(!stray.join("slicehub.db").exists() && !place.path().join("b2").exists(), "nothing made");
    }
    let later = running_job(&class.portal, &cookies[1]).await;
    let later_container = container_of(&class.portal, &later);
    class.portal.kill_hard();

    // Elsewhere: a new data directory (or a new database), restored, then served.
    let elsewhere = tempfile::tempdir().unwrap();
    let data = elsewhere.path().join("data");
    let mut restored_env: Vec<(&str, &str)> = env.iter().copied().filter(|(k, _)| *k != "SLICEHUB_DATABASE_URL").collect();
    restored_env.push(("SLICEHUB_DATA_DIR", data.to_str().unwrap()));
    if let Some((_, second)) = &databases {
        restored_env.push(("SLICEHUB_DATABASE_URL", second.as_str()));
    }
    let (ok, said) = cli(&restored_env, &["restore", backup.to_str().unwrap()]);
    assert!(ok && said.contains("restored"), "{said}");
    // The same machine's GPUs: the simulated ones keep their instances in the data directory.
    let gpus = "simulated-gpus.json";
    std::fs::copy(class.portal.dir.path().join("data").join(gpus), data.join(gpus)).expect("the GPUs' state");
    let (ok, said) = cli(&restored_env, &["restore", backup.to_str().unwrap()]);
    assert!(!ok && said.contains("is not empty: restore only into"), "a restore never writes over a database: {said}");
    let restored = Portal::start(BIN.as_ref(), &restored_env).await;
    assert!(
        sign_in(&client(), &restored.url, "kept", &password_of("kept")).await.is_some(),
        "accounts came along"
    );
    let sessions = session_list(&restored);
    let kept_now = sessions.iter().find(|s| s["id"] == kept.as_str()).expect("the job the backup knew");
    assert_eq!(kept_now["state"], "ready", "taken up, still running: {kept_now}");
    assert!(sessions.iter().all(|s| s["id"] != later.as_str()), "the backup knows nothing of the later job");
    let deadline = Instant::now() + Duration::from_secs(30);
    while container_exists(&later_container) {
        assert!(Instant::now() < deadline, "the container no session owns is still there");
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    let stopped = restored.cli(&["session", "stop", &kept], "");
    assert!(stopped.contains("ended"), "{stopped}");
}

/// Starts a long busybox job as the cookie's student and waits until it runs.
async fn running_job(portal: &Portal, cookie: &str) -> String {
    let body = format!("course_id=1&profile=1g.10gb&image={}&command={}", urlencode(BUSYBOX), urlencode("sleep 600"));
    let resp = post(&client(), &portal.url, Some(cookie), "start_session", body).await;
    let view: serde_json::Value = resp.json().await.unwrap();
    let id = view["id"].as_str().expect("a session id").to_string();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let state = session_list(portal).into_iter().find(|s| s["id"] == id.as_str()).map(|s| s["state"].clone());
        if state.as_ref().is_some_and(|s| s == "ready") {
            return id;
        }
        assert!(Instant::now() < deadline, "{id} never ran: {state:?}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

fn session_list(portal: &Portal) -> Vec<serde_json::Value> {
    serde_json::from_str(&portal.cli(&["session", "list", "--json"], "")).expect("the session list as JSON")
}

fn container_of(portal: &Portal, id: &str) -> String {
    let sessions = session_list(portal);
    let session = sessions.iter().find(|s| s["id"] == id).expect("listed");
    session["container"].as_str().expect("a container").to_string()
}

fn container_exists(name: &str) -> bool {
    std::process::Command::new("docker").args(["inspect", name]).output().expect("docker runs").status.success()
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

/// The CLI with exactly these settings (no running portal's).
fn cli(env: &[(&str, &str)], args: &[&str]) -> (bool, String) {
    let out = std::process::Command::new(BIN)
        .args(args)
        .current_dir(std::env::temp_dir())
        .envs(env.iter().copied())
        .env("RUST_LOG", "warn")
        .output()
        .expect("slicehub runs");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    (out.status.success(), text)
}
