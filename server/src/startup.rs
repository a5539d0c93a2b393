use std::sync::Arc;

use slicehub_core::auth::{ensure_first_admin, Authenticator};
use slicehub_core::config::{self, Config, ConfigSource};
use slicehub_docker::Engine;
use slicehub_core::store::Store;
use slicehub_core::notebook_access::NotebookAccess;
use slicehub_core::sessions::Sessions;
use slicehub_core::Services;

use crate::cli::Cli;
use crate::error::CliError;

/// The configuration, whose GPU weights every command then counts with (the portal, and
/// a CLI command checking a course's largest slice alike).
pub fn load_config(cli: &Cli) -> Result<Config, CliError> {
    let source = ConfigSource {
        file: cli.config.clone(),
    };
    let config = config::load(&source, |name| std::env::var(name).ok())?;
    slicehub_core::quotas::weights::install(&config.gpu.weights);
    Ok(config)
}

/// Connects and migrates the database; a failure here stops the portal.
pub async fn open_store(config: &Config) -> Result<Store, CliError> {
    std::fs::create_dir_all(&config.data_dir).map_err(|e| {
        CliError::Io(format!(
            "cannot create data_dir {}: {e}",
            config.data_dir.display()
        ))
    })?;
    // The database holds live login tokens and notebook tokens: the portal's alone. A
    // directory the portal's user may not change (a shared or root-owned volume) is left
    // as it is, with a warning: the operator owns its modes then.
    if let Err(e) = private(&config.data_dir, 0o700) {
        tracing::warn!("{e}");
    }
    let store = Store::connect(
        &config.effective_database_url(),
        config.database.max_connections,
    )
    .await?;
    store.migrate().await?;
    if let Some(file) = config.effective_database_url().strip_prefix("sqlite:") {
        let file = file.trim_start_matches("//").split('?').next().unwrap_or_default();
        for path in [file.to_string(), format!("{file}-wal"), format!("{file}-shm")] {
            if std::path::Path::new(&path).exists() {
                if let Err(e) = private(std::path::Path::new(&path), 0o600) {
                    tracing::warn!("{e}");
                }
            }
        }
    }
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
    let (gpus, gpu_fallback_reason) = slicehub_gpu::open_backend(&config.gpu, &config.data_dir)?;
    match &gpu_fallback_reason {
        Some(why) if why.nvml_failed => {
            tracing::error!(reason = %why.reason, backend = %gpus.describe(), "the GPUs of this machine cannot be used; no session is placed until NVML works");
        }
        Some(why) => {
            tracing::info!(reason = %why.reason, backend = %gpus.describe(), "no real GPU; using the simulated inventory");
        }
        None => {}
    }
    let engine = Arc::new(Engine::new(config.docker.host.as_deref().unwrap_or_default()));
    let auth = with_directory(Authenticator::from_config(store.clone(), &config), &config)?;
    let config = Arc::new(config);
    let sessions = match slicehub_slurm::connect(&config.slurm) {
        Some(cluster) => Sessions::with_cluster(store.clone(), gpus.clone(), engine.clone(), config.clone(), cluster),
        None => Sessions::new(store.clone(), gpus.clone(), engine.clone(), config.clone()),
    };
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

/// The LDAP directory behind the sign-in form, when `ldap.url` is set. Settings it cannot
/// work with (plain LDAP without `ldap.allow_plain`, an unreadable CA file) stop the
/// portal; whether the directory answers now is `serve`'s start-up check (`sign_in.rs`).
fn with_directory(auth: Authenticator, config: &Config) -> Result<Authenticator, CliError> {
    if config.sign_in.ldap.url.is_none() {
        return Ok(auth);
    }
    let directory = Arc::new(slicehub_sign_in::ldap::LdapDirectory::new(&config.sign_in.ldap)?);
    Ok(auth.with_directory(directory))
}

/// The environment variable that sets the first administrator's password.
pub const ADMIN_PASSWORD_VAR: &str = "SLICEHUB_ADMIN_PASSWORD";

/// On an empty database, creates `admin` and says once how to log in. Only `serve` does
/// this, so the one-time password is shown where the operator then signs in, not by a
/// `check` run before it.
/// Where the first administrator's one-time password is written, in the data directory.
pub const FIRST_ADMIN_FILE: &str = "first-admin-password";

/// Sets `path`'s mode (the data directory 0700, the database and secrets 0600).
fn private(path: &std::path::Path, mode: u32) -> Result<(), CliError> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
        .map_err(|e| CliError::Io(format!("cannot make {} private: {e}", path.display())))
}

/// Writes a secret to a new file created 0600 (never readable by others, not even for a
/// moment).
fn write_private(path: &std::path::Path, text: &str) -> Result<(), CliError> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let _ = std::fs::remove_file(path);
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .map_err(|e| CliError::Io(format!("cannot write {}: {e}", path.display())))?;
    file.write_all(text.as_bytes())
        .map_err(|e| CliError::Io(format!("cannot write {}: {e}", path.display())))
}

pub async fn announce_first_admin(auth: &Authenticator, data_dir: &std::path::Path) -> Result<(), CliError> {
    let from_env = std::env::var(ADMIN_PASSWORD_VAR).ok();
    if let Some(first) = ensure_first_admin(auth.store(), auth.hasher(), from_env).await? {
        if first.generated {
            // Never into the log (log files and journals are read by more people than the
            // admin): a file only the portal's user reads, and the terminal if there is one.
            let file = data_dir.join(FIRST_ADMIN_FILE);
            write_private(&file, &format!("{}\n", first.password))?;
            if std::io::IsTerminal::is_terminal(&std::io::stderr()) {
                eprintln!(
                    "\nSliceHub created the first administrator, {}.\nOne-time password (shown only now): {}\nSign in and choose a new one.\n",
                    first.username, first.password
                );
            }
            tracing::warn!(
                username = %first.username,
                file = %file.display(),
                "created the first administrator; the one-time password is in this file (readable by the portal's user only): sign in with it, choose a new one, then delete the file"
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
