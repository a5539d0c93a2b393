//! NVIDIA MPS for GPUs split into capped shares: one control daemon per GPU, in a
//! container the portal runs, and what a session on one of its shares is given (the
//! daemon's pipe directory, its IPC namespace, its caps as variables).

use std::collections::BTreeMap;

use serde::Serialize;

use super::spec::{INSTANCE_LABEL, MANAGED_LABEL, ROLE_LABEL};

/// [`ROLE_LABEL`] of a GPU's MPS daemon.
pub const MPS_DAEMON_ROLE: &str = "mps-daemon";

/// Where the GPU's MPS volume is mounted, in the daemon and in every session on the GPU.
pub const MPS_DIR: &str = "/run/nvidia-mps";
pub const PIPE_DIR: &str = "/run/nvidia-mps/pipe";
pub const LOG_DIR: &str = "/run/nvidia-mps/log";

/// One share's caps, as MPS takes them, and how many shares the GPU has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct MpsCaps {
    pub memory_mib: u64,
    pub compute_percent: u8,
    pub shares: u8,
}

impl MpsCaps {
    /// The variables a CUDA client reads: its pipe directory, its memory cap on the one
    /// device it sees (ordinal 0), its share of the multiprocessors.
    pub fn client_env(&self) -> BTreeMap<String, String> {
        let mut env = self.limits();
        env.insert("CUDA_MPS_PIPE_DIRECTORY".to_string(), PIPE_DIR.to_string());
        env.insert("CUDA_MPS_LOG_DIRECTORY".to_string(), LOG_DIR.to_string());
        env
    }

    /// The caps as MPS reads them from its environment. In the daemon's they are every
    /// client's defaults, which a client's own variables may only lower: a student who
    /// unsets or raises theirs keeps the share's caps.
    fn limits(&self) -> BTreeMap<String, String> {
        BTreeMap::from([
            ("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT".to_string(), format!("0={}M", self.memory_mib)),
            ("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE".to_string(), self.compute_percent.to_string()),
        ])
    }
}

/// The control daemon of one GPU.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MpsDaemon {
    pub name: String,
    pub volume: String,
    pub image: String,
    pub gpu_uuid: String,
    /// The shell script the daemon's container runs (as `sh -c`, whatever the image's
    /// entry point).
    pub script: String,
    pub env: BTreeMap<String, String>,
    pub labels: BTreeMap<String, String>,
    /// `/dev/shm`, which the sessions joining its IPC namespace share: each share's own.
    pub shm_bytes: i64,
}

impl MpsDaemon {
    /// The daemon of GPU `gpu_uuid` for portal instance `instance`, run from `image` (the
    /// NVIDIA runtime puts the driver's MPS programs into it), capping each client at
    /// `caps`, with `shm_bytes` of `/dev/shm` for each share.
    pub fn for_gpu(instance: &str, gpu_uuid: &str, image: &str, caps: MpsCaps, shm_bytes: i64) -> MpsDaemon {
        // The MPS server runs as each client's user (1000) and writes its sockets and
        // logs there; sessions mount the directory read-only.
        let script = format!("mkdir -p {PIPE_DIR} {LOG_DIR} && chmod 1777 {PIPE_DIR} {LOG_DIR} && exec nvidia-cuda-mps-control -f");
        let mut env = BTreeMap::from([
                ("NVIDIA_VISIBLE_DEVICES".to_string(), gpu_uuid.to_string()),
                ("CUDA_VISIBLE_DEVICES".to_string(), gpu_uuid.to_string()),
                ("NVIDIA_DRIVER_CAPABILITIES".to_string(), "compute,utility".to_string()),
                ("CUDA_MPS_PIPE_DIRECTORY".to_string(), PIPE_DIR.to_string()),
                ("CUDA_MPS_LOG_DIRECTORY".to_string(), LOG_DIR.to_string()),
            ]);
        env.extend(caps.limits());
        MpsDaemon {
            name: daemon_name(instance, gpu_uuid),
            volume: mps_volume(instance, gpu_uuid),
            image: image.to_string(),
            gpu_uuid: gpu_uuid.to_string(),
            script,
            env,
            shm_bytes: shm_bytes.saturating_mul(i64::from(caps.shares.max(1))),
            labels: BTreeMap::from([
                (MANAGED_LABEL.to_string(), "true".to_string()),
                (INSTANCE_LABEL.to_string(), instance.to_string()),
                ("org.slicehub.gpu".to_string(), gpu_uuid.to_string()),
                (ROLE_LABEL.to_string(), MPS_DAEMON_ROLE.to_string()),
            ]),
        }
    }
}

/// The container of GPU `gpu_uuid`'s MPS daemon.
pub fn daemon_name(instance: &str, gpu_uuid: &str) -> String {
    format!("slicehub-{instance}-mps-{}", gpu_uuid.to_ascii_lowercase())
}

/// The volume holding GPU `gpu_uuid`'s MPS pipe and log directories.
pub fn mps_volume(instance: &str, gpu_uuid: &str) -> String {
    format!("slicehub-{instance}-mps-{}", gpu_uuid.to_ascii_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    const CAPS: MpsCaps = MpsCaps { memory_mib: 5758, compute_percent: 25, shares: 4 };

    #[test]
    fn a_share_reads_its_caps_from_mps_variables() {
        let env = CAPS.client_env();
        assert_eq!(env["CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"], "0=5758M");
        assert_eq!(env["CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"], "25");
        assert_eq!(env["CUDA_MPS_PIPE_DIRECTORY"], PIPE_DIR);
    }

    #[test]
    fn one_daemon_per_gpu_and_portal_sees_only_its_gpu() {
        let d = MpsDaemon::for_gpu("i-1", "GPU-AB12", "slicehub/jupyterlab:offline", CAPS, 1 << 30);
        assert_eq!(d.name, "slicehub-i-1-mps-gpu-ab12");
        assert_eq!(d.env["CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"], "0=5758M", "the daemon caps every client");
        assert_eq!(d.env["CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"], "25");
        assert_eq!(d.shm_bytes, 4 << 30, "each share's own /dev/shm");
        assert_eq!(d.volume, mps_volume("i-1", "GPU-AB12"));
        assert_eq!(d.env["NVIDIA_VISIBLE_DEVICES"], "GPU-AB12");
        assert_eq!(d.env["CUDA_VISIBLE_DEVICES"], "GPU-AB12");
        assert!(d.script.ends_with("exec nvidia-cuda-mps-control -f"));
        assert_ne!(d.name, daemon_name("i-2", "GPU-AB12"), "two portals on one engine keep apart");
    }
}
