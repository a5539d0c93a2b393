//! The slice sampler run against this machine's GPUs through NVML, read only: prints
//! whether each GPU keeps GPM samples, then each GPU's utilization as the sampler reads
//! it, once a second. For recording real hardware (docs/hardware/); no database server
//! or container engine is needed (a SQLite file in a temporary folder, no sessions).
//!
//!     gpu_sampler [SECONDS]      (default 30; NVML from the standard places)

use std::sync::Arc;
use std::time::{Duration, Instant};

use slicehub_core::config::Config;
use slicehub_core::gpu::GpuBackend;
use slicehub_gpu::NvmlBackend;
use slicehub_docker::Engine;
use slicehub_core::sessions::Sessions;
use slicehub_core::store::Store;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let seconds: u64 = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(30);
    let gpus = Arc::new(NvmlBackend::open(None)?);
    println!("backend: {}", gpus.describe());
    for info in gpus.list_gpus()? {
        println!(
            "GPU {} {} {}: MIG {:?}, GPM samples supported: {}",
            info.index,
            info.name,
            info.uuid,
            info.mig_mode,
            gpus.gpm_supported(info.index)
        );
    }
    let dir = tempfile::tempdir()?;
    let store = Store::connect(&format!("sqlite://{}?mode=rwc", dir.path().join("sampler.db").display()), 1).await?;
    store.migrate().await?;
    let backend: Arc<dyn GpuBackend> = gpus;
    let sessions = Sessions::new(store, backend, Arc::new(Engine::new("")), Arc::new(Config::default()));
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(seconds) {
        let pass = Instant::now();
        sessions.sample_slices().await?;
        let took = pass.elapsed();
        let line: Vec<String> = sessions
            .gpu_busy()
            .iter()
            .map(|(gpu, u)| format!("GPU {} busy {:?}% memory {:?}%", gpu.index, u.gpu_percent, u.memory_percent))
            .collect();
        println!("t={:>5.1}s pass {:>6.2} ms  {}", started.elapsed().as_secs_f64(), took.as_secs_f64() * 1000.0, line.join("  "));
        tokio::time::sleep(Duration::from_secs(1).saturating_sub(pass.elapsed())).await;
    }
    Ok(())
}
