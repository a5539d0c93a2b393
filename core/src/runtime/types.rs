//! What the container engine reports and is asked for, in the engine's own terms but
//! free of any engine library: the session service and the engines (`slicehub-docker`,
//! the in-process fake) share these.

use std::time::Duration;

use serde::Serialize;

/// What a probe of the engine found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EngineStatus {
    pub reachable: bool,
    /// e.g. `unix:///var/run/docker.sock`
    pub endpoint: String,
    pub version: Option<String>,
    /// The API version both sides agreed on.
    pub api_version: Option<String>,
    pub nvidia_runtime: bool,
    /// Where images and containers' layers live, e.g. `overlay2`.
    pub storage_driver: Option<String>,
    /// Why the engine could not be used, when it could not.
    pub reason: Option<String>,
    /// The engine's disk, when the engine runs on this host.
    pub disk: Option<super::disk::DiskSpace>,
}

/// How long a probe of an outside system (the engine, the Slurm cluster) may take.
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(3);

/// A container the engine created from a spec.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Created {
    pub id: String,
    pub name: String,
}

/// One session network: its Docker name and the Linux bridge behind it (the firewall
/// rules name the bridge).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionNetwork {
    pub name: String,
    pub bridge: String,
    pub internet: bool,
}

impl SessionNetwork {
    /// `slicehub-INSTANCE-online` (bridge `sh-XXXXXXXXXX-i`) or `…-offline` (`…-x`).
    /// Interface names hold 15 characters, so the bridge takes 10 of the instance id.
    pub fn of(instance: &str, internet: bool) -> SessionNetwork {
        let tail: String = instance.trim_start_matches("i-").chars().take(10).collect();
        let (word, letter) = if internet { ("online", 'i') } else { ("offline", 'x') };
        SessionNetwork {
            name: format!("slicehub-{instance}-{word}"),
            bridge: format!("sh-{tail}-{letter}"),
            internet,
        }
    }
}

/// The engine's host, as far as launching containers is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EngineHost {
    /// A container's CPU limit cannot exceed it.
    pub cpus: Option<u32>,
    pub nvidia_runtime: bool,
}

/// A container as the engine reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContainerStatus {
    /// The engine's id of the container (what its processes' cgroups name).
    pub id: String,
    pub running: bool,
    pub exit_code: Option<i64>,
    /// The kernel killed it for using more memory than its limit.
    pub oom_killed: bool,
    /// When it stopped (epoch ms), if it has.
    pub finished_at_ms: Option<i64>,
}

/// A container carrying SliceHub's label.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManagedContainer {
    pub name: String,
    /// The session label, if the container has one.
    pub session_id: Option<String>,
    pub running: bool,
    /// A daemon the portal keeps for a GPU (MPS), owned by no session.
    pub daemon: bool,
}

/// A labelled container that stopped running.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContainerDeath {
    pub name: String,
    pub session_id: Option<String>,
    pub exit_code: Option<i64>,
}

/// One reading; CPU use is the difference between two of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContainerUsage {
    /// CPU time the container used since it started, nanoseconds.
    pub cpu_ns: u64,
    /// The host's CPU time (all CPUs) since boot, nanoseconds.
    pub system_ns: u64,
    pub online_cpus: u32,
    pub memory_bytes: Option<u64>,
}

impl ContainerUsage {
    /// Percent of one CPU core used between `earlier` and this reading.
    pub fn cpu_percent_since(&self, earlier: &ContainerUsage) -> Option<f64> {
        let used = self.cpu_ns.checked_sub(earlier.cpu_ns)? as f64;
        let elapsed = self.system_ns.checked_sub(earlier.system_ns)? as f64;
        (elapsed > 0.0).then(|| used / elapsed * f64::from(self.online_cpus.max(1)) * 100.0)
    }
}

#[cfg(test)]
mod tests {
    use super::SessionNetwork;

    #[test]
    fn names_fit_linux_interface_names_and_name_the_instance() {
        let online = SessionNetwork::of("i-abcdefghjkmn", true);
        assert_eq!(online.name, "slicehub-i-abcdefghjkmn-online");
        assert_eq!(online.bridge, "sh-abcdefghjk-i");
        let offline = SessionNetwork::of("i-abcdefghjkmn", false);
        assert_eq!(offline.bridge, "sh-abcdefghjk-x");
        assert!(online.bridge.len() <= 15 && offline.bridge.len() <= 15);
    }
}
