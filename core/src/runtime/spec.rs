//! The container a session runs in, decided before Docker is asked: which image and
//! command, which MIG device, what limits and labels. Pure data, so both GPU shapes and
//! every hardening flag are tested without an engine; the Docker boundary only
//! translates it.

use std::collections::BTreeMap;

use serde::Serialize;

use super::mps::{daemon_name, mps_volume, MpsCaps};
use crate::auth::token_sha256;
use slicehub_mig::Sharing;
use crate::CoreError;

/// The port JupyterLab listens on inside the container.
pub const NOTEBOOK_PORT: u16 = 8888;
/// The image's non-root user (`jovyan`, group `users`).
pub const CONTAINER_USER: &str = "1000:100";
pub const HOME: &str = "/home/jovyan";
/// Every container SliceHub creates carries this label, so a restarted portal finds them.
pub const MANAGED_LABEL: &str = "org.slicehub.managed";
pub const SESSION_LABEL: &str = "org.slicehub.session";
/// Names the portal instance (its database) that owns the container, so two portals on
/// one engine never touch each other's containers, volumes or networks.
pub const INSTANCE_LABEL: &str = "org.slicehub.instance";
/// What a container the portal keeps for no session is for (`mps-daemon`).
pub const ROLE_LABEL: &str = "org.slicehub.role";

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum Workload {
    /// JupyterLab behind the portal at `base_url`, opened with `token`.
    Notebook { token: String, base_url: String },
    /// A training job: the command as argv, never through a shell.
    Job { argv: Vec<String> },
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Limits {
    pub cpus: f64,
    pub memory_mib: u64,
    pub pids: i64,
}

/// What the session holds and runs; everything the spec is made from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LaunchRequest {
    /// The portal instance's id ([`INSTANCE_LABEL`]).
    pub instance: String,
    /// Lowercase letters, digits and `-`; it names the container.
    pub session_id: String,
    pub username: String,
    pub course: String,
    pub gpu_uuid: String,
    /// e.g. `3g.40gb@4`
    pub placement: String,
    /// The device the container may use: a MIG device `MIG-…`, or the GPU's own UUID when
    /// the session has the whole GPU.
    pub mig_uuid: String,
    pub image: String,
    pub workload: Workload,
    pub limits: Limits,
    /// The engine has the NVIDIA runtime: the device is requested from it. Without it
    /// (a simulated GPU) the same device variables are set and nothing is requested.
    pub nvidia_runtime: bool,
    /// The portal's session network the container joins (with or without internet).
    pub network: String,
    /// Set when the session holds one of the shares of a GPU split into shares.
    pub share: Option<ShareRequest>,
}

/// How the GPU the session shares is shared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum ShareRequest {
    /// Through the GPU's MPS daemon, with these caps.
    Mps(MpsCaps),
    /// Plain time-slicing: the container gets the GPU and nothing caps it.
    TimeSliced,
}

impl ShareRequest {
    pub fn sharing(&self) -> Sharing {
        match self {
            ShareRequest::Mps(_) => Sharing::Mps,
            ShareRequest::TimeSliced => Sharing::TimeSliced,
        }
    }
}

/// A GPU device asked of the NVIDIA container runtime.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DeviceRequest {
    pub driver: String,
    pub device_ids: Vec<String>,
    pub capabilities: Vec<Vec<String>>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ContainerSpec {
    pub name: String,
    pub image: String,
    pub cmd: Vec<String>,
    pub env: BTreeMap<String, String>,
    pub labels: BTreeMap<String, String>,
    pub user: String,
    pub working_dir: String,
    /// Named volume mounted as the user's home in this course; never a host path.
    pub home_volume: String,
    /// Labels of the home volume: it belongs to this portal instance, user and course.
    pub volume_labels: BTreeMap<String, String>,
    /// The session network; nothing is published on the host's ports.
    pub network: String,
    pub device_request: Option<DeviceRequest>,
    pub nano_cpus: i64,
    pub memory_bytes: i64,
    /// Memory plus swap: equal to `memory_bytes`, so the container gets no swap.
    pub memory_swap_bytes: i64,
    /// `/dev/shm` (PyTorch DataLoader workers pass batches through it): half the memory
    /// limit, and charged to it. Docker's default of 64 MiB makes such workers fail.
    pub shm_bytes: i64,
    /// The image's files are read-only, so nothing fills the engine's disk through the
    /// container's own layer (which Docker cannot cap on most file systems); a student
    /// writes to the home volume, and to `/tmp`, a tmpfs of `tmp_bytes` charged to the
    /// memory limit.
    pub read_only_root: bool,
    pub tmp_bytes: i64,
    pub pids_limit: i64,
    pub cap_drop: Vec<String>,
    pub security_opt: Vec<String>,
    /// A share of an MPS GPU: the GPU's MPS volume, mounted at [`super::mps::MPS_DIR`].
    pub mps_volume: Option<String>,
    /// A share of an MPS GPU on real hardware: the daemon's IPC namespace, joined.
    pub ipc_mode: Option<String>,
}

