//! `slicehub gpu inspect`: the GPUs as the GPU backend sees them, with no database and no
//! Docker. Only reads: it never creates or destroys an instance nor changes a MIG mode.

use serde::Serialize;
use slicehub_core::config::Config;
use slicehub_core::gpu::{
    BackendKind, Catalog, GpuBackend, GpuHealth, GpuInfo, GpuProcess, GpuUtilization, MigInstance,
    MigMode,
};

use crate::error::CliError;

#[derive(Serialize)]
struct Report {
    /// e.g. `NVML, driver 580.65.06` or `simulated: 1 x A100-40GB`.
    backend: String,
    kind: BackendKind,
    /// Why `auto` fell back to the simulated GPUs.
    fallback_reason: Option<String>,
    gpus: Vec<GpuReport>,
}

#[derive(Serialize)]
struct GpuReport {
    #[serde(flatten)]
    info: GpuInfo,
    catalog: Option<Catalog>,
    /// The built-in catalog for this product, if SliceHub has one.
    builtin_catalog: Option<String>,
    /// Whether `catalog` has exactly the built-in catalog's profiles.
    same_as_builtin: Option<bool>,
    instances: Vec<MigInstance>,
    utilization: Option<GpuUtilization>,
    health: Option<GpuHealth>,
    /// With `--activity`: how busy it was over that time.
    activity: Option<Activity>,
    /// What could not be read, one line each; the rest of the report still stands.
    errors: Vec<String>,
}

/// How busy a GPU and its MIG instances were over the `--activity` seconds.
#[derive(Serialize)]
struct Activity {
    seconds: u64,
    /// Whether the GPU keeps GPM samples at all.
    gpm: bool,
    /// The whole GPU's graphics activity in percent (MIG off).
    busy_percent: Option<u32>,
    /// Each MIG instance's, as `profile@start`.
    instances: Vec<(String, Option<u32>)>,
    /// Each process's memory and multiprocessor activity over the time (NVML process
    /// samples), or why they could not be read.
    processes: Result<Vec<GpuProcess>, String>,
}

pub fn run(config: &Config, json: bool, activity: Option<u64>) -> Result<(), CliError> {
    let (backend, fallback_reason) = slicehub_gpu::open_backend(&config.gpu, &config.data_dir)?;
    let mut gpus: Vec<GpuReport> = backend
        .list_gpus()?
        .into_iter()
        .map(|info| inspect(backend.as_ref(), info))
        .collect();
    if let Some(seconds) = activity {
        read_activity(backend.as_ref(), &mut gpus, seconds);
    }
    let report = Report {
        backend: backend.describe(),
        kind: backend.kind(),
        fallback_reason: fallback_reason.map(|f| f.reason),
        gpus,
    };
    if json {
        let text = serde_json::to_string_pretty(&report)
            .map_err(|e| CliError::Io(format!("cannot encode the report: {e}")))?;
        println!("{text}");
    } else {
        print!("{}", render(&report));
    }
    Ok(())
}

fn inspect(backend: &dyn GpuBackend, info: GpuInfo) -> GpuReport {
    let index = info.index;
    let mut errors = Vec::new();
    let mut keep = |what: &str, e: slicehub_core::CoreError| errors.push(format!("{what}: {e}"));
    let catalog = backend.catalog(index).map_err(|e| keep("profiles", e)).ok();
    let instances = backend
        .instances(index)
        .map_err(|e| keep("instances", e))
        .unwrap_or_default();
    let utilization = backend
        .utilization(index)
        .map_err(|e| keep("utilization", e))
        .ok();
    let health = backend.health(index).map_err(|e| keep("health", e)).ok();
    let builtin = match &catalog {
        Some(read) if read.is_whole() => Catalog::whole_for_model(&info.name).ok(),
        _ => Catalog::for_model(&info.name).ok(),
    };
    let same_as_builtin = match (&catalog, builtin) {
        // A GPU split into shares is compared as the built-in split the same way.
        (Some(read), Some(builtin)) => Some(match read.shares() {
            Some(shares) => builtin.shared(shares).is_ok_and(|split| read.profiles() == split.profiles()),
            None => read.profiles() == builtin.profiles(),
        }),
        _ => None,
    };
    GpuReport {
        info,
        catalog,
        builtin_catalog: builtin.map(|c| c.key().to_string()),
        same_as_builtin,
        instances,
        utilization,
        health,
        activity: None,
        errors,
    }
}

/// Seeds every GPU's and instance's GPM sample, waits, and reads the activity between.
fn read_activity(backend: &dyn GpuBackend, gpus: &mut [GpuReport], seconds: u64) {
    let read = |gpu: &GpuReport| {
        let index = gpu.info.index;
        let whole = match gpu.info.mig_mode {
            MigMode::Enabled => None,
            _ => backend.busy_since_last(index, None).ok().flatten(),
        };
        // A GPU used whole has one instance, the GPU itself: its figure is the GPU's.
        let busy = |i| match gpu.info.mig_mode {
            MigMode::Enabled => backend.busy_since_last(index, Some(i)).ok().flatten(),
            _ => whole,
        };
        let instances: Vec<(String, Option<u32>)> = gpu
            .instances
            .iter()
            .map(|i| (format!("{}@{}", i.profile_name, i.placement.start), busy(i)))
            .collect();
        (whole, instances)
    };
    for gpu in gpus.iter() {
        read(gpu);
        let _ = backend.processes(gpu.info.index);
    }
    std::thread::sleep(std::time::Duration::from_secs(seconds));
    for gpu in gpus.iter_mut() {
        let (busy_percent, instances) = read(gpu);
        gpu.activity = Some(Activity {
            seconds,
            gpm: backend.gpm_supported(gpu.info.index),
            busy_percent,
            instances,
            processes: backend.processes(gpu.info.index).map_err(|e| e.to_string()),
        });
    }
}

