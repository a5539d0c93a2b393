use std::sync::Arc;

use slicehub_core::auth::{ensure_first_admin, Authenticator};
use slicehub_core::config::{self, Config, ConfigSource};
use slicehub_core::gpu;
use slicehub_core::runtime::Engine;
use slicehub_core::store::Store;
use slicehub_core::notebook_access::NotebookAccess;
use slicehub_core::sessions::Sessions;
use slicehub_core::Services;

use crate::cli::Cli;
use crate::error::CliError;

pub fn load_config(cli: &Cli) -> Result<Config, CliError> {
    let source = ConfigSource {
        file: cli.config.clone(),
    };
    Ok(config::load(&source, |name| std::env::var(name).ok())?)
}

/// Connects and migrates the database; a failure here stops the portal.
pub async fn open_store(config: &Config) -> Result<Store, CliError> {
    std::fs::create_dir_all(&config.data_dir).map_err(|e| {
        CliError::Io(format!(
            "cannot create data_dir {}: {e}",
            config.data_dir.display()
        ))
    })?;
    let store = Store::connect(
        &config.effective_database_url(),
        config.database_max_connections,
    )
    .await?;
    store.migrate().await?;
    Ok(store)
}

pub async fn migrate_only(config: &Config) -> Result<(), CliError> {
    let store = open_store(config).await?;
    let version = store
        .schema_version()
        .await?
        .unwrap_or_else(|| "none".into());
    println!(
        "{} at {} is at migration {version}",
        store.kind().label(),
        store.url_redacted()
    );
    store.close().await;
    Ok(())
}

/// Everything the portal needs. The database must work; Docker and NVML may be missing.
pub async fn build_services(config: Config) -> Result<Services, CliError> {
    let store = open_store(&config).await?;
    let (gpus, gpu_fallback_reason) = gpu::open_backend(&config)?;
    match &gpu_fallback_reason {
        Some(why) if why.nvml_failed => {
            tracing::error!(reason = %why.reason, backend = %gpus.describe(), "the GPUs of this machine cannot be used; running on the simulated inventory");
        }
        Some(why) => {
            tracing::info!(reason = %why.reason, backend = %gpus.describe(), "no real GPU; using the simulated inventory");
        }
        None => {}
    }
    let engine = Arc::new(Engine::new(&config.docker_host));
    let auth = Authenticator::from_config(store.clone(), &config);
    let config = Arc::new(config);
    let sessions = Sessions::new(store.clone(), gpus.clone(), engine.clone(), config.clone());
    let notebooks = NotebookAccess::new(store.clone(), config.clone());
    Ok(Services {
        config,
        store,
        gpus,
        gpu_fallback_reason,
        engine,
        auth,
        sessions,
        notebooks,
    })
}

/// The environment variable that sets the first administrator's password.
pub const ADMIN_PASSWORD_VAR: &str = "SLICEHUB_ADMIN_PASSWORD";

/// On an empty database, creates `admin` and says once how to log in. Only `serve` does
/// this, so the one-time password is shown where the operator then signs in, not by a
/// `check` run before it.
pub async fn announce_first_admin(auth: &Authenticator) -> Result<(), CliError> {
    let from_env = std::env::var(ADMIN_PASSWORD_VAR).ok();
    if let Some(first) = ensure_first_admin(auth.store(), auth.hasher(), from_env).await? {
        if first.generated {
            tracing::warn!(
                username = %first.username,
                one_time_password = %first.password,
                "created the first administrator; log in with this one-time password (shown only now) and choose a new one"
            );
        } else {
            tracing::info!(
                username = %first.username,
                "created the first administrator with the password from {ADMIN_PASSWORD_VAR}"
            );
        }
    }
    Ok(())
}
