//! Configuration: a TOML file plus `SLICEHUB_*` environment overrides.
//! Every key, its default and its expected form are listed once, in `keys.rs`.

mod gpu_sharing;
mod group_roles;
mod keys;
mod load;
mod sections;
mod secret_file;
mod sign_in;
mod sign_in_keys;
mod trusted_proxies;
mod values;

pub use gpu_sharing::{parse_shares, parse_weights, GpuShares, ModelWeight};
pub use group_roles::{CourseGroups, GroupRoles};
pub use keys::{KeySpec, KEYS};
pub use sign_in::{oidc_problem, HeaderSignInConfig, LdapConfig, OidcProviderConfig, SignInConfig, OIDC_FIELDS};
pub use sign_in_keys::SIGN_IN_KEYS;
pub use load::{load, ConfigError, ConfigSource};
pub use sections::{
    AuthConfig, DatabaseConfig, DockerConfig, GpuBackendChoice, GpuConfig, LimitsConfig, LogConfig, LogFormat,
    MetricsConfig, NotebooksConfig, QuotasConfig, ServerConfig, SessionsConfig, SlurmConfig,
};
pub use secrecy::{ExposeSecret, SecretString};
pub use trusted_proxies::TrustedProxies;
pub use values::{NotebookDomain, PublicUrl};

use std::path::PathBuf;

/// The LAN's addresses: RFC 1918 and the shared address space of carrier NAT. Sessions
/// never reach them, except the blocks `sessions.reachable_private_ranges` lists.
pub const PRIVATE_RANGES: [&str; 4] = ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10"];

/// The whole configuration: `data_dir` and one section per component. Its `Default` is
/// every key at its documented default.
#[derive(Debug, Clone)]
pub struct Config {
    pub data_dir: PathBuf,
    pub server: ServerConfig,
    pub notebooks: NotebooksConfig,
    pub metrics: MetricsConfig,
    pub database: DatabaseConfig,
    pub gpu: GpuConfig,
    pub docker: DockerConfig,
    pub log: LogConfig,
    pub auth: AuthConfig,
    pub sessions: SessionsConfig,
    pub limits: LimitsConfig,
    pub quotas: QuotasConfig,
    pub slurm: SlurmConfig,
    pub sign_in: SignInConfig,
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
            server: ServerConfig::default(),
            notebooks: NotebooksConfig::default(),
            metrics: MetricsConfig::default(),
            database: DatabaseConfig::default(),
            gpu: GpuConfig::default(),
            docker: DockerConfig::default(),
            log: LogConfig::default(),
            auth: AuthConfig::default(),
            sessions: SessionsConfig::default(),
            limits: LimitsConfig::default(),
            quotas: QuotasConfig::default(),
            slurm: SlurmConfig::default(),
            sign_in: SignInConfig::default(),
        };
        for key in all_keys() {
            (key.apply)(&mut config, key.default).expect("built-in defaults parse");
        }
        config
    }
}

/// Every key of the flat sections; `[oidc.NAME]` tables are read apart (`OIDC_FIELDS`).
pub fn all_keys() -> impl Iterator<Item = &'static KeySpec> {
    KEYS.iter().chain(SIGN_IN_KEYS.iter())
}

impl Config {
    /// The administrator's list: the only images a course may choose, the default first.
    pub fn offered_images(&self) -> Vec<String> {
        let mut images = vec![self.sessions.default_image.clone()];
        for image in &self.sessions.images {
            if !images.contains(image) {
                images.push(image.clone());
            }
        }
        images
    }

    /// `server.public_url`, or `http://` and the bind address (loopback when it binds
    /// every address), without a trailing `/`.
    pub fn public_url(&self) -> String {
        if let Some(url) = &self.server.public_url {
            return url.as_str().to_string();
        }
        let bind = self.server.bind;
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
        self.slurm.url.as_ref()?;
        let entry = |c: &&String| {
            let code = c.split_once('=').map_or(c.as_str(), |(code, _)| code).trim();
            code.eq_ignore_ascii_case(course_code)
        };
        let named = self.slurm.courses.iter().find(entry);
        let any = self.slurm.courses.iter().find(|c| c.trim() == "*");
        match named.or(any)?.split_once('=') {
            Some((_, partition)) => Some(partition.trim()),
            None => Some(self.slurm.partition.as_str()),
        }
    }

    /// The database URL actually used: the configured one, or the SQLite file in `data_dir`.
    pub fn effective_database_url(&self) -> String {
        match &self.database.url {
            Some(url) => url.expose_secret().to_string(),
            None => format!("sqlite://{}?mode=rwc", self.data_dir.join("slicehub.db").display()),
        }
    }
}

#[cfg(test)]
mod slurm_tests {
    use super::Config;

    #[test]
    fn each_course_on_slurm_has_its_partition() {
        let mut config = Config::default();
        config.slurm.partition = "gpu".into();
        config.slurm.courses = vec!["CS-101".into(), "HPC-1=class".into()];
        assert_eq!(config.slurm_partition_of("CS-101"), None, "no cluster configured");
        config.slurm.url = Some("http://slurmctl:6820".into());
        assert_eq!(config.slurm_partition_of("cs-101"), Some("gpu"));
        assert_eq!(config.slurm_partition_of("HPC-1"), Some("class"));
        assert_eq!(config.slurm_partition_of("ML-2"), None);
        config.slurm.courses.push("*".into());
        assert_eq!(config.slurm_partition_of("ML-2"), Some("gpu"));
    }
}