impl ContainerSpec {
    pub fn for_session(request: &LaunchRequest) -> Result<ContainerSpec, CoreError> {
        let r = request;
        let id_ok = !r.session_id.is_empty()
            && r.session_id.len() <= 64
            && r.session_id
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
        if !id_ok {
            return Err(invalid(format!(
                "session id {:?} is not lowercase letters, digits and -",
                r.session_id
            )));
        }
        // A MIG device, or the GPU itself when it is used whole (MIG off or not offered).
        let whole_gpu = r.mig_uuid.starts_with("GPU-") && r.mig_uuid == r.gpu_uuid;
        if !r.mig_uuid.starts_with("MIG-") && !whole_gpu {
            return Err(invalid(format!(
                "{:?} is not a MIG device UUID nor this session's whole GPU",
                r.mig_uuid
            )));
        }
        if !(r.limits.cpus > 0.0 && r.limits.memory_mib > 0 && r.limits.pids > 0) {
            return Err(invalid(
                "CPU, memory and process limits must all be positive".to_string(),
            ));
        }

        let mut env = BTreeMap::new();
        // CUDA inside sees exactly this device, with or without the NVIDIA runtime.
        env.insert("NVIDIA_VISIBLE_DEVICES".to_string(), r.mig_uuid.clone());
        env.insert("CUDA_VISIBLE_DEVICES".to_string(), r.mig_uuid.clone());
        env.insert(
            "NVIDIA_DRIVER_CAPABILITIES".to_string(),
            "compute,utility".to_string(),
        );
        env.insert("HOME".to_string(), HOME.to_string());
        let cmd = match &r.workload {
            Workload::Notebook { token, base_url } => {
                if token.len() < 32 {
                    return Err(invalid(
                        "a notebook token must have at least 32 characters".to_string(),
                    ));
                }
                if !base_url.starts_with('/') || !base_url.ends_with('/') {
                    return Err(invalid(format!(
                        "base URL {base_url:?} must start and end with /"
                    )));
                }
                // Only the token's hash: JupyterLab admits the token the portal presents
                // (slicehub_auth.py), and no file, variable or command line of the
                // container holds the token. Nothing is written into the container, so a
                // launch makes no upload.
                env.insert("SLICEHUB_TOKEN_SHA256".to_string(), token_sha256(token));
                env.insert("SLICEHUB_BASE_URL".to_string(), base_url.clone());
                vec!["slicehub-notebook".to_string()]
            }
            Workload::Job { argv } => {
                if argv.is_empty() || argv[0].trim().is_empty() {
                    return Err(invalid("a training job needs a command".to_string()));
                }
                argv.clone()
            }
        };

        let mut mps_volume_name = None;
        let mut ipc_mode = None;
        match r.share {
            Some(ShareRequest::Mps(caps)) => {
                if !whole_gpu {
                    return Err(invalid("an MPS share is of a whole GPU".to_string()));
                }
                env.extend(caps.client_env());
                mps_volume_name = Some(mps_volume(&r.instance, &r.gpu_uuid));
                // Without the NVIDIA runtime (a simulated GPU) there is no daemon to join.
                ipc_mode = r.nvidia_runtime.then(|| format!("container:{}", daemon_name(&r.instance, &r.gpu_uuid)));
            }
            Some(ShareRequest::TimeSliced) | None => {}
        }
        let mut labels = BTreeMap::from([
            (MANAGED_LABEL.to_string(), "true".to_string()),
            (SESSION_LABEL.to_string(), r.session_id.clone()),
            (INSTANCE_LABEL.to_string(), r.instance.clone()),
            ("org.slicehub.user".to_string(), r.username.clone()),
            ("org.slicehub.course".to_string(), r.course.clone()),
            ("org.slicehub.gpu".to_string(), r.gpu_uuid.clone()),
            ("org.slicehub.placement".to_string(), r.placement.clone()),
            ("org.slicehub.mig".to_string(), r.mig_uuid.clone()),
        ]);
        if let Some(share) = r.share {
            labels.insert("org.slicehub.share".to_string(), share.sharing().config_word().to_string());
        }
        let device_request = r.nvidia_runtime.then(|| DeviceRequest {
            driver: "nvidia".to_string(),
            device_ids: vec![r.mig_uuid.clone()],
            capabilities: vec![vec!["gpu".to_string()]],
        });
        Ok(ContainerSpec {
            name: format!("slicehub-{}", r.session_id),
            image: r.image.clone(),
            cmd,
            env,
            labels,
            user: CONTAINER_USER.to_string(),
            working_dir: HOME.to_string(),
            home_volume: home_volume(&r.instance, &r.username, &r.course),
            volume_labels: BTreeMap::from([
                (MANAGED_LABEL.to_string(), "true".to_string()),
                (INSTANCE_LABEL.to_string(), r.instance.clone()),
                ("org.slicehub.user".to_string(), r.username.clone()),
                ("org.slicehub.course".to_string(), r.course.clone()),
            ]),
            network: r.network.clone(),
            device_request,
            nano_cpus: (r.limits.cpus * 1e9).round() as i64,
            memory_bytes: (r.limits.memory_mib as i64) * 1024 * 1024,
            memory_swap_bytes: (r.limits.memory_mib as i64) * 1024 * 1024,
            shm_bytes: (r.limits.memory_mib as i64) * 1024 * 1024 / 2,
            read_only_root: true,
            tmp_bytes: (r.limits.memory_mib as i64) * 1024 * 1024 / 4,
            pids_limit: r.limits.pids,
            cap_drop: vec!["ALL".to_string()],
            security_opt: vec!["no-new-privileges".to_string()],
            mps_volume: mps_volume_name,
            ipc_mode,
        })
    }
}

