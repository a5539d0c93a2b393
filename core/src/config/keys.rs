use std::path::PathBuf;

use secrecy::SecretString;

use super::{Config, GpuBackendChoice, LogFormat, NotebookDomain, PublicUrl};

/// One configuration key: its TOML name (`section.key`), default, the form a value must
/// take, what it does, and how a value is applied.
pub struct KeySpec {
    pub key: &'static str,
    pub default: &'static str,
    pub expected: &'static str,
    pub doc: &'static str,
    pub apply: fn(&mut Config, &str) -> Result<(), ()>,
}

impl KeySpec {
    /// `server.bind` → `SLICEHUB_SERVER_BIND`
    pub fn env_name(&self) -> String {
        format!("SLICEHUB_{}", self.key.replace('.', "_").to_uppercase())
    }
}

fn one_of<T: Copy>(value: &str, choices: &[(&str, T)]) -> Result<T, ()> {
    choices
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case(value.trim()))
        .map(|(_, v)| *v)
        .ok_or(())
}

pub(super) fn flag(value: &str) -> Result<bool, ()> {
    match value.trim().to_ascii_lowercase().as_str() {
        "true" | "yes" | "1" | "on" => Ok(true),
        "false" | "no" | "0" | "off" => Ok(false),
        _ => Err(()),
    }
}

