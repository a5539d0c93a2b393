//! `slicehub gpu layout INDEX NAME|dynamic`: an admin's static MIG layout for one GPU;
//! `slicehub gpu drain|undrain INDEX`: taking it out of service and back.

use slicehub_core::config::Config;
use slicehub_core::fleet;

use crate::error::CliError;
use crate::startup;

pub async fn run(config: Config, index: u32, layout: &str) -> Result<(), CliError> {
    let services = startup::build_services(config).await?;
    let result = fleet::apply_layout(&services, index, layout).await;
    let outcome = match result {
        Ok(mode) => {
            println!("GPU {index} is now {}", mode.label());
            let snapshot = fleet::snapshot(&services).await?;
            if let Some(gpu) = snapshot.iter().find(|g| g.info.index == index) {
                for placed in &gpu.instances {
                    let i = &placed.instance;
                    println!(
                        "  {}@{} {}",
                        i.profile_name,
                        i.placement.start,
                        i.mig_uuid.as_deref().unwrap_or("(no MIG device)")
                    );
                }
            }
            Ok(())
        }
        Err(e) => Err(e.into()),
    };
    services.store.close().await;
    outcome
}

pub async fn drain(config: Config, index: u32, drained: bool) -> Result<(), CliError> {
    let services = startup::build_services(config).await?;
    // The serving portal's reconciler serves the queue; this process ends at once.
    services.sessions.never_dispatch();
    let outcome = fleet::set_drained(&services, index, drained, "cli").await;
    services.store.close().await;
    let info = outcome?;
    if drained {
        println!("GPU {index} ({}) is drained: no new sessions are placed on it", info.uuid);
    } else {
        println!("GPU {index} ({}) takes new sessions again", info.uuid);
    }
    Ok(())
}
