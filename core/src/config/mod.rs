//! Configuration: a TOML file plus `SLICEHUB_*` environment overrides.
//! Every key, its default and its expected form are listed once, in `keys.rs`.

mod keys;
mod load;
mod trusted_proxies;

pub use keys::{KeySpec, KEYS};
pub use load::{load, ConfigError, ConfigSource};
pub use trusted_proxies::TrustedProxies;

use std::net::SocketAddr;
use std::path::PathBuf;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GpuBackendChoice {
    Auto,
    Nvml,
    Simulated,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFormat {
    Text,
    Json,
}

#[derive(Debug, Clone)]
pub struct Config {
    pub data_dir: PathBuf,
    pub server_bind: SocketAddr,
    pub site_root: PathBuf,
    /// Session cookies carry `Secure` (the portal is served over HTTPS).
    pub server_secure_cookies: bool,
    /// Peers whose `X-Forwarded-For` names the client; empty believes no one.
    pub server_trusted_proxies: TrustedProxies,
    /// Each notebook is served on `SESSION.<this>`; never the portal's own host.
    pub server_notebook_domain: String,
    /// How browsers reach the portal (`http://127.0.0.1:3000`); empty derives it from
    /// `server.bind`. Its scheme and port are the notebook hosts' too.
    pub server_public_url: String,
    /// Administrators may open a student's notebook (confirmed and audited each visit).
    pub notebooks_admin_access: bool,
    /// Bearer token `/metrics` asks for; empty: no metrics are served.
    pub metrics_token: String,
    /// Firewall rules keep session containers off the portal host and link-local addresses.
    pub sessions_host_firewall: bool,
    /// Private ranges (CIDR) sessions with internet may still reach.
    pub sessions_reachable_private_ranges: Vec<String>,
    /// Empty means the SQLite file `slicehub.db` in `data_dir`.
    pub database_url: String,
    pub database_max_connections: u32,
    pub gpu_backend: GpuBackendChoice,
    /// e.g. `1 x A100-40GB, 2 x H100-80GB`
    pub gpu_simulated: String,
    /// Empty means the standard places (`libnvidia-ml.so.1` on the linker path,
    /// `/usr/lib/x86_64-linux-gnu`, `/usr/local/nvidia/lib64`).
    pub gpu_nvml_library: String,
    pub gpu_call_timeout_seconds: u32,
    /// Empty means `DOCKER_HOST` or the local unix socket.
    pub docker_host: String,
    pub log_format: LogFormat,
    pub log_level: String,
    /// Password hashes allowed to run at once; 0 means one per CPU.
    pub auth_hash_concurrency: u32,
    pub auth_session_idle_minutes: u32,
    pub auth_session_absolute_hours: u32,
    pub sessions_default_image: String,
    /// Further images courses may choose, besides `sessions_default_image`.
    pub sessions_images: Vec<String>,
    pub sessions_max_per_user: u32,
    pub sessions_max_minutes: u32,
    pub sessions_max_compute_slices: u32,
    /// The administrator's ceilings over every course's policy and bookings.
    pub limits_session_minutes: u32,
    pub limits_sessions_per_student: u32,
    pub limits_compute_slices: u32,
    pub limits_course_share_percent: u32,
    pub limits_booking_days_ahead: u32,
    pub limits_booking_slice_hours_per_week: u32,
    pub quotas_min_launch_minutes: u32,
    pub quotas_warn_minutes: u32,
    pub sessions_ready_timeout_seconds: u32,
    pub sessions_reconcile_seconds: u32,
    pub sessions_sample_seconds: u32,
    pub sessions_cpus_per_compute_slice: f64,
    pub sessions_memory_mib_per_memory_slice: u32,
    pub sessions_pids_limit: u32,
    pub sessions_profile_limits: Vec<ProfileLimit>,
    /// slurmrestd's URL; empty: no Slurm pool.
    pub slurm_url: String,
    pub slurm_user: String,
    pub slurm_token: String,
    /// The cluster's `jwt_hs256.key`: with it each student's jobs run as that student.
    pub slurm_jwt_key_file: String,
    pub slurm_users_file: String,
    pub slurm_partition: String,
    /// Course codes whose sessions run on Slurm (`*`: all), each with `=PARTITION` or not.
    pub slurm_courses: Vec<String>,
    pub slurm_container_command: Vec<String>,
    pub slurm_node_path: String,
}

/// Container limits for one MIG profile, replacing the per-slice scaling.
#[derive(Debug, Clone, PartialEq)]
pub struct ProfileLimit {
    pub profile: String,
    pub cpus: f64,
    pub memory_mib: u64,
    pub pids: i64,
}

impl ProfileLimit {
    /// `7g.80gb=16/65536/4096, 1g.10gb=1/4096/256`
    fn parse_list(text: &str) -> Result<Vec<ProfileLimit>, ()> {
        let mut out = Vec::new();
        for item in text.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            let (profile, numbers) = item.split_once('=').ok_or(())?;
            let parts: Vec<&str> = numbers.split('/').map(str::trim).collect();
            let [cpus, memory, pids] = parts.as_slice() else {
                return Err(());
            };
            let limit = ProfileLimit {
                profile: profile.trim().to_string(),
                cpus: cpus.parse().map_err(|_| ())?,
                memory_mib: memory.parse().map_err(|_| ())?,
                pids: pids.parse().map_err(|_| ())?,
            };
            if limit.profile.is_empty() || limit.cpus <= 0.0 || limit.memory_mib == 0 || limit.pids <= 0 {
                return Err(());
            }
            out.push(limit);
        }
        Ok(out)
    }
}