pub static KEYS: &[KeySpec] = &[
    KeySpec {
        key: "data_dir",
        default: "data",
        expected: "a directory path (created if missing)",
        doc: "Where SliceHub keeps its SQLite database and simulated-GPU state.",
        apply: |c, v| {
            if v.trim().is_empty() {
                return Err(());
            }
            c.data_dir = v.trim().into();
            Ok(())
        },
    },
    KeySpec {
        key: "server.bind",
        default: "127.0.0.1:3000",
        expected: "an address and port such as 127.0.0.1:3000 or 0.0.0.0:8080",
        doc: "Address the portal listens on.",
        apply: |c, v| {
            c.server.bind = v.trim().parse().map_err(|_| ())?;
            Ok(())
        },
    },
    KeySpec {
        key: "server.site_root",
        default: "target/site",
        expected: "a directory path",
        doc: "Where the built browser assets are (written by `cargo leptos build`).",
        apply: |c, v| {
            if v.trim().is_empty() {
                return Err(());
            }
            c.server.site_root = v.trim().into();
            Ok(())
        },
    },
    KeySpec {
        key: "server.trusted_proxies",
        default: "",
        expected: "empty, or addresses and CIDR blocks separated by commas, such as 10.0.0.0/8, 127.0.0.1",
        doc: "Reverse proxies in front of the portal. Only a request from one of them has its client taken from X-Forwarded-For (the right-most address that is not itself a trusted proxy); every other request's client is its TCP peer.",
        apply: |c, v| {
            c.server.trusted_proxies = super::TrustedProxies::parse(v)?;
            Ok(())
        },
    },
    KeySpec {
        key: "server.api_requests_per_minute",
        default: "600",
        expected: "a whole number from 1 to 60000",
        doc: "How many requests each person may make to the REST and JupyterHub APIs a minute, whichever of their tokens they use (each client address, for requests without a valid token; every address also has ten times this before any token is looked up); more are answered 429.",
        apply: |c, v| {
            c.server.api_requests_per_minute = v.trim().parse().ok().filter(|n| (1..=60_000).contains(n)).ok_or(())?;
            Ok(())
        },
    },
    KeySpec {
        key: "server.api_burst",
        default: "100",
        expected: "a whole number from 1 to 10000",
        doc: "How many API requests a person or address may send at once before `server.api_requests_per_minute` paces them.",
        apply: |c, v| {
            c.server.api_burst = v.trim().parse().ok().filter(|n| (1..=10_000).contains(n)).ok_or(())?;
            Ok(())
        },
    },
    KeySpec {
        key: "server.secure_cookies",
        default: "false",
        expected: "true or false",
        doc: "Mark the session cookie Secure (and give it the __Host- prefix). Unset, it follows server.public_url: true for https://. False with an https:// public_url is refused at start.",
        apply: |c, v| {
            c.server.secure_cookies = flag(v)?;
            Ok(())
        },
    },
    KeySpec {
        key: "server.notebook_domain",
        default: "nb.localhost",
        expected: "a DNS name such as example-notebooks.net (its wildcard must resolve to the portal)",
        doc: "Each notebook is served on its own host, SESSION.<this domain>, so nothing it runs shares the portal's origin.",
        apply: |c, v| {
            c.server.notebook_domain = NotebookDomain::parse(v)?;
            Ok(())
        },
    },
    KeySpec {
        key: "server.public_url",
        default: "",
        expected: "empty, or the URL browsers use for the portal, such as https://gpu.example.edu",
        doc: "How browsers reach the portal; notebook hosts use its scheme and port. Empty: http:// and server.bind.",
        apply: |c, v| {
            c.server.public_url = unless_empty(v.trim().trim_end_matches('/')).map(PublicUrl::parse).transpose()?;
            Ok(())
        },
    },
    KeySpec {
        key: "notebooks.admin_access",
        default: "false",
        expected: "true or false",
        doc: "Let administrators open students' notebooks (each visit confirmed and audited).",
        apply: |c, v| {
            c.notebooks.admin_access = flag(v)?;
            Ok(())
        },
    },
    KeySpec {
        key: "metrics.token",
        default: "",
        expected: "empty, or 16 to 256 visible ASCII characters",
        doc: "The bearer token Prometheus sends to `/metrics`; empty: `/metrics` answers 404.",
        apply: |c, v| {
            let v = v.trim();
            let fits = v.is_empty()
                || ((16..=256).contains(&v.len()) && v.chars().all(|ch| ch.is_ascii_graphic()));
            if !fits {
                return Err(());
            }
            c.metrics.token = unless_empty(v).map(SecretString::from);
            Ok(())
        },
    },
    KeySpec {
        key: "sessions.host_firewall",
        default: "true",
        expected: "true or false",
        doc: "Install firewall rules (iptables INPUT and DOCKER-USER) that keep session containers off the portal host's services, link-local addresses and the private ranges of the LAN.",
        apply: |c, v| {
            c.sessions.host_firewall = flag(v)?;
            Ok(())
        },
    },
    KeySpec {
        key: "sessions.reachable_private_ranges",
        default: "",
        expected: "empty, or IPv4 blocks such as 10.20.30.0/24 inside 10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16 or 100.64.0.0/10, separated by commas",
        doc: "Private addresses sessions with internet may still reach (a campus package mirror or proxy); the rest of the LAN's ranges are dropped.",
        apply: |c, v| {
            c.sessions.reachable_private_ranges = private_ranges(v)?;
            Ok(())
        },
    },
    KeySpec {
        key: "database.url",
        default: "",
        expected: "empty, sqlite://PATH or postgres://USER:PASSWORD@HOST:PORT/DB",
        doc: "Empty: a SQLite file in data_dir. Otherwise a SQLite or PostgreSQL URL.",
        apply: |c, v| {
            let v = v.trim();
            let ok = v.is_empty()
                || v.starts_with("sqlite:")
                || v.starts_with("postgres://")
                || v.starts_with("postgresql://");
            if !ok {
                return Err(());
            }
            c.database.url = unless_empty(v).map(SecretString::from);
            Ok(())
        },
    },
    KeySpec {
        key: "database.max_connections",
        default: "10",
        expected: "a whole number from 1 to 1000",
        doc: "Size of the database connection pool.",
        apply: |c, v| {
            let n: u32 = v.trim().parse().map_err(|_| ())?;
            if !(1..=1000).contains(&n) {
                return Err(());
            }
            c.database.max_connections = n;
            Ok(())
        },
    },
    KeySpec {
        key: "gpu.backend",
        default: "auto",
        expected: "one of auto, nvml, simulated",
        doc: "auto: NVML when an NVIDIA driver is present, otherwise the simulated inventory.",
        apply: |c, v| {
            c.gpu.backend = one_of(
                v,
                &[
                    ("auto", GpuBackendChoice::Auto),
                    ("nvml", GpuBackendChoice::Nvml),
                    ("simulated", GpuBackendChoice::Simulated),
                ],
            )?;
            Ok(())
        },
    },
    KeySpec {
        key: "gpu.simulated",
        default: "1 x A100-40GB",
        expected: "a list such as `1 x A100-40GB, 2 x H100-80GB, 1 x L4-24GB, 1 x H100-80GB mig=off` (MIG models: A100-40GB, A100-80GB, H100-80GB, H100-94GB, H200-141GB, B200-180GB, each also `mig=off`; without MIG: L40S-48GB, L4-24GB, A10-24GB, A40-48GB, RTX4090-24GB, RTX6000ADA-48GB, T4-16GB, V100-16GB, V100-32GB)",
        doc: "The simulated inventory used when no NVIDIA driver is present.",
        apply: |c, v| {
            crate::gpu::parse_inventory(v).map_err(|_| ())?;
            c.gpu.simulated = v.trim().to_string();
            Ok(())
        },
    },
    KeySpec {
        key: "gpu.nvml_library",
        default: "",
        expected: "empty or the path of libnvidia-ml.so.1",
        doc: "Where to load NVML from; empty searches the standard places.",
        apply: |c, v| {
            c.gpu.nvml_library = unless_empty(v).map(PathBuf::from);
            Ok(())
        },
    },
    KeySpec {
        key: "gpu.shares",
        default: "",
        expected: "empty, or GPU = COUNT KIND separated by commas, where GPU is an index or a GPU UUID, COUNT 2 to 7, KIND `mps` or `time-sliced-no-isolation`, e.g. `1 = 4 mps`",
        doc: "GPUs used whole (no MIG) that several sessions share at once. `mps` caps each share's GPU memory and compute; `time-sliced-no-isolation` caps nothing. A fault in one share can end the others' in both.",
        apply: |c, v| {
            c.gpu.shares = super::parse_shares(v)?;
            Ok(())
        },
    },
    KeySpec {
        key: "gpu.weights",
        default: "",
        expected: "empty, or WHOLE-GPU-PROFILE = COMPUTE-SLICES (1 to 7) separated by commas, e.g. `l40s.48gb = 4, t4.16gb = 1`",
        doc: "How many compute slices an hour of a whole GPU of a model counts as in quotas and reports (7 when not listed); one of N shares counts 1/N of it.",
        apply: |c, v| {
            c.gpu.weights = super::parse_weights(v)?;
            Ok(())
        },
    },
    KeySpec {
        key: "gpu.call_timeout_seconds",
        default: "30",
        expected: "a whole number from 1 to 600",
        doc: "How long one NVML call may take before the portal gives up on it (a GPU falling off the bus can hang the driver); the call is left behind and the GPU reads as failing.",
        apply: |c, v| {
            c.gpu.call_timeout_seconds = whole_number(v, 1, 600)?;
            Ok(())
        },
    },
    KeySpec {
        key: "docker.host",
        default: "",
        expected: "empty, unix:///PATH or tcp://HOST:PORT",
        doc: "The Docker engine; empty uses DOCKER_HOST or /var/run/docker.sock.",
        apply: |c, v| {
            let v = v.trim();
            let ok = v.is_empty()
                || v.starts_with("unix://")
                || v.starts_with("tcp://")
                || v.starts_with("http://");
            if !ok {
                return Err(());
            }
            c.docker.host = unless_empty(v).map(str::to_string);
            Ok(())
        },
    },
    KeySpec {
        key: "log.format",
        default: "text",
        expected: "one of text, json",
        doc: "Log line format; `--log-json` on the command line also selects json.",
        apply: |c, v| {
            c.log.format = one_of(v, &[("text", LogFormat::Text), ("json", LogFormat::Json)])?;
            Ok(())
        },
    },
    KeySpec {
        key: "log.level",
        default: "info",
        expected: "a tracing filter such as info, debug or slicehub=debug,info",
        doc: "Which log lines are written; RUST_LOG, when set, wins.",
        apply: |c, v| {
            let v = v.trim();
            let ok = !v.is_empty()
                && v.chars().all(|ch| ch.is_ascii_alphanumeric() || "_=,:.-".contains(ch));
            if !ok {
                return Err(());
            }
            c.log.level = v.to_string();
            Ok(())
        },
    },
    KeySpec {
        key: "auth.hash_concurrency",
        default: "0",
        expected: "a whole number from 0 to 1024 (0 = number of CPUs)",
        doc: "How many password hashes may run at once; each holds about 19 MiB while it runs.",
        apply: |c, v| {
            c.auth.hash_concurrency = whole_number(v, 0, 1024)?;
            Ok(())
        },
    },
    KeySpec {
        key: "auth.session_idle_minutes",
        default: "480",
        expected: "a whole number of minutes from 1 to 525600",
        doc: "A login session ends after this long without a request.",
        apply: |c, v| {
            c.auth.session_idle_minutes = whole_number(v, 1, 525_600)?;
            Ok(())
        },
    },
    KeySpec {
        key: "auth.session_absolute_hours",
        default: "168",
        expected: "a whole number of hours from 1 to 8760",
        doc: "A login session ends this long after the login, however active it is.",
        apply: |c, v| {
            c.auth.session_absolute_hours = whole_number(v, 1, 8_760)?;
            Ok(())
        },
    },
    KeySpec {
        key: "sessions.default_image",
        default: "slicehub/jupyterlab:offline",
        expected: "a Docker image reference such as repo/name:tag",
        doc: "The image a course allows when its policy names none.",
        apply: |c, v| {
            c.sessions.default_image = image_reference(v)?;
            Ok(())
        },
    },
    KeySpec {
        key: "sessions.images",
        default: "",
        expected: "empty, or Docker image references separated by commas",
        doc: "Further images a course may choose; with sessions.default_image, the only images any course can run.",
        apply: |c, v| {
            c.sessions.images = v
                .split(',')
                .map(str::trim)
                .filter(|i| !i.is_empty())
                .map(image_reference)
                .collect::<Result<_, _>>()?;
            Ok(())
        },
    },
    KeySpec {
        key: "sessions.max_per_user",
        default: "1",
        expected: "a whole number from 1 to 64",
        doc: "How many sessions (queued or running) one person may have at once.",
        apply: |c, v| {
            c.sessions.max_per_user = whole_number(v, 1, 64)?;
            Ok(())
        },
    },
    KeySpec {
        key: "sessions.max_compute_slices",
        default: "4",
        expected: "a whole number from 1 to 7",
        doc: "The largest slice (in compute slices: 3 for a 3g) one student may claim when their course's policy sets no cap, so nobody takes a whole GPU unless the course allows it.",
        apply: |c, v| {
            c.sessions.max_compute_slices = whole_number(v, 1, 7)?;
            Ok(())
        },
    },
    KeySpec {
        key: "limits.session_minutes",
        default: "1440",
        expected: "a whole number of minutes from 1 to 10080",
        doc: "The longest session any course may set (its instructors choose up to this).",
        apply: |c, v| {
            c.limits.session_minutes = whole_number(v, 1, 10_080)?;
            Ok(())
        },
    },
    KeySpec {
        key: "limits.sessions_per_student",
        default: "4",
        expected: "a whole number from 1 to 64",
        doc: "The most sessions at once any course may let one student have.",
        apply: |c, v| {
            c.limits.sessions_per_student = whole_number(v, 1, 64)?;
            Ok(())
        },
    },
    KeySpec {
        key: "limits.compute_slices",
        default: "7",
        expected: "a whole number from 1 to 7",
        doc: "The largest slice (in compute slices) any course may let one student take.",
        apply: |c, v| {
            c.limits.compute_slices = whole_number(v, 1, 7)?;
            Ok(())
        },
    },
    KeySpec {
        key: "limits.course_share_percent",
        default: "100",
        expected: "a whole number from 1 to 100",
        doc: "The most of these GPUs' compute slices one course's sessions may hold or wait for at once.",
        apply: |c, v| {
            c.limits.course_share_percent = whole_number(v, 1, 100)?;
            Ok(())
        },
    },
    KeySpec {
        key: "limits.booking_days_ahead",
        default: "180",
        expected: "a whole number of days from 1 to 400",
        doc: "How far ahead a course may book a lab (its last window included).",
        apply: |c, v| {
            c.limits.booking_days_ahead = whole_number(v, 1, 400)?;
            Ok(())
        },
    },
    KeySpec {
        key: "limits.booking_slice_hours_per_week",
        default: "200",
        expected: "a whole number from 1 to 100000",
        doc: "The most compute-slice-hours one course's booked labs may keep in a week.",
        apply: |c, v| {
            c.limits.booking_slice_hours_per_week = whole_number(v, 1, 100_000)?;
            Ok(())
        },
    },
    KeySpec {
        key: "quotas.min_launch_minutes",
        default: "15",
        expected: "a whole number of minutes from 1 to 600",
        doc: "A student whose slice-hour budget cannot run the chosen slice this long is refused at launch instead of started and stopped at once.",
        apply: |c, v| {
            c.quotas.min_launch_minutes = whole_number(v, 1, 600)?;
            Ok(())
        },
    },
    KeySpec {
        key: "quotas.warn_minutes",
        default: "10",
        expected: "a whole number of minutes from 1 to 600",
        doc: "How long before a session is stopped (time limit or used-up budget) the student's page warns.",
        apply: |c, v| {
            c.quotas.warn_minutes = whole_number(v, 1, 600)?;
            Ok(())
        },
    },
    KeySpec {
        key: "sessions.max_minutes",
        default: "240",
        expected: "a whole number of minutes from 1 to 10080",
        doc: "Longest a session may run when its course's policy sets no limit; then it is stopped.",
        apply: |c, v| {
            c.sessions.max_minutes = whole_number(v, 1, 10_080)?;
            Ok(())
        },
    },
    KeySpec {
        key: "sessions.ready_timeout_seconds",
        default: "180",
        expected: "a whole number of seconds from 5 to 3600",
        doc: "How long JupyterLab may take to answer its status API before the session fails.",
        apply: |c, v| {
            c.sessions.ready_timeout_seconds = whole_number(v, 5, 3_600)?;
            Ok(())
        },
    },
    KeySpec {
        key: "sessions.reconcile_seconds",
        default: "15",
        expected: "a whole number of seconds from 1 to 3600",
        doc: "How often the database, Docker and the GPUs are reconciled (also at start-up).",
        apply: |c, v| {
            c.sessions.reconcile_seconds = whole_number(v, 1, 3_600)?;
            Ok(())
        },
    },
    KeySpec {
        key: "sessions.sample_seconds",
        default: "10",
        expected: "a whole number of seconds from 1 to 3600",
        doc: "How often each running session's slice activity and memory are sampled.",
        apply: |c, v| {
            c.sessions.sample_seconds = whole_number(v, 1, 3_600)?;
            Ok(())
        },
    },
    KeySpec {
        key: "sessions.cpus_per_compute_slice",
        default: "2",
        expected: "a number of CPUs from 0.1 to 64",
        doc: "CPU limit of a container per compute slice of its MIG profile (1g = 1 slice).",
        apply: |c, v| {
            let n: f64 = v.trim().parse().map_err(|_| ())?;
            if !(0.1..=64.0).contains(&n) {
                return Err(());
            }
            c.sessions.cpus_per_compute_slice = n;
            Ok(())
        },
    },
    KeySpec {
        key: "sessions.memory_mib_per_memory_slice",
        default: "4096",
        expected: "a whole number of MiB from 64 to 1048576",
        doc: "Host memory limit of a container per memory slice (of 8) its MIG profile covers.",
        apply: |c, v| {
            c.sessions.memory_mib_per_memory_slice = whole_number(v, 64, 1_048_576)?;
            Ok(())
        },
    },
    KeySpec {
        key: "sessions.pids_limit",
        default: "1024",
        expected: "a whole number from 16 to 1000000",
        doc: "Most processes and threads one session's container may have.",
        apply: |c, v| {
            c.sessions.pids_limit = whole_number(v, 16, 1_000_000)?;
            Ok(())
        },
    },
    KeySpec {
        key: "sessions.profile_limits",
        default: "",
        expected: "empty, or PROFILE=CPUS/MEMORY_MIB/PIDS separated by commas, e.g. 7g.80gb=16/65536/4096",
        doc: "Limits for named profiles that replace the per-slice scaling.",
        apply: |c, v| {
            c.sessions.profile_limits = super::ProfileLimit::parse_list(v)?;
            Ok(())
        },
    },
    KeySpec {
        key: "slurm.url",
        default: "",
        expected: "empty, or slurmrestd's http:// or https:// URL, e.g. http://slurmctl:6820",
        doc: "The Slurm cluster's REST API; empty: every session runs on this machine's Docker engine.",
        apply: |c, v| {
            let v = v.trim().trim_end_matches('/');
            if !(v.is_empty() || v.starts_with("http://") || v.starts_with("https://")) {
                return Err(());
            }
            c.slurm.url = unless_empty(v).map(str::to_string);
            Ok(())
        },
    },
    KeySpec {
        key: "slurm.user",
        default: "slicehub",
        expected: "a Slurm user name",
        doc: "The Slurm user the portal's jobs run as (the token is this user's).",
        apply: |c, v| {
            let v = v.trim();
            if v.is_empty() || !v.chars().all(|ch| ch.is_ascii_alphanumeric() || "._-".contains(ch)) {
                return Err(());
            }
            c.slurm.user = v.to_string();
            Ok(())
        },
    },
    KeySpec {
        key: "slurm.token",
        default: "",
        expected: "a JWT from `scontrol token username=USER`",
        doc: "The token slurmrestd accepts for `slurm.user`.",
        apply: |c, v| {
            c.slurm.token = unless_empty(v).map(SecretString::from);
            Ok(())
        },
    },
    KeySpec {
        key: "slurm.jwt_key_file",
        default: "",
        expected: "empty, or the path of the cluster's JWT key (AuthAltParameters=jwt_key=…), readable by the portal",
        doc: "With the cluster's key the portal signs a token per student, so each student's jobs run as their own Unix user.",
        apply: |c, v| {
            c.slurm.jwt_key_file = optional_file(v)?;
            Ok(())
        },
    },
    KeySpec {
        key: "slurm.users_file",
        default: "",
        expected: "empty, or the path of a file with one line per student: PORTAL_NAME [CLUSTER_NAME]",
        doc: "With slurm.jwt_key_file, the only students whose jobs run on the cluster, and the cluster account each runs as; all-digit, system and slurm.user names are refused.",
        apply: |c, v| {
            c.slurm.users_file = optional_file(v)?;
            Ok(())
        },
    },
    KeySpec {
        key: "slurm.partition",
        default: "gpu",
        expected: "a Slurm partition name",
        doc: "The partition the Slurm pool's sessions are submitted to.",
        apply: |c, v| {
            let v = v.trim();
            if v.is_empty() || !v.chars().all(|ch| ch.is_ascii_alphanumeric() || "._-".contains(ch)) {
                return Err(());
            }
            c.slurm.partition = v.to_string();
            Ok(())
        },
    },
    KeySpec {
        key: "slurm.courses",
        default: "",
        expected: "course codes separated by commas, each optionally =PARTITION, or *",
        doc: "The courses whose sessions run on the Slurm cluster (* for all), in slurm.partition or their own; the others run on this machine.",
        apply: |c, v| {
            let entries: Vec<String> = v.split(',').map(|w| w.trim().to_string()).filter(|w| !w.is_empty()).collect();
            let valid = |e: &String| {
                let (code, partition) = e.split_once('=').map_or((e.as_str(), "x"), |(c, p)| (c.trim(), p.trim()));
                let word = |w: &str| !w.is_empty() && w.chars().all(|ch| ch.is_ascii_alphanumeric() || "._-".contains(ch));
                (code == "*" || word(code)) && word(partition)
            };
            if !entries.iter().all(valid) {
                return Err(());
            }
            c.slurm.courses = entries;
            Ok(())
        },
    },
    KeySpec {
        key: "slurm.container_command",
        default: "",
        expected: "empty, or the words that run a command in the course image on a node, with {image}",
        doc: "How a job enters the course's image on the node, e.g. `apptainer exec --nv {image}`; empty runs it on the node as it is.",
        apply: |c, v| {
            c.slurm.container_command = if v.trim().is_empty() {
                Vec::new()
            } else {
                crate::argv::split_command(v).map_err(|_| ())?
            };
            Ok(())
        },
    },
    KeySpec {
        key: "slurm.node_path",
        default: "/opt/venv/bin:/usr/local/bin:/usr/bin:/bin",
        expected: "a PATH for jobs on the nodes",
        doc: "Where a job finds JupyterLab (`slicehub-notebook`) and its command on the nodes.",
        apply: |c, v| {
            if v.trim().is_empty() {
                return Err(());
            }
            c.slurm.node_path = v.trim().to_string();
            Ok(())
        },
    },
];

