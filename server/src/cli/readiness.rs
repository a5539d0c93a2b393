//! `slicehub check`'s readiness list for a new host: each thing a class needs from this
//! machine, whether it is there, and what to do when it is not.

use serde::Serialize;
use slicehub_core::config::{Config, GpuShares};
use slicehub_core::gpu::{BackendKind, GpuInfo, MigMode, Sharing};
use slicehub_core::health::HealthReport;
use slicehub_core::runtime::disk::DiskSpace;
use slicehub_core::runtime::firewall;

use crate::deployment::{host_of, is_loopback_name};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Ok,
    Warn,
    Fail,
}

#[derive(Debug, Serialize)]
pub struct Finding {
    pub check: &'static str,
    pub level: Level,
    pub summary: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
}

fn ok(check: &'static str, summary: impl Into<String>) -> Finding {
    Finding { check, level: Level::Ok, summary: summary.into(), fix: None }
}

fn not_ok(check: &'static str, level: Level, summary: impl Into<String>, fix: impl Into<String>) -> Finding {
    Finding { check, level, summary: summary.into(), fix: Some(fix.into()) }
}

const DRIVER_VERSION_FILE: &str = "/proc/driver/nvidia/version";

/// `exclusive` says, for the GPUs whose driver tells, whether each is in exclusive-process
/// compute mode.
pub async fn findings(config: &Config, report: &HealthReport, gpus: &[GpuInfo], exclusive: &[(u32, bool)]) -> Vec<Finding> {
    let real_gpus = report.gpu_backend == BackendKind::Nvml;
    let mut all = vec![driver(real_gpus)];
    if real_gpus {
        all.push(if report.gpu.ok {
            ok("nvml", report.gpu.summary.clone())
        } else {
            not_ok(
                "nvml",
                Level::Fail,
                report.gpu.summary.clone(),
                "let the portal's user open /dev/nvidiactl and /dev/nvidia*; after a driver upgrade, reboot",
            )
        });
        all.extend(gpus.iter().map(mig_mode));
        all.push(container_runtime(report));
    }
    all.extend(config.gpu.shares.iter().map(|s| shares(s, gpus, exclusive)));
    all.push(storage_driver(report));
    all.push(firewall_rules(config).await);
    all.push(disk("data disk", &config.data_dir.to_string_lossy()));
    all.push(notebook_domain(config).await);
    all.push(cookies(config));
    all.extend(deployment(config));
    all
}

/// What `serve` refuses or warns about in these settings, before it is started.
fn deployment(config: &Config) -> Vec<Finding> {
    match crate::deployment::check(config) {
        Err(refused) => vec![not_ok("settings", Level::Fail, refused.to_string(), "change the settings named; serve refuses to start")],
        Ok(warnings) => warnings
            .into_iter()
            .map(|w| not_ok("settings", Level::Warn, w, "see the README's section on deploying the notebook domain"))
            .collect(),
    }
}

fn driver(real_gpus: bool) -> Finding {
    match std::fs::read_to_string(DRIVER_VERSION_FILE) {
        Ok(text) => ok("driver", text.lines().next().unwrap_or_default().split_whitespace().collect::<Vec<_>>().join(" ")),
        Err(_) if real_gpus => not_ok("driver", Level::Fail, "no NVIDIA kernel module loaded", "load the driver (modprobe nvidia) or reboot"),
        Err(_) => not_ok(
            "driver",
            Level::Warn,
            "no NVIDIA driver: the GPUs are simulated",
            "on a host with NVIDIA GPUs, install the driver (Debian: nvidia-driver) and reboot",
        ),
    }
}

fn mig_mode(gpu: &GpuInfo) -> Finding {
    let name = format!("GPU {} {}", gpu.index, gpu.name);
    match gpu.mig_mode {
        MigMode::Enabled => ok("mig", format!("{name}: MIG on")),
        MigMode::Disabled => not_ok(
            "mig",
            Level::Warn,
            format!("{name}: MIG off, so it is one slice: a session gets the whole GPU"),
            format!(
                "to share it in MIG slices, with nothing running on it: nvidia-smi -i {} -mig 1, then reset the GPU or reboot",
                gpu.index
            ),
        ),
        MigMode::Unsupported => ok("mig", format!("{name}: no MIG, used whole (a session gets the whole GPU)")),
    }
}