impl Default for Config {
    fn default() -> Self {
        let mut config = Config {
            data_dir: PathBuf::new(),
            server_bind: SocketAddr::from(([127, 0, 0, 1], 3000)),
            site_root: PathBuf::new(),
            server_secure_cookies: false,
            server_trusted_proxies: TrustedProxies::default(),
            server_notebook_domain: String::new(),
            server_public_url: String::new(),
            notebooks_admin_access: false,
            metrics_token: String::new(),
            sessions_host_firewall: true,
            sessions_reachable_private_ranges: Vec::new(),
            database_url: String::new(),
            database_max_connections: 0,
            gpu_backend: GpuBackendChoice::Auto,
            gpu_simulated: String::new(),
            gpu_nvml_library: String::new(),
            gpu_call_timeout_seconds: 30,
            docker_host: String::new(),
            log_format: LogFormat::Text,
            log_level: String::new(),
            auth_hash_concurrency: 0,
            auth_session_idle_minutes: 0,
            auth_session_absolute_hours: 0,
            sessions_default_image: String::new(),
            sessions_images: Vec::new(),
            sessions_max_per_user: 0,
            sessions_max_minutes: 0,
            sessions_max_compute_slices: 0,
            limits_session_minutes: 0,
            limits_sessions_per_student: 0,
            limits_compute_slices: 0,
            limits_course_share_percent: 0,
            limits_booking_days_ahead: 0,
            limits_booking_slice_hours_per_week: 0,
            quotas_min_launch_minutes: 0,
            quotas_warn_minutes: 0,
            sessions_ready_timeout_seconds: 0,
            sessions_reconcile_seconds: 0,
            sessions_sample_seconds: 0,
            sessions_cpus_per_compute_slice: 0.0,
            sessions_memory_mib_per_memory_slice: 0,
            sessions_pids_limit: 0,
            sessions_profile_limits: Vec::new(),
            slurm_url: String::new(),
            slurm_user: String::new(),
            slurm_token: String::new(),
            slurm_jwt_key_file: String::new(),
            slurm_users_file: String::new(),
            slurm_partition: String::new(),
            slurm_courses: Vec::new(),
            slurm_container_command: Vec::new(),
            slurm_node_path: String::new(),
        };
        for key in KEYS {
            (key.apply)(&mut config, key.default).expect("built-in defaults parse");
        }
        config
    }
}

impl Config {
    /// The administrator's list: the only images a course may choose, the default first.
    pub fn offered_images(&self) -> Vec<String> {
        let mut images = vec![self.sessions_default_image.clone()];
        for image in &self.sessions_images {
            if !images.contains(image) {
                images.push(image.clone());
            }
        }
        images
    }

    /// `server.public_url`, or `http://` and the bind address (loopback when it binds
    /// every address), without a trailing `/`.
    pub fn public_url(&self) -> String {
        if !self.server_public_url.is_empty() {
            return self.server_public_url.trim_end_matches('/').to_string();
        }
        let bind = self.server_bind;
        let host = if bind.ip().is_unspecified() {
            "localhost".to_string()
        } else {
            bind.ip().to_string()
        };
        format!("http://{host}:{}", bind.port())
    }
    /// Whether a course's sessions run on the Slurm cluster.
    pub fn runs_on_slurm(&self, course_code: &str) -> bool {
        self.slurm_partition_of(course_code).is_some()
    }

    /// The partition a course's sessions are submitted to: its own (`CODE=PARTITION` in
    /// `slurm.courses`) or `slurm.partition`; `None` when the course runs on this machine.
    pub fn slurm_partition_of(&self, course_code: &str) -> Option<&str> {
        if self.slurm_url.is_empty() {
            return None;
        }
        let entry = |c: &&String| {
            let code = c.split_once('=').map_or(c.as_str(), |(code, _)| code).trim();
            code.eq_ignore_ascii_case(course_code)
        };
        let named = self.slurm_courses.iter().find(entry);
        let any = self.slurm_courses.iter().find(|c| c.trim() == "*");
        match named.or(any)?.split_once('=') {
            Some((_, partition)) => Some(partition.trim()),
            None => Some(self.slurm_partition.as_str()),
        }
    }

    /// The database URL actually used: the configured one, or the SQLite file in `data_dir`.
    pub fn effective_database_url(&self) -> String {
        if self.database_url.is_empty() {
            format!(
                "sqlite://{}?mode=rwc",
                self.data_dir.join("slicehub.db").display()
            )
        } else {
            self.database_url.clone()
        }
    }
}

#[cfg(test)]
mod slurm_tests {
    use super::Config;

    #[test]
    fn each_course_on_slurm_has_its_partition() {
        let mut config = Config::default();
        config.slurm_partition = "gpu".into();
        config.slurm_courses = vec!["CS-101".into(), "HPC-1=class".into()];
        assert_eq!(config.slurm_partition_of("CS-101"), None, "no cluster configured");
        config.slurm_url = "http://slurmctl:6820".into();
        assert_eq!(config.slurm_partition_of("cs-101"), Some("gpu"));
        assert_eq!(config.slurm_partition_of("HPC-1"), Some("class"));
        assert_eq!(config.slurm_partition_of("ML-2"), None);
        config.slurm_courses.push("*".into());
        assert_eq!(config.slurm_partition_of("ML-2"), Some("gpu"));
    }
}