fn image_reference(value: &str) -> Result<String, ()> {
    let v = value.trim();
    let ok = !v.is_empty()
        && v.len() <= 255
        && v.chars().all(|ch| ch.is_ascii_alphanumeric() || "._-/:@".contains(ch));
    if ok {
        Ok(v.to_string())
    } else {
        Err(())
    }
}

/// IPv4 blocks inside the LAN's ranges (never link-local or public ones), normalised.
fn private_ranges(value: &str) -> Result<Vec<String>, ()> {
    let lan: Vec<ipnet::Ipv4Net> = super::PRIVATE_RANGES
        .iter()
        .filter_map(|r| r.parse().ok())
        .collect();
    value
        .split(',')
        .map(str::trim)
        .filter(|r| !r.is_empty())
        .map(|r| {
            let net: ipnet::Ipv4Net = r.parse().map_err(|_| ())?;
            let net = net.trunc();
            if lan.iter().any(|l| l.contains(&net)) {
                Ok(net.to_string())
            } else {
                Err(())
            }
        })
        .collect()
}

/// Empty, or the path of a file that exists.
fn optional_file(value: &str) -> Result<Option<PathBuf>, ()> {
    match unless_empty(value).map(PathBuf::from) {
        Some(path) if !path.is_file() => Err(()),
        file => Ok(file),
    }
}

/// The trimmed value, or `None` for an empty one: an unset optional key.
pub(super) fn unless_empty(value: &str) -> Option<&str> {
    Some(value.trim()).filter(|v| !v.is_empty())
}

fn whole_number(value: &str, min: u32, max: u32) -> Result<u32, ()> {
    let n: u32 = value.trim().parse().map_err(|_| ())?;
    if (min..=max).contains(&n) {
        Ok(n)
    } else {
        Err(())
    }
}
