//! The `slicehub` command as an operator meets it.

use std::process::Output;

use slicehub_end2end::cli::{self, text};

const BIN: &str = env!("CARGO_BIN_EXE_slicehub");

fn slicehub(dir: &std::path::Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    cli::run(BIN, dir, args, env)
}

#[test]
fn help_lists_the_commands() {
    let dir = tempfile::tempdir().unwrap();
    let out = slicehub(dir.path(), &["--help"], &[]);
    assert!(out.status.success());
    let help = text(&out);
    for command in ["serve", "migrate", "check"] {
        assert!(help.contains(command), "{help}");
    }
}

#[test]
fn an_invalid_config_file_exits_2_naming_key_value_and_form() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("portal.toml");
    std::fs::write(&config, "[server]\nbind = \"everywhere\"\n").unwrap();
    let out = slicehub(
        dir.path(),
        &["--config", config.to_str().unwrap(), "check"],
        &[],
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let msg = text(&out);
    assert!(
        msg.contains("`server.bind`") && msg.contains("\"everywhere\""),
        "{msg}"
    );
    assert!(msg.contains("expected an address and port"), "{msg}");
}

#[test]
fn an_invalid_environment_value_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let out = slicehub(
        dir.path(),
        &["migrate"],
        &[("SLICEHUB_GPU_BACKEND", "cuda")],
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("SLICEHUB_GPU_BACKEND"),
        "{}",
        text(&out)
    );
    assert!(
        text(&out).contains("one of auto, nvml, simulated"),
        "{}",
        text(&out)
    );
}

#[test]
fn migrate_creates_the_sqlite_database_and_is_repeatable() {
    let dir = tempfile::tempdir().unwrap();
    let mut reports = Vec::new();
    for _ in 0..2 {
        let out = slicehub(dir.path(), &["migrate"], &[]);
        assert!(out.status.success(), "{}", text(&out));
        let stdout = String::from_utf8_lossy(&out.stdout).to_string();
        assert!(stdout.contains("SQLite at sqlite://"), "{stdout}");
        assert!(stdout.contains("is at migration "), "{stdout}");
        assert!(!stdout.contains("is at migration none"), "{stdout}");
        reports.push(stdout);
    }
    assert_eq!(reports[0], reports[1], "a second run changes nothing");
    assert!(dir.path().join("data/slicehub.db").exists());
}

