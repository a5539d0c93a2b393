use slicehub_core::config::Config;
use slicehub_core::health;

use crate::error::CliError;
use crate::cli::readiness::{self, Level};
use crate::startup;

/// `slicehub check`: what this machine offers the portal, in words or as JSON.
/// Exits non-zero when the database cannot be used; a missing Docker engine or GPU is
/// reported but is not a failure (the portal runs without them).
pub async fn run(config: &Config, json: bool) -> Result<(), CliError> {
    let services = startup::build_services(config.clone()).await?;
    let report = health::check(&services).await;
    let gpus = services.on_gpus(|b| b.list_gpus()).await.unwrap_or_default();
    let indexes: Vec<u32> = gpus.iter().map(|g| g.index).collect();
    let exclusive = services
        .on_gpus(move |b| Ok(indexes.iter().filter_map(|&i| Some((i, b.exclusive_process(i)?))).collect::<Vec<_>>()))
        .await
        .unwrap_or_default();
    let readiness = readiness::findings(config, &report, &gpus, &exclusive).await;
    if json {
        let value = serde_json::json!({ "health": report, "gpus": gpus, "readiness": readiness });
        println!(
            "{}",
            serde_json::to_string_pretty(&value).unwrap_or_default()
        );
    } else {
        let mark = |ok: bool| if ok { "ok  " } else { "DOWN" };
        println!("SliceHub {} — {}", env!("CARGO_PKG_VERSION"), report.status);
        println!(
            "  [{}] database: {}",
            mark(report.database.ok),
            report.database.summary
        );
        println!(
            "  [{}] docker:   {}",
            mark(report.docker.ok),
            report.docker.summary
        );
        println!(
            "  [{}] gpus:     {}",
            mark(report.gpu.ok),
            report.gpu.summary
        );
        if let Some(slurm) = &report.slurm {
            println!("  [{}] slurm:    {}", mark(slurm.ok), slurm.summary);
        }
        for gpu in &gpus {
            println!(
                "         GPU {} {} — {} MiB, MIG {:?}, {}",
                gpu.index, gpu.name, gpu.memory_mib, gpu.mig_mode, gpu.uuid
            );
        }
        println!("Ready for a class?");
        for finding in &readiness {
            let mark = match finding.level {
                Level::Ok => "ok  ",
                Level::Warn => "WARN",
                Level::Fail => "FAIL",
            };
            println!("  [{mark}] {}: {}", finding.check, finding.summary);
            if let Some(fix) = &finding.fix {
                println!("         fix: {fix}");
            }
        }
    }
    services.store.close().await;
    if report.database.ok {
        Ok(())
    } else {
        Err(CliError::CheckFailed(report.database.summary))
    }
}
