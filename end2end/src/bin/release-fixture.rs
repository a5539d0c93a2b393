//! Writes the filled database a release leaves behind, for the upgrade test
//! (`server/tests/it/install.rs`): run it with the release's own binary when tagging.
//!
//!   release-fixture SLICEHUB_BINARY OUT_DIR [POSTGRES_SERVER_URL]
//!
//! A class on one simulated H100: an administrator, an instructor, two students, a policy,
//! one job that ran and ended and one still running when the copy is taken (its container
//! is then removed, as after a host's reboot). Writes OUT_DIR/sqlite/{dump.sql,
//! expected.json} (the `sqlite3` CLI's `.dump`) and, given a PostgreSQL server,
//! OUT_DIR/postgres/… (`pg_dump`, plain SQL). `expected.json` holds the CLI's lists as the
//! release printed them.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::{json, Value};
use slicehub_end2end::classroom::Classroom;
use slicehub_end2end::jobs::{start_job, wait_for_state};

const BUSYBOX: &str = "slicehub/busybox:offline";

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!("usage: release-fixture SLICEHUB_BINARY OUT_DIR [POSTGRES_SERVER_URL]");
        std::process::exit(2);
    }
    let bin = std::fs::canonicalize(&args[1]).unwrap_or_else(|e| panic!("{}: {e}", args[1]));
    let out = PathBuf::from(&args[2]);
    fill_and_dump(&bin, &out.join("sqlite"), None).await;
    if let Some(server) = args.get(3) {
        let url = new_postgres_database(server);
        fill_and_dump(&bin, &out.join("postgres"), Some(&url)).await;
    }
}

async fn fill_and_dump(bin: &Path, dir: &Path, postgres: Option<&str>) {
    std::fs::create_dir_all(dir).expect("the fixture directory");
    let mut env = vec![
        ("SLICEHUB_SESSIONS_DEFAULT_IMAGE", BUSYBOX),
        ("SLICEHUB_SESSIONS_MEMORY_MIB_PER_MEMORY_SLICE", "128"),
    ];
    if let Some(url) = postgres {
        env.push(("SLICEHUB_DATABASE_URL", url));
    }
    let mut class = Classroom::start(bin, &env).await;
    let portal = &class.portal;
    portal.cli(&["user", "add", "ines", "--name", "Ines Instructor", "--password-stdin"], "ines-password-1\n");
    portal.cli(&["course", "instructor", "CS-101", "ines"], "");
    portal.cli(
        &["course", "policy", "CS-101", "--images", BUSYBOX, "--profiles", "1g.10gb,2g.20gb", "--max-minutes", "120",
          "--quota-hours", "10", "--period", "week"],
        "",
    );
    let cookies = class.enroll(&["sam", "ola"]).await;
    let list = || -> Vec<Value> { serde_json::from_str(&portal.cli(&["session", "list", "--json"], "")).expect("JSON") };
    let ended = start_job(&portal.url, &cookies[0], BUSYBOX, "echo finished").await;
    wait_for_state(list, &ended, &["ended"], Duration::from_secs(60)).await;
    let running = start_job(&portal.url, &cookies[1], BUSYBOX, "sleep 3600").await;
    let entry = wait_for_state(list, &running, &["ready"], Duration::from_secs(60)).await;
    let expected = json!({
        "users": cli_json(portal, &["user", "list", "--json"]),
        "courses": cli_json(portal, &["course", "list", "--json"]),
        "policy": portal.cli(&["course", "policy", "CS-101"], ""),
        "sessions": list(),
        "ended": ended,
        "running": running,
    });
    std::fs::write(dir.join("expected.json"), serde_json::to_string_pretty(&expected).unwrap() + "\n").unwrap();
    let dump = match postgres {
        Some(url) => run("pg_dump", &["--no-owner", "--no-privileges", "--no-comments", url]),
        None => run("sqlite3", &[portal.dir.path().join("data/slicehub.db").to_str().unwrap(), ".dump"]),
    };
    std::fs::write(dir.join("dump.sql"), dump).unwrap();
    class.portal.kill_hard();
    let container = entry["container"].as_str().expect("a container");
    run("docker", &["rm", "-f", container]);
    println!("wrote {}", dir.display());
}

fn cli_json(portal: &slicehub_end2end::Portal, args: &[&str]) -> Value {
    serde_json::from_str(&portal.cli(args, "")).expect("JSON")
}

fn new_postgres_database(server: &str) -> String {
    let name = format!("slicehub_release_fixture_{}", std::process::id());
    run("psql", &["-q", "-c", &format!("CREATE DATABASE {name}"), server]);
    let (base, _) = server.rsplit_once('/').expect("a database URL");
    format!("{base}/{name}")
}

fn run(program: &str, args: &[&str]) -> String {
    let out = Command::new(program).args(args).output().unwrap_or_else(|e| panic!("{program}: {e}"));
    assert!(out.status.success(), "{program} {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).expect("UTF-8")
}