#[test]
fn an_unreachable_database_fails_clearly_without_the_password() {
    let dir = tempfile::tempdir().unwrap();
    let out = slicehub(
        dir.path(),
        &["migrate"],
        &[(
            "SLICEHUB_DATABASE_URL",
            "postgres://slicehub:topsecret@127.0.0.1:1/slicehub",
        )],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let msg = text(&out);
    assert!(
        msg.contains("cannot reach the database at postgres://slicehub:***@127.0.0.1:1"),
        "{msg}"
    );
    assert!(!msg.contains("topsecret"), "{msg}");
}

#[test]
fn check_reports_a_down_engine_and_the_simulated_gpus() {
    let dir = tempfile::tempdir().unwrap();
    let out = slicehub(
        dir.path(),
        &["check"],
        &[
            ("SLICEHUB_DOCKER_HOST", "unix:///nonexistent/docker.sock"),
            ("SLICEHUB_GPU_SIMULATED", "2 x H100-80GB"),
        ],
    );
    assert!(
        out.status.success(),
        "a missing engine is not a failure: {}",
        text(&out)
    );
    let report = text(&out);
    assert!(report.contains("[DOWN] docker:"), "{report}");
    assert!(
        report.contains("no Docker socket at unix:///nonexistent/docker.sock"),
        "{report}"
    );
    assert!(
        report.contains("simulated: 2 x H100-80GB — 2 GPUs (no NVIDIA driver"),
        "{report}"
    );
    assert!(report.contains("GPU 1 NVIDIA H100 80GB HBM3"), "{report}");
}

#[test]
fn check_json_is_machine_readable() {
    let dir = tempfile::tempdir().unwrap();
    let out = slicehub(dir.path(), &["check", "--json"], &[]);
    assert!(out.status.success(), "{}", text(&out));
    let value: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    assert_eq!(value["health"]["database"]["ok"], true);
    assert_eq!(value["health"]["gpu_backend"], "Simulated");
    assert_eq!(value["gpus"].as_array().unwrap().len(), 1);
}

#[test]
fn only_serve_creates_the_first_administrator() {
    let dir = tempfile::tempdir().unwrap();
    let out = slicehub(dir.path(), &["check"], &[]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(!text(&out).contains("one-time password"), "{}", text(&out));
    let users = slicehub(dir.path(), &["user", "list", "--json"], &[]);
    assert_eq!(
        String::from_utf8_lossy(&users.stdout).trim(),
        "[]",
        "{}",
        text(&users)
    );
}

/// `gpu layout` replaces a GPU's MIG instances: never under a running session.
#[tokio::test]
async fn a_static_layout_is_refused_while_a_session_holds_a_slice_of_the_gpu() {
    use slicehub_end2end::classroom::Classroom;
    use slicehub_end2end::form::{client, post, urlencode};
    let busybox = "slicehub/busybox:offline";
    let class = Classroom::start(BIN.as_ref(), &[("SLICEHUB_SESSIONS_DEFAULT_IMAGE", busybox)]).await;
    let portal = &class.portal;
    let cookies = class.enroll(&["lay-frank"]).await;
    let body = format!("course_id=1&profile=1g.10gb&image={}&command=sleep+60", urlencode(busybox));
    let resp = post(&client(), &portal.url, Some(&cookies[0]), "start_session", body).await;
    assert_eq!(resp.status(), 200);
    let id = resp.json::<serde_json::Value>().await.unwrap()["id"].as_str().unwrap().to_string();
    let env = [("SLICEHUB_GPU_BACKEND", "simulated"), ("SLICEHUB_GPU_SIMULATED", "1 x H100-80GB")];
    let out = slicehub(portal.dir.path(), &["gpu", "layout", "0", "all-balanced"], &env);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("held by 1 live session") && text(&out).contains(&id), "{}", text(&out));
    let listed = portal.cli(&["session", "list", "--json"], "");
    assert!(listed.contains(&id) && !listed.contains("\"failed\""), "the session is untouched: {listed}");
    let resp = post(&client(), &portal.url, Some(&cookies[0]), "stop_session", format!("id={id}")).await;
    assert_eq!(resp.status(), 200);
    let out = slicehub(portal.dir.path(), &["gpu", "layout", "0", "all-balanced"], &env);
    assert!(out.status.success(), "once the GPU is free the layout applies: {}", text(&out));
}

/// The first administrator's one-time password never reaches the log: it is in a file only
/// the portal's user reads, and it works; the data directory and the database are private.
#[tokio::test]
async fn the_first_admin_password_is_in_a_private_file_never_in_the_log() {
    use std::os::unix::fs::PermissionsExt;
    use slicehub_end2end::form::{client, sign_in};
    use slicehub_end2end::Portal;
    let portal = Portal::start(BIN.as_ref(), &[]).await;
    let data = portal.dir.path().join("data");
    let file = data.join("first-admin-password");
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&file), 0o600, "the password file");
    assert_eq!(mode(&data), 0o700, "the data directory");
    assert_eq!(mode(&data.join("slicehub.db")), 0o600, "the database");
    let password = std::fs::read_to_string(&file).unwrap().trim().to_string();
    assert!(password.len() >= 12, "{password:?}");
    let log = portal.log();
    assert!(!log.contains(&password), "the one-time password is in the log:\n{log}");
    assert!(log.contains("first-admin-password"), "the log says where it is:\n{log}");
    assert!(sign_in(&client(), &portal.url, "admin", &password).await.is_some(), "the password in the file signs in");
}