/// The user's home in one course: one volume per user and course of this portal instance,
/// kept across sessions, so an image one course chose never sees another course's work.
/// The username's length comes first: names and codes may both hold `-`, and
/// `alice-b` in `c` must not share `alice` in `b-c`'s volume.
pub fn home_volume(instance: &str, username: &str, course: &str) -> String {
    let safe = |text: &str| -> String {
        text.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '.' || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect()
    };
    let user = safe(username);
    format!("slicehub-{instance}-home-{}-{user}-{}", user.len(), safe(course))
}

fn invalid(message: String) -> CoreError {
    CoreError::InvalidRequest(message)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(workload: Workload, nvidia_runtime: bool) -> LaunchRequest {
        LaunchRequest {
            instance: "i-test".to_string(),
            session_id: "s-42".to_string(),
            username: "alice".to_string(),
            course: "CS-101".to_string(),
            gpu_uuid: "GPU-simulated-00-h100-80gb".to_string(),
            placement: "1g.10gb@3".to_string(),
            mig_uuid: "MIG-simulated-00-h100-80gb-1-0".to_string(),
            image: "slicehub/jupyterlab:offline".to_string(),
            workload,
            limits: Limits {
                cpus: 2.0,
                memory_mib: 8192,
                pids: 512,
            },
            nvidia_runtime,
            network: "slicehub-i-test-online".to_string(),
            share: None,
        }
    }

    fn notebook() -> Workload {
        Workload::Notebook {
            token: "t".repeat(48),
            base_url: "/user/alice/s-42/".to_string(),
        }
    }

    #[test]
    fn a_real_gpu_is_requested_from_the_nvidia_runtime() {
        let spec = ContainerSpec::for_session(&request(notebook(), true)).unwrap();
        let device = spec.device_request.expect("a device request");
        assert_eq!(device.driver, "nvidia");
        assert_eq!(device.device_ids, ["MIG-simulated-00-h100-80gb-1-0"]);
        assert_eq!(device.capabilities, [["gpu"]]);
        assert_eq!(
            spec.env["NVIDIA_VISIBLE_DEVICES"],
            "MIG-simulated-00-h100-80gb-1-0"
        );
    }

    #[test]
    fn a_simulated_gpu_gets_the_same_variables_and_no_device_request() {
        let spec = ContainerSpec::for_session(&request(notebook(), false)).unwrap();
        assert_eq!(spec.device_request, None);
        assert_eq!(
            spec.env["NVIDIA_VISIBLE_DEVICES"],
            "MIG-simulated-00-h100-80gb-1-0"
        );
        assert_eq!(
            spec.env["CUDA_VISIBLE_DEVICES"],
            "MIG-simulated-00-h100-80gb-1-0"
        );
    }

    #[test]
    fn every_container_is_hardened_limited_and_labelled() {
        let spec = ContainerSpec::for_session(&request(notebook(), false)).unwrap();
        assert_eq!(spec.user, "1000:100");
        assert_eq!(spec.cap_drop, ["ALL"]);
        assert_eq!(spec.security_opt, ["no-new-privileges"]);
        assert_eq!(spec.nano_cpus, 2_000_000_000);
        assert_eq!(spec.memory_bytes, 8 << 30);
        assert_eq!(spec.memory_swap_bytes, 8 << 30, "no swap beyond the memory limit");
        assert_eq!(spec.shm_bytes, 4 << 30, "half the memory for /dev/shm");
        assert!(spec.read_only_root, "nothing written to the image's layer");
        assert_eq!(spec.tmp_bytes, 2 << 30, "a quarter of the memory for /tmp");
        assert_eq!(spec.pids_limit, 512);
        assert_eq!(spec.home_volume, "slicehub-i-test-home-5-alice-CS-101");
        assert_eq!(spec.volume_labels["org.slicehub.course"], "CS-101");
        assert_eq!(spec.volume_labels[INSTANCE_LABEL], "i-test");
        assert_eq!(spec.network, "slicehub-i-test-online");
        assert_eq!(spec.labels[MANAGED_LABEL], "true");
        assert_eq!(spec.labels["org.slicehub.session"], "s-42");
        assert_eq!(spec.labels["org.slicehub.placement"], "1g.10gb@3");
        assert_eq!(spec.labels["org.slicehub.instance"], "i-test");
        assert_eq!(spec.name, "slicehub-s-42");
        assert_eq!(spec.env["SLICEHUB_BASE_URL"], "/user/alice/s-42/");
    }

    #[test]
    fn the_notebook_gets_only_the_tokens_hash_and_the_token_is_nowhere() {
        let spec = ContainerSpec::for_session(&request(notebook(), false)).unwrap();
        let token = "t".repeat(48);
        assert!(spec.env.values().all(|v| !v.contains(&token)), "{:?}", spec.env);
        assert!(spec.cmd.iter().all(|a| !a.contains(&token)));
        assert_eq!(spec.env["SLICEHUB_TOKEN_SHA256"], token_sha256(&token));
        assert!(!spec.env.contains_key("JUPYTER_TOKEN") && !spec.env.contains_key("JUPYTER_TOKEN_FILE"));
        let json = serde_json::to_string(&spec).unwrap();
        assert!(!json.contains(&token), "a serialized spec carries no token");
    }

    #[test]
    fn a_job_runs_its_argv_as_given_and_publishes_nothing() {
        let argv = vec![
            "python".to_string(),
            "train.py".to_string(),
            "--lr=1e-3; rm -rf /".to_string(),
        ];
        let spec =
            ContainerSpec::for_session(&request(Workload::Job { argv: argv.clone() }, false))
                .unwrap();
        assert_eq!(
            spec.cmd, argv,
            "shell metacharacters stay inside one argument"
        );
        assert!(!spec.env.contains_key("SLICEHUB_TOKEN_SHA256"));
    }

    #[test]
    fn a_whole_gpu_is_given_by_its_own_uuid() {
        let mut r = request(Workload::Job { argv: vec!["python".into()] }, true);
        r.mig_uuid = r.gpu_uuid.clone();
        let spec = ContainerSpec::for_session(&r).unwrap();
        assert_eq!(spec.env["NVIDIA_VISIBLE_DEVICES"], r.gpu_uuid);
        assert_eq!(spec.env["CUDA_VISIBLE_DEVICES"], r.gpu_uuid);
        let device = spec.device_request.expect("the NVIDIA runtime is asked for the GPU");
        assert_eq!(device.device_ids, [r.gpu_uuid.clone()]);
    }

    #[test]
    fn bad_requests_are_refused_with_a_reason() {
        let mut r = request(notebook(), false);
        r.session_id = "../etc".to_string();
        assert!(ContainerSpec::for_session(&r)
            .unwrap_err()
            .to_string()
            .contains("session id"));
        let mut r = request(notebook(), false);
        r.mig_uuid = "GPU-123".to_string();
        assert!(ContainerSpec::for_session(&r)
            .unwrap_err()
            .to_string()
            .contains("MIG device UUID"), "another GPU than the session's is refused");
        let r = request(Workload::Job { argv: vec![] }, false);
        assert!(ContainerSpec::for_session(&r)
            .unwrap_err()
            .to_string()
            .contains("needs a command"));
        let r = request(
            Workload::Notebook {
                token: "short".into(),
                base_url: "/x/".into(),
            },
            false,
        );
        assert!(ContainerSpec::for_session(&r)
            .unwrap_err()
            .to_string()
            .contains("32 characters"));
        let mut r = request(notebook(), false);
        r.limits.pids = 0;
        assert!(ContainerSpec::for_session(&r).is_err());
        assert_eq!(home_volume("i-x", "a/b c", "CS-101"), "slicehub-i-x-home-5-a_b_c-CS-101");
        assert_ne!(home_volume("i", "alice-b", "c"), home_volume("i", "alice", "b-c"));
    }

    fn share(kind: ShareRequest, nvidia_runtime: bool) -> LaunchRequest {
        let mut r = request(notebook(), nvidia_runtime);
        r.gpu_uuid = "GPU-simulated-04-l4-24gb".to_string();
        r.mig_uuid = r.gpu_uuid.clone();
        r.placement = "l4.24gb.1of4@2".to_string();
        r.share = Some(kind);
        r
    }

    #[test]
    fn an_mps_share_gets_its_gpu_its_caps_and_the_daemon_of_its_gpu() {
        let caps = MpsCaps { memory_mib: 5758, compute_percent: 25, shares: 4 };
        let spec = ContainerSpec::for_session(&share(ShareRequest::Mps(caps), true)).unwrap();
        assert_eq!(spec.device_request.unwrap().device_ids, ["GPU-simulated-04-l4-24gb"]);
        assert_eq!(spec.env["CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"], "0=5758M");
        assert_eq!(spec.env["CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"], "25");
        assert_eq!(spec.env["CUDA_MPS_PIPE_DIRECTORY"], super::super::mps::PIPE_DIR);
        assert_eq!(spec.mps_volume.as_deref(), Some("slicehub-i-test-mps-gpu-simulated-04-l4-24gb"));
        assert_eq!(spec.ipc_mode.as_deref(), Some("container:slicehub-i-test-mps-gpu-simulated-04-l4-24gb"));
        assert_eq!(spec.labels["org.slicehub.share"], "mps");
        assert_eq!(spec.cap_drop, ["ALL"], "a share is hardened as any session");

        let simulated = ContainerSpec::for_session(&share(ShareRequest::Mps(caps), false)).unwrap();
        assert_eq!(simulated.ipc_mode, None, "no daemon runs without the NVIDIA runtime");
        assert_eq!(simulated.env["CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"], "25");
    }

    #[test]
    fn a_time_sliced_share_gets_its_gpu_and_nothing_of_mps() {
        let spec = ContainerSpec::for_session(&share(ShareRequest::TimeSliced, true)).unwrap();
        assert_eq!(spec.env["NVIDIA_VISIBLE_DEVICES"], "GPU-simulated-04-l4-24gb");
        assert!(spec.env.keys().all(|k| !k.starts_with("CUDA_MPS")), "{:?}", spec.env);
        assert_eq!((spec.mps_volume, spec.ipc_mode), (None, None));
        assert_eq!(spec.labels["org.slicehub.share"], "time-sliced-no-isolation");
        let mut mig = request(notebook(), true);
        mig.share = Some(ShareRequest::Mps(MpsCaps { memory_mib: 1, compute_percent: 50, shares: 2 }));
        assert!(ContainerSpec::for_session(&mig).unwrap_err().to_string().contains("whole GPU"));
        assert_eq!(ContainerSpec::for_session(&request(notebook(), true)).unwrap().mps_volume, None);
    }
}
