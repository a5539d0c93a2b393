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
    let ldap = ldap_reachable(config).await;
    if json {
        let mut value = serde_json::json!({ "health": report, "gpus": gpus, "readiness": readiness });
        if let Some((ok, summary)) = &ldap {
            value["ldap"] = serde_json::json!({ "ok": ok, "summary": summary });
        }
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
        if let Some((ok, summary)) = &ldap {
            println!("  [{}] ldap:     {summary}", mark(*ok));
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

/// Whether the LDAP directory (`ldap.url`) answers and takes the service account; None
/// without one. Not a failure of `check`: local accounts sign in without it.
async fn ldap_reachable(config: &Config) -> Option<(bool, String)> {
    config.sign_in.ldap.url.as_ref()?;
    // build_services already refused settings the directory cannot be used with.
    let directory = match slicehub_sign_in::ldap::LdapDirectory::new(&config.sign_in.ldap) {
        Ok(directory) => directory,
        Err(e) => return Some((false, e.to_string())),
    };
    Some(match directory.probe().await {
        Ok(what) => (true, format!("reachable: {what}")),
        Err(why) => (false, format!("unreachable: {why} (directory sign-ins fail until it answers; local accounts still sign in)")),
    })
}