/// Whether a GPU `gpu.shares` names is here and used whole, so it can be split.
fn shares(setting: &GpuShares, gpus: &[GpuInfo], exclusive: &[(u32, bool)]) -> Finding {
    let named = &setting.gpu;
    let Some(gpu) = gpus.iter().find(|g| g.index.to_string() == *named || g.uuid == *named) else {
        return not_ok(
            "shares",
            Level::Warn,
            format!("gpu.shares names GPU {named}, which this machine does not have: nothing is split"),
            "name a GPU by an index or UUID `slicehub gpu inspect` lists",
        );
    };
    let what = format!("GPU {} {}", gpu.index, gpu.name);
    match gpu.mig_mode {
        MigMode::Enabled => not_ok(
            "shares",
            Level::Warn,
            format!("{what} has MIG on, so gpu.shares does not split it (its MIG slices already keep sessions apart)"),
            format!("remove GPU {named} from gpu.shares, or turn MIG off on it to share it whole"),
        ),
        _ if setting.shares.sharing == Sharing::Mps && exclusive.contains(&(gpu.index, false)) => not_ok(
            "shares",
            Level::Warn,
            format!("{what}: {} MPS shares, but the GPU is in the default compute mode, so a student who points CUDA away from the MPS daemon uses it uncapped", setting.shares.count),
            format!("with nothing running on it: nvidia-smi -i {} -c EXCLUSIVE_PROCESS", gpu.index),
        ),
        _ => ok(
            "shares",
            format!("{what}: {} shares ({})", setting.shares.count, setting.shares.sharing.config_word()),
        ),
    }
}

fn container_runtime(report: &HealthReport) -> Finding {
    if !report.engine.reachable {
        return not_ok(
            "container runtime",
            Level::Warn,
            "cannot tell whether the engine has the NVIDIA runtime: the engine is down",
            "start the Docker engine, then run slicehub check again",
        );
    }
    if report.engine.nvidia_runtime {
        return ok("container runtime", "the engine has the NVIDIA runtime");
    }
    not_ok(
        "container runtime",
        Level::Fail,
        "the Docker engine has no NVIDIA runtime: containers would start without their GPU",
        "install nvidia-container-toolkit, run nvidia-ctk runtime configure --runtime=docker, restart Docker",
    )
}

fn storage_driver(report: &HealthReport) -> Finding {
    let engine = &report.engine;
    if !engine.reachable {
        let why = engine.reason.clone().unwrap_or_default();
        return not_ok("docker", Level::Fail, why, "install and start the Docker engine, and let the portal's user use its socket");
    }
    let api = engine.api_version.as_deref().unwrap_or("?");
    let driver = engine.storage_driver.as_deref().unwrap_or("unknown");
    let disk = engine.disk.map(|d| format!(", {}", d.words())).unwrap_or_default();
    let summary = format!("API {api}, storage driver {driver}{disk}");
    let to_overlay2 = "use overlay2 (\"storage-driver\": \"overlay2\" in /etc/docker/daemon.json) on ext4 or xfs";
    match driver {
        "vfs" => not_ok("docker", Level::Warn, format!("{summary}: every container copies its whole image"), to_overlay2),
        "fuse-overlayfs" => not_ok("docker", Level::Warn, format!("{summary}: an overlay in user space, slower to start"), to_overlay2),
        _ if engine.disk.is_some_and(|d| d.low()) => {
            not_ok("docker", Level::Warn, summary, "free space on the engine's disk (docker image prune)")
        }
        _ => ok("docker", summary),
    }
}

async fn firewall_rules(config: &Config) -> Finding {
    if !config.sessions.host_firewall {
        return not_ok(
            "firewall",
            Level::Warn,
            "sessions.host_firewall is off: session containers reach this host and the LAN unless you added the rules",
            "add the rules of README \"Tenant isolation\" yourself, or turn sessions.host_firewall on",
        );
    }
    if !may_change_firewall() {
        return not_ok(
            "firewall",
            Level::Warn,
            "not checked: this command runs without CAP_NET_ADMIN (the packaged service has it)",
            "to check it as the service would: systemd-run --uid=slicehub -p SupplementaryGroups=docker \
             -p AmbientCapabilities=CAP_NET_ADMIN --pipe --wait slicehub --config /etc/slicehub/slicehub.toml check",
        );
    }
    match tokio::task::spawn_blocking(firewall::probe).await {
        Ok(Ok(())) => ok("firewall", "iptables can keep session containers off this host and the LAN"),
        Ok(Err(e)) => not_ok(
            "firewall",
            Level::Fail,
            e.to_string(),
            "run the portal with CAP_NET_ADMIN (the packaged unit has it) on a Docker engine with its iptables rules on",
        ),
        Err(_) => not_ok("firewall", Level::Fail, "the iptables check did not finish", "run slicehub check again"),
    }
}

