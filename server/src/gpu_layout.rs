//! `slicehub gpu layout INDEX NAME|dynamic`: an admin's static MIG layout for one GPU.

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
