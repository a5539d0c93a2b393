//! `slicehub lms add|list|remove`: the LMS platforms (LTI 1.3) launches may come from.

use slicehub_core::config::Config;
use slicehub_core::courses::lms_platforms::{register_platform, remove_platform, PlatformForm};

use crate::error::CliError;
use crate::startup::open_store;

pub async fn add(config: &Config, form: PlatformForm) -> Result<(), CliError> {
    let store = open_store(config).await?;
    let added = register_platform(&store, &form, "cli").await;
    store.close().await;
    let platform = added?;
    let base = config.public_url();
    println!("registered {} ({} {})", platform.name, platform.issuer, platform.client_id);
    println!("give the LMS: login URL {base}/lti/login, redirect URL {base}/lti/launch, keys {base}/lti/jwks");
    Ok(())
}

pub async fn list(config: &Config, json: bool) -> Result<(), CliError> {
    let store = open_store(config).await?;
    let platforms = store.lti_platforms().await;
    store.close().await;
    let platforms = platforms?;
    if json {
        println!("{}", serde_json::to_string_pretty(&platforms).map_err(|e| CliError::Io(e.to_string()))?);
    } else {
        for p in platforms {
            println!("{}\t{}\t{}\tdeployments: {}", p.name, p.issuer, p.client_id, p.deployment_ids);
        }
    }
    Ok(())
}

pub async fn remove(config: &Config, name: &str) -> Result<(), CliError> {
    let store = open_store(config).await?;
    let removed = remove_platform(&store, name, "cli").await;
    store.close().await;
    removed?;
    println!("removed {name}");
    Ok(())
}