fn mode(mode: MigMode) -> &'static str {
    match mode {
        MigMode::Enabled => "enabled",
        MigMode::Disabled => "disabled",
        MigMode::Unsupported => "unsupported",
    }
}

fn render(report: &Report) -> String {
    let mut out = format!("GPU backend: {}\n", report.backend);
    if let Some(why) = &report.fallback_reason {
        out.push_str(&format!("  (simulated because {why})\n"));
    }
    for gpu in &report.gpus {
        out.push('\n');
        render_gpu(&mut out, gpu);
    }
    out
}

fn render_gpu(out: &mut String, gpu: &GpuReport) {
    let info = &gpu.info;
    out.push_str(&format!(
        "GPU {}  {}  {}\n",
        info.index, info.name, info.uuid
    ));
    out.push_str(&format!(
        "  memory {} MiB, MIG {} (pending: {})\n",
        info.memory_mib,
        mode(info.mig_mode),
        mode(info.mig_mode_pending)
    ));
    if let Some(catalog) = &gpu.catalog {
        let origin = match (&gpu.builtin_catalog, gpu.same_as_builtin) {
            (Some(key), Some(true)) => format!("same as built-in {key}"),
            (Some(key), _) => format!("DIFFERS from built-in {key}"),
            (None, _) => "no built-in catalog for this product".to_string(),
        };
        out.push_str(&format!("  profiles ({}; {origin}):\n", catalog.key()));
        out.push_str("    name          id  memory  compute  MiB     max  starts\n");
        for p in catalog.profiles() {
            out.push_str(&format!(
                "    {:<12} {:>3}  {}/8     {}/7      {:<6}  {:>3}  {}\n",
                p.name,
                p.id,
                p.memory_slices,
                p.compute_slices,
                p.memory_mib,
                p.max_instances,
                p.starts_text()
            ));
        }
        let first = catalog.profiles().first();
        let sms = first.and_then(|p| p.multiprocessors).map_or("unknown".to_string(), |n| n.to_string());
        match (catalog.shares(), first) {
            (Some(shares), Some(p)) => out.push_str(&format!(
                "  split into {} shares (no MIG), {sms} multiprocessors each: {}\n",
                shares.count,
                catalog.guarantees(p)
            )),
            _ if catalog.is_whole() => out.push_str(&format!("  used whole (no MIG): one slice, {sms} multiprocessors\n")),
            _ => {}
        }
    }
    if gpu.instances.is_empty() {
        out.push_str("  instances: none\n");
    } else {
        out.push_str("  instances:\n");
        for i in &gpu.instances {
            out.push_str(&format!(
                "    {}@{}  GI {}  CI {}  {}  {}\n",
                i.profile_name,
                i.placement.start,
                i.gpu_instance_id,
                i.compute_instance_id
                    .map_or("-".to_string(), |c| c.to_string()),
                i.mig_uuid.as_deref().unwrap_or("(no MIG device)"),
                match (i.memory_used_mib, i.memory_total_mib) {
                    (Some(used), Some(total)) => format!("{used}/{total} MiB used"),
                    _ => String::new(),
                }
            ));
        }
    }
    if let Some(u) = &gpu.utilization {
        let percent = |v: Option<u32>| v.map_or("n/a".to_string(), |v| format!("{v}%"));
        out.push_str(&format!(
            "  utilization: gpu {}, memory {}\n",
            percent(u.gpu_percent),
            percent(u.memory_percent)
        ));
    }
    if let Some(h) = &gpu.health {
        if h.ok {
            out.push_str("  health: ok\n");
        } else {
            out.push_str(&format!("  health: {}\n", h.problems.join("; ")));
        }
    }
    if let Some(a) = &gpu.activity {
        let percent = |v: Option<u32>| v.map_or("not read".to_string(), |v| format!("{v}%"));
        match (a.gpm, gpu.info.mig_mode) {
            (false, _) => out.push_str(&format!(
                "  activity over {} s: no GPM samples on this GPU (with MIG on, jobs are never judged idle)\n",
                a.seconds
            )),
            (true, MigMode::Enabled) => {
                out.push_str(&format!("  activity over {} s (GPM, per instance):\n", a.seconds));
                for (label, busy) in &a.instances {
                    out.push_str(&format!("    {label}  {}\n", percent(*busy)));
                }
            }
            (true, _) => out.push_str(&format!("  activity over {} s (GPM): {}\n", a.seconds, percent(a.busy_percent))),
        }
        match &a.processes {
            Ok(list) if list.is_empty() => out.push_str("  processes: none\n"),
            Ok(list) => {
                out.push_str("  processes (NVML process samples):\n");
                for p in list {
                    let memory = p.memory_mib.map_or("memory n/a".to_string(), |m| format!("{m} MiB"));
                    let busy = p.busy_percent.map_or("ran no kernels".to_string(), |b| format!("{b}% busy"));
                    out.push_str(&format!("    pid {}  {memory}  {busy}\n", p.pid));
                }
            }
            Err(e) => out.push_str(&format!("  processes: could not be read ({e})\n")),
        }
    }
    for e in &gpu.errors {
        out.push_str(&format!("  could not read {e}\n"));
    }
}
