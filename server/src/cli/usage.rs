//! `slicehub usage rebuild`: the per-day usage totals that reports read, computed again
//! from the ledger (after rows were written or repaired by hand, say).

use std::time::Instant;

use slicehub_core::config::Config;

use crate::cli::UsageCommand;
use crate::error::CliError;
use crate::startup::open_store;

pub async fn run(config: &Config, command: UsageCommand) -> Result<(), CliError> {
    match command {
        UsageCommand::Rebuild => {
            let store = open_store(config).await?;
            let started = Instant::now();
            let rebuilt = store.rebuild_usage_rollups().await;
            store.close().await;
            rebuilt?;
            println!("rebuilt the per-day usage totals from the ledger in {:.1} s", started.elapsed().as_secs_f64());
            Ok(())
        }
    }
}