/// The readiness list names what a new host lacks, each with a fix, and passes what it has.
#[test]
fn check_says_what_a_new_host_lacks_and_how_to_fix_it() {
    let dir = tempfile::tempdir().unwrap();
    let finding = |value: &serde_json::Value, check: &str| -> serde_json::Value {
        let all = value["readiness"].as_array().expect("a readiness list").clone();
        all.into_iter().find(|f| f["check"] == check).unwrap_or_else(|| panic!("no {check} in {value}"))
    };
    let exposed = slicehub(
        dir.path(),
        &["check", "--json"],
        &[
            ("SLICEHUB_SERVER_PUBLIC_URL", "http://gpu.example.invalid"),
            ("SLICEHUB_SERVER_NOTEBOOK_DOMAIN", "notebooks.example.invalid"),
            ("SLICEHUB_SESSIONS_HOST_FIREWALL", "false"),
        ],
    );
    assert!(exposed.status.success(), "{}", text(&exposed));
    let value: serde_json::Value = serde_json::from_slice(&exposed.stdout).expect("JSON");
    let domain = finding(&value, "notebook domain");
    assert_eq!(domain["level"], "fail", "{domain}");
    assert!(domain["fix"].as_str().unwrap().contains("*.notebooks.example.invalid"), "{domain}");
    let cookies = finding(&value, "cookies");
    assert_eq!(cookies["level"], "fail", "{cookies}");
    assert!(cookies["fix"].as_str().unwrap().contains("https://"), "{cookies}");
    assert_eq!(finding(&value, "firewall")["level"], "warn");
    assert_eq!(finding(&value, "driver")["level"], "warn", "no driver on this machine: simulated GPUs");

    let local = slicehub(dir.path(), &["check"], &[]);
    let report = text(&local);
    assert!(report.contains("Ready for a class?"), "{report}");
    for passed in ["[ok  ] cookies:", "[ok  ] notebook domain:", "[ok  ] data disk:"] {
        assert!(report.contains(passed), "{passed} missing from:\n{report}");
    }
    // As root, on the test machine's engine: the rules can go in.
    assert!(report.contains("[ok  ] firewall:"), "{report}");
    assert!(report.contains("[WARN] driver: no NVIDIA driver"), "{report}");
    assert!(report.contains("fix: on a host with NVIDIA GPUs"), "{report}");
}

/// Ledger rows written behind the portal's back reach the usage reports, which read the
/// per-day totals, after `slicehub usage rebuild`, and only then.
#[tokio::test]
async fn usage_rebuild_puts_a_ledger_written_by_hand_into_the_reports() {
    use slicehub_core::reports::{usage_report, ReportQuery};
    use slicehub_core::store::Store;

    let dir = tempfile::tempdir().unwrap();
    let out = slicehub(dir.path(), &["migrate"], &[]);
    assert!(out.status.success(), "{}", text(&out));
    let store = Store::connect(&format!("sqlite://{}", dir.path().join("data/slicehub.db").display()), 1).await.unwrap();
    let tuesday = ReportQuery::parse("custom", "2026-11-03", "2026-11-03", "course", 0).unwrap().from_ms;
    let hour = |h: i64| tuesday + h * 3_600_000;
    for statement in [
        "INSERT INTO users (username, display_name, password_hash, created_at, updated_at) VALUES ('ann', 'Ann', 'x', 1, 1)".to_string(),
        "INSERT INTO courses (code, title, created_at) VALUES ('CS-1', 'Course', 1)".to_string(),
        format!(
            "INSERT INTO gpu_sessions (id, user_id, course_id, kind, profile, image, argv, state, live, released, token, requested_at, updated_at, ended_at, deadline_at)
             VALUES ('s1', 1, 1, 'job', '1g.10gb', 'busybox', '[]', 'ended', 0, 1, 't', {0}, {0}, {1}, {1})",
            hour(10),
            hour(11)
        ),
        format!(
            "INSERT INTO usage_ledger (session_id, user_id, course_id, gpu_uuid, profile, placement, image, kind, started_at, ended_at, end_reason)
             VALUES ('s1', 1, 1, 'GPU-1', '1g.10gb', 'x', 'busybox', 'job', {}, {}, 'stopped by its owner')",
            hour(10),
            hour(11)
        ),
    ] {
        store.execute_admin(&statement).await.unwrap();
    }
    let week = ReportQuery::parse("custom", "2026-11-02", "2026-11-08", "course", 0).unwrap();
    let before = usage_report(&store, &week, None, week.to_ms).await.unwrap();
    assert_eq!(before.total.sessions, 0, "the totals do not know the row yet");

    let out = slicehub(dir.path(), &["usage", "rebuild"], &[]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("rebuilt the per-day usage totals"), "{}", text(&out));
    let after = usage_report(&store, &week, None, week.to_ms).await.unwrap();
    assert_eq!((after.total.sessions, after.total.slice_ms), (1, 3_600_000), "{after:?}");
    store.close().await;
}
