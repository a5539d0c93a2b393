use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use crate::free_port;

pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .to_path_buf()
}

/// A running portal. Killed on drop; `stop` ends it the way an operator would (SIGTERM).
pub struct Portal {
    child: Option<Child>,
    bin: PathBuf,
    env: Vec<(String, String)>,
    pub url: String,
    pub dir: tempfile::TempDir,
    log_path: PathBuf,
}

pub struct Stopped {
    pub status: ExitStatus,
    pub log: String,
    pub took: Duration,
}

impl Portal {
    /// `serve` with a fresh data dir, a free port and these extra `SLICEHUB_*` variables.
    pub async fn start(bin: &Path, env: &[(&str, &str)]) -> Portal {
        let mut portal = Portal::start_unready(bin, env);
        portal.wait_ready().await;
        portal
    }

    /// [`Portal::start`], returning as soon as `/healthz` answers, before the portal has
    /// picked up the sessions of an earlier run.
    pub async fn start_answering(bin: &Path, env: &[(&str, &str)]) -> Portal {
        let mut portal = Portal::start_unready(bin, env);
        portal.wait_answering(false).await;
        portal
    }

    /// [`Portal::start`] on a port chosen by the caller (who needs the address before the
    /// portal starts, e.g. for `server.public_url`).
    pub async fn start_on_port(bin: &Path, port: u16, env: &[(&str, &str)]) -> Portal {
        let mut portal = Portal::start_unready_on(bin, port, env);
        portal.wait_ready().await;
        portal
    }

    fn start_unready(bin: &Path, env: &[(&str, &str)]) -> Portal {
        Portal::start_unready_on(bin, free_port(), env)
    }

    fn start_unready_on(bin: &Path, port: u16, env: &[(&str, &str)]) -> Portal {
        let dir = tempfile::tempdir().expect("temp dir");
        let log_path = dir.path().join("portal.log");
        let mut portal = Portal {
            child: None,
            bin: bin.to_path_buf(),
            env: env.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
            url: format!("http://127.0.0.1:{port}"),
            dir,
            log_path,
        };
        portal.spawn();
        portal
    }

    fn spawn(&mut self) {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log_path)
            .expect("log file");
        let site_root = workspace_root().join("target/site");
        let bind = self.url.trim_start_matches("http://").to_string();
        let mut command = Command::new(&self.bin);
        command
            .arg("serve")
            .current_dir(self.dir.path())
            .env("SLICEHUB_DATA_DIR", self.dir.path().join("data"))
            .env("SLICEHUB_SERVER_BIND", bind)
            .env("SLICEHUB_SERVER_SITE_ROOT", &site_root)
            .env("RUST_LOG", "info,tower_http=debug")
            .stdout(Stdio::from(log.try_clone().expect("log handle")))
            .stderr(Stdio::from(log));
        for (k, v) in &self.env {
            command.env(k, v);
        }
        let child = command
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", self.bin.display()));
        self.child = Some(child);
    }

    /// SIGKILL, as a crash or an OOM kill would: no shutdown code runs.
    pub fn kill_hard(&mut self) {
        if let Some(mut child) = self.child.take() {
            child.kill().expect("SIGKILL");
            child.wait().expect("reaped");
        }
    }

    /// Starts the portal again on the same data directory and port.
    pub async fn restart(&mut self) {
        self.kill_hard();
        self.spawn();
        self.wait_ready().await;
    }

    /// Until `/healthz` answers and the sessions of an earlier run are picked up.
    async fn wait_ready(&mut self) {
        self.wait_answering(true).await;
    }

    async fn wait_answering(&mut self, recovered: bool) {
        let client = reqwest::Client::new();
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Some(status) = self
                .child
                .as_mut()
                .and_then(|c| c.try_wait().ok().flatten())
            {
                panic!("portal exited early ({status}):\n{}", self.log());
            }
            if let Ok(resp) = client.get(format!("{}/healthz", self.url)).send().await {
                let answered = resp.status().is_success();
                let body: serde_json::Value = resp.json().await.unwrap_or_default();
                if answered && (!recovered || body["recovering"] == false) {
                    return;
                }
            }
            if Instant::now() > deadline {
                panic!("portal not ready within 60 s:\n{}", self.log());
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Runs `slicehub ARGS` with the portal's data directory and settings (the CLI beside
    /// the running portal),
    /// with `stdin` as its input; panics with its output when it fails.
    pub fn cli(&self, args: &[&str], stdin: &str) -> String {
        let (ok, text) = self.run_cli(args, stdin);
        assert!(ok, "slicehub {args:?} failed: {text}");
        text
    }

    /// A CLI command that must fail; what it printed.
    pub fn cli_fails(&self, args: &[&str]) -> String {
        let (ok, text) = self.run_cli(args, "");
        assert!(!ok, "slicehub {args:?} succeeded: {text}");
        text
    }

    fn run_cli(&self, args: &[&str], stdin: &str) -> (bool, String) {
        use std::io::Write;
        let mut child = Command::new(&self.bin)
            .args(args)
            .current_dir(self.dir.path())
            .env("SLICEHUB_DATA_DIR", self.dir.path().join("data"))
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .env("RUST_LOG", "warn")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("slicehub CLI starts");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(stdin.as_bytes())
            .expect("write stdin");
        let out = child.wait_with_output().expect("slicehub CLI ends");
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        (out.status.success(), text)
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log_path).unwrap_or_default()
    }

    pub fn pid(&self) -> u32 {
        self.child.as_ref().expect("running").id()
    }

    /// SIGTERM, as an operator's `systemctl stop` would; waits for the exit and leaves the
    /// portal ready for [`Portal::restart`].
    pub async fn terminate(&mut self) -> (ExitStatus, Duration) {
        let mut child = self.child.take().expect("running");
        let started = Instant::now();
        let _ = Command::new("kill").args(["-TERM", &child.id().to_string()]).status();
        loop {
            if let Some(status) = child.try_wait().expect("wait") {
                return (status, started.elapsed());
            }
            if started.elapsed() > Duration::from_secs(20) {
                let _ = child.kill();
                panic!("portal ignored SIGTERM for 20 s:\n{}", self.log());
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Sends SIGTERM and waits for the process to end.
    pub async fn stop(mut self) -> Stopped {
        let mut child = self.child.take().expect("running");
        let started = Instant::now();
        let _ = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status();
        let deadline = started + Duration::from_secs(20);
        let status = loop {
            if let Some(status) = child.try_wait().expect("wait") {
                break status;
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                panic!("portal ignored SIGTERM for 20 s:\n{}", self.log());
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        };
        Stopped {
            status,
            log: self.log(),
            took: started.elapsed(),
        }
    }
}

impl Drop for Portal {
    /// SIGTERM first, so the portal removes its idle session networks (Docker's default
    /// pools hold only a few dozen), then SIGKILL after 5 s.
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = Command::new("kill").args(["-TERM", &child.id().to_string()]).status();
            let deadline = Instant::now() + Duration::from_secs(5);
            while Instant::now() < deadline {
                if let Ok(Some(_)) = child.try_wait() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}
