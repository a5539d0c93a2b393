//! The sections of the configuration, one per component, each field named as its key
//! (`sessions.max_minutes` is `config.sessions.max_minutes`).

use std::net::SocketAddr;
use std::path::PathBuf;

use secrecy::SecretString;

use super::{NotebookDomain, ProfileLimit, PublicUrl, TrustedProxies};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum GpuBackendChoice {
    #[default]
    Auto,
    Nvml,
    Simulated,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LogFormat {
    #[default]
    Text,
    Json,
}

/// `[server]`: how the portal is reached.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    pub bind: SocketAddr,
    pub site_root: PathBuf,
    /// Login cookies carry `Secure` (the portal is served over HTTPS).
    pub secure_cookies: bool,
    /// Peers whose `X-Forwarded-For` names the client; empty believes no one.
    pub trusted_proxies: TrustedProxies,
    /// Each notebook is served on `SESSION.<this>`; never the portal's own host.
    pub notebook_domain: NotebookDomain,
    /// How browsers reach the portal; `None` derives it from `bind`. Its scheme and port
    /// are the notebook hosts' too.
    pub public_url: Option<PublicUrl>,
    /// Requests each API token, or each client address without one, may make a minute.
    pub api_requests_per_minute: u32,
    /// How many API requests may come at once above that pace.
    pub api_burst: u32,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            bind: SocketAddr::from(([127, 0, 0, 1], 3000)),
            site_root: PathBuf::new(),
            secure_cookies: false,
            trusted_proxies: TrustedProxies::default(),
            notebook_domain: NotebookDomain::default(),
            public_url: None,
            api_requests_per_minute: 600,
            api_burst: 100,
        }
    }
}

/// `[notebooks]`
#[derive(Debug, Clone, Default)]
pub struct NotebooksConfig {
    /// Administrators may open a student's notebook (confirmed and audited each visit).
    pub admin_access: bool,
}

/// `[metrics]`
#[derive(Debug, Clone, Default)]
pub struct MetricsConfig {
    /// The bearer token `/metrics` asks for; `None`: no metrics are served.
    pub token: Option<SecretString>,
}

/// `[database]`
#[derive(Debug, Clone, Default)]
pub struct DatabaseConfig {
    /// `None`: the SQLite file `slicehub.db` in `data_dir`. A secret: it may hold a password.
    pub url: Option<SecretString>,
    pub max_connections: u32,
}

/// `[gpu]`
#[derive(Debug, Clone, Default)]
pub struct GpuConfig {
    pub backend: GpuBackendChoice,
    /// e.g. `1 x A100-40GB, 2 x H100-80GB`
    pub simulated: String,
    /// `None`: the standard places (`libnvidia-ml.so.1` on the linker path,
    /// `/usr/lib/x86_64-linux-gnu`, `/usr/local/nvidia/lib64`).
    pub nvml_library: Option<PathBuf>,
    pub call_timeout_seconds: u32,
    /// GPUs used whole that are split into shares.
    pub shares: Vec<super::GpuShares>,
    /// Compute slices a whole GPU of a model counts as, where not 7.
    pub weights: Vec<super::ModelWeight>,
}

/// `[docker]`
#[derive(Debug, Clone, Default)]
pub struct DockerConfig {
    /// `None`: `DOCKER_HOST` or the local unix socket.
    pub host: Option<String>,
}

/// `[log]`
#[derive(Debug, Clone, Default)]
pub struct LogConfig {
    pub format: LogFormat,
    pub level: String,
}

/// `[auth]`
#[derive(Debug, Clone, Default)]
pub struct AuthConfig {
    /// Password hashes allowed to run at once; 0 means one per CPU.
    pub hash_concurrency: u32,
    pub session_idle_minutes: u32,
    pub session_absolute_hours: u32,
}

/// `[sessions]`: GPU sessions, their containers and the loops that watch them.
#[derive(Debug, Clone, Default)]
pub struct SessionsConfig {
    /// Firewall rules keep session containers off the portal host and link-local addresses.
    pub host_firewall: bool,
    /// Private ranges (CIDR) sessions with internet may still reach.
    pub reachable_private_ranges: Vec<String>,
    pub default_image: String,
    /// Further images courses may choose, besides `default_image`.
    pub images: Vec<String>,
    pub max_per_user: u32,
    pub max_minutes: u32,
    pub max_compute_slices: u32,
    pub ready_timeout_seconds: u32,
    pub reconcile_seconds: u32,
    pub sample_seconds: u32,
    pub cpus_per_compute_slice: f64,
    pub memory_mib_per_memory_slice: u32,
    pub pids_limit: u32,
    pub profile_limits: Vec<ProfileLimit>,
}

/// `[limits]`: the administrator's ceilings over every course's policy and bookings.
#[derive(Debug, Clone, Default)]
pub struct LimitsConfig {
    pub session_minutes: u32,
    pub sessions_per_student: u32,
    pub compute_slices: u32,
    pub course_share_percent: u32,
    pub booking_days_ahead: u32,
    pub booking_slice_hours_per_week: u32,
}

/// `[quotas]`
#[derive(Debug, Clone, Default)]
pub struct QuotasConfig {
    pub min_launch_minutes: u32,
    pub warn_minutes: u32,
}

/// `[slurm]`: the cluster pool; `url` unset means none.
#[derive(Debug, Clone, Default)]
pub struct SlurmConfig {
    /// slurmrestd's URL.
    pub url: Option<String>,
    pub user: String,
    pub token: Option<SecretString>,
    /// The cluster's `jwt_hs256.key`: with it each student's jobs run as that student.
    pub jwt_key_file: Option<PathBuf>,
    pub users_file: Option<PathBuf>,
    pub partition: String,
    /// Course codes whose sessions run on Slurm (`*`: all), each with `=PARTITION` or not.
    pub courses: Vec<String>,
    pub container_command: Vec<String>,
    pub node_path: String,
}