/// Whether this process holds CAP_NET_ADMIN (capability 12) in its effective set.
fn may_change_firewall() -> bool {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let effective = status.lines().find_map(|l| l.strip_prefix("CapEff:")).map(str::trim).unwrap_or("0");
    u64::from_str_radix(effective, 16).is_ok_and(|caps| caps & (1 << 12) != 0)
}

fn disk(check: &'static str, dir: &str) -> Finding {
    match DiskSpace::of(dir) {
        Some(space) if space.low() => not_ok(check, Level::Warn, format!("{dir}: {}", space.words()), "free space or move data_dir"),
        Some(space) => ok(check, format!("{dir}: {}", space.words())),
        None => not_ok(check, Level::Fail, format!("{dir} cannot be read"), "create data_dir and give it to the portal's user"),
    }
}

async fn notebook_domain(config: &Config) -> Finding {
    let domain = config.server.notebook_domain.as_str();
    if is_loopback_name(domain) {
        return ok("notebook domain", format!("*.{domain}: browsers on this machine resolve it themselves (local use only)"));
    }
    let name = format!("slicehub-check.{domain}");
    let lookup = tokio::net::lookup_host((name.as_str(), 443));
    let resolved = match tokio::time::timeout(std::time::Duration::from_secs(3), lookup).await {
        Ok(Ok(mut addresses)) => addresses.next().is_some(),
        _ => false,
    };
    match resolved {
        true => ok("notebook domain", format!("*.{domain} resolves")),
        false => not_ok(
            "notebook domain",
            Level::Fail,
            format!("{name} does not resolve: no student's notebook would open"),
            format!("add a wildcard DNS record *.{domain} for the portal's reverse proxy, with a certificate for it"),
        ),
    }
}

fn cookies(config: &Config) -> Finding {
    let url = config.public_url();
    if config.server.secure_cookies && url.starts_with("https://") {
        return ok("cookies", format!("{url}: sign-in cookies only over https"));
    }
    let open_bind = config.server.public_url.is_none() && !config.server.bind.ip().is_loopback();
    if is_loopback_name(&host_of(&url)) && !open_bind {
        return ok("cookies", format!("{url}: this machine only"));
    }
    not_ok(
        "cookies",
        Level::Fail,
        format!("{url} (listening on {}): sign-in cookies and notebook tokens would cross the network in the clear", config.server.bind),
        "put TLS in front and set server.public_url = \"https://…\" (cookies then get Secure)",
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use slicehub_core::config::parse_shares;

    fn gpu(index: u32, mig_mode: MigMode) -> GpuInfo {
        GpuInfo {
            index,
            uuid: format!("GPU-{index}"),
            name: "NVIDIA L4".into(),
            memory_mib: 23034,
            mig_mode,
            mig_mode_pending: mig_mode,
        }
    }

    #[test]
    fn shares_of_a_gpu_used_whole_are_fine_others_are_said() {
        let gpus = [gpu(0, MigMode::Enabled), gpu(1, MigMode::Unsupported), gpu(2, MigMode::Disabled)];
        let settings = parse_shares("1 = 4 mps, 0 = 2 mps, GPU-9 = 2 time-sliced-no-isolation, 2 = 2 mps").unwrap();
        let exclusive = [(1, true), (2, false)];
        let found: Vec<Finding> = settings.iter().map(|s| shares(s, &gpus, &exclusive)).collect();
        assert_eq!(found[0].level, Level::Ok);
        assert!(found[0].summary.contains("4 shares (mps)"), "{}", found[0].summary);
        assert_eq!(found[1].level, Level::Warn);
        assert!(found[1].summary.contains("has MIG on"), "{}", found[1].summary);
        assert_eq!(found[2].level, Level::Warn);
        assert!(found[2].summary.contains("does not have"), "{}", found[2].summary);
        assert_eq!(found[3].level, Level::Warn, "MPS caps do not bind in the default compute mode");
        assert!(found[3].fix.as_deref().is_some_and(|f| f.contains("-c EXCLUSIVE_PROCESS")), "{:?}", found[3].fix);
    }
}
