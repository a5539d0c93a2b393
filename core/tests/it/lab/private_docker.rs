//! A Docker engine of the test's own: a second `dockerd` with its own socket, data root,
//! exec root and containerd, in a network namespace of its own (`unshare --net`), so a
//! test can restart it or freeze it (SIGSTOP) without disturbing the machine's engine. It
//! is given the busybox test image from the machine's engine. Needs root.
//!
//! The namespace matters: a second `dockerd` in the machine's namespace deletes the
//! interface `docker0`, the machine's engine's default bridge, when it restarts (and at
//! once with `--bridge=none`).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::BUSYBOX;

pub struct PrivateDocker {
    /// `unix://…` for `Engine::new`.
    pub host: String,
    dir: PathBuf,
    daemon: Option<Child>,
}

impl PrivateDocker {
    /// Starts the engine (with `--live-restore`, so containers outlive a restart, as on
    /// a production host) and loads the busybox image into it.
    pub fn start() -> PrivateDocker {
        // Short: the engine's and containerd's sockets live under it (108-byte limit).
        let n = unique();
        let dir = PathBuf::from(format!("/tmp/shd-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("daemon.json"), "{}").unwrap();
        let mut engine = PrivateDocker {
            host: format!("unix://{}", dir.join("docker.sock").display()),
            dir,
            daemon: None,
        };
        engine.run_daemon(true);
        let save = Command::new("docker")
            .args(["save", BUSYBOX])
            .stdout(Stdio::piped())
            .spawn()
            .expect("docker save");
        let loaded = Command::new("docker")
            .args(["-H", &engine.host, "load", "-q"])
            .stdin(save.stdout.unwrap())
            .output()
            .expect("docker load");
        assert!(loaded.status.success(), "{}", String::from_utf8_lossy(&loaded.stderr));
        engine
    }

    fn run_daemon(&mut self, live_restore: bool) {
        let d = &self.dir;
        let path = |name: &str| d.join(name).display().to_string();
        let log = std::fs::File::create(d.join("dockerd.log")).unwrap();
        let mut args = vec![
            format!("--host={}", self.host),
            format!("--data-root={}", path("data")),
            format!("--exec-root={}", path("exec")),
            format!("--pidfile={}", path("docker.pid")),
            format!("--config-file={}", path("daemon.json")),
            "--iptables=false".into(),
            "--ip6tables=false".into(),
            "--storage-driver=vfs".into(),
        ];
        if live_restore {
            args.push("--live-restore".into());
        }
        // `unshare` execs dockerd: the child's pid is the engine's, for SIGSTOP.
        let child = Command::new("unshare")
            .args(["--net", "dockerd"])
            .args(&args)
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .expect("dockerd");
        self.daemon = Some(child);
        let until = Instant::now() + Duration::from_secs(60);
        while !self.answers() {
            assert!(Instant::now() < until, "the private engine did not start: {}", self.log());
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    fn answers(&self) -> bool {
        Command::new("docker")
            .args(["-H", &self.host, "version", "--format", "{{.Server.Version}}"])
            .output()
            .is_ok_and(|o| o.status.success())
    }

    /// Stops the engine (SIGTERM, as a service manager does) and starts it again; with
    /// `live_restore` its running containers survive, without it the engine stops them.
    pub fn restart(&mut self, live_restore: bool) {
        self.stop_daemon();
        self.run_daemon(live_restore);
    }

    fn stop_daemon(&mut self) {
        if let Some(mut child) = self.daemon.take() {
            signal(child.id(), "CONT");
            signal(child.id(), "TERM");
            let until = Instant::now() + Duration::from_secs(60);
            while child.try_wait().unwrap().is_none() {
                if Instant::now() > until {
                    let _ = child.kill();
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        }
    }

    /// Every API call hangs until [`PrivateDocker::thaw`].
    pub fn freeze(&self) {
        signal(self.pid(), "STOP");
    }

    pub fn thaw(&self) {
        signal(self.pid(), "CONT");
    }

    fn pid(&self) -> u32 {
        self.daemon.as_ref().expect("the engine runs").id()
    }

    /// Names of the containers that run now.
    pub fn running(&self) -> Vec<String> {
        let out = Command::new("docker")
            .args(["-H", &self.host, "ps", "--format", "{{.Names}}"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).lines().map(String::from).collect()
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("dockerd.log")).unwrap_or_default()
    }
}

impl Drop for PrivateDocker {
    /// Containers first (with live restore they would outlive the engine), then the
    /// engine, then its directory.
    fn drop(&mut self) {
        if self.daemon.is_some() {
            self.thaw();
            let all = Command::new("docker").args(["-H", &self.host, "ps", "-aq"]).output();
            if let Ok(all) = all {
                let ids: Vec<String> =
                    String::from_utf8_lossy(&all.stdout).split_whitespace().map(String::from).collect();
                if !ids.is_empty() {
                    let _ = Command::new("docker").args(["-H", &self.host, "rm", "-f"]).args(&ids).output();
                }
            }
        }
        self.stop_daemon();
        remove_tree(&self.dir);
    }
}

fn signal(pid: u32, name: &str) {
    let _ = Command::new("kill").args([&format!("-{name}"), &pid.to_string()]).status();
}

/// vfs layers and exec-root mounts: unmount what is still mounted below, then delete.
fn remove_tree(dir: &Path) {
    if let Ok(mounts) = std::fs::read_to_string("/proc/self/mounts") {
        let prefix = dir.display().to_string();
        let mut below: Vec<&str> = mounts
            .lines()
            .filter_map(|l| l.split_whitespace().nth(1))
            .filter(|m| m.starts_with(&prefix))
            .collect();
        below.sort_by_key(|m| std::cmp::Reverse(m.len()));
        for m in below {
            let _ = Command::new("umount").args(["-l", m]).status();
        }
    }
    let _ = std::fs::remove_dir_all(dir);
}

fn unique() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::SeqCst)
}
