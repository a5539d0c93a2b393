//! `slicehub backup DIR` and `slicehub restore DIR`: the database (and the configuration
//! file) copied while the portal runs, and put back into an empty database.
//!
//! PostgreSQL is copied by its own tools (`pg_dump -Fc`, `pg_restore`), which every
//! PostgreSQL client installation has and which no crate replaces; SQLite by `VACUUM INTO`.

use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;
use std::process::Command;

use slicehub_core::config::Config;
use slicehub_core::store::{redact_url, sqlite_file_is_sound, sqlite_path, Store};
use slicehub_core::CoreError;

use crate::error::CliError;
use crate::startup::open_store;

const SQLITE_FILE: &str = "slicehub.db";
const POSTGRES_FILE: &str = "slicehub.pgdump";
const CONFIG_FILE: &str = "slicehub.toml";

pub async fn backup(config: &Config, dir: &Path, config_file: Option<&Path>) -> Result<(), CliError> {
    if dir.exists() {
        return Err(refused(format!("{} exists already: give a new directory for the backup", dir.display())));
    }
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| CliError::Io(format!("cannot create {}: {e}", dir.display())))?;
    let store = open_store(config).await?;
    let copied = if store.is_sqlite() {
        let file = dir.join(SQLITE_FILE);
        let copied = store.copy_sqlite_into(&file).await;
        if copied.is_ok() {
            private(&file)?;
        }
        copied.map(|()| file).map_err(CliError::from)
    } else {
        pg_dump(&config.effective_database_url(), &dir.join(POSTGRES_FILE))
    };
    store.close().await;
    let file = copied?;
    if let Some(source) = config_file {
        let text = std::fs::read(source).map_err(|e| CliError::Io(format!("cannot read {}: {e}", source.display())))?;
        write_private(&dir.join(CONFIG_FILE), &text)?;
    }
    println!("backed up the database to {}", file.display());
    Ok(())
}

pub async fn restore(config: &Config, dir: &Path) -> Result<(), CliError> {
    let url = config.effective_database_url();
    let sqlite_target = url.starts_with("sqlite:");
    let (sqlite_copy, postgres_copy) = (dir.join(SQLITE_FILE), dir.join(POSTGRES_FILE));
    let copy = match (sqlite_copy.is_file(), postgres_copy.is_file()) {
        (true, _) if sqlite_target => sqlite_copy,
        (_, true) if !sqlite_target => postgres_copy,
        (false, false) => return Err(refused(format!("{} holds no backup ({SQLITE_FILE} or {POSTGRES_FILE})", dir.display()))),
        _ => {
            return Err(refused(format!(
                "{} is a backup of the other kind of database than database.url names; restore it into the same kind",
                dir.display()
            )))
        }
    };
    let target = Store::connect(&url, 1).await?;
    let empty = target.has_no_tables().await;
    target.close().await;
    if !empty? {
        return Err(refused(
            "the database is not empty: restore only into a new data directory or a new PostgreSQL database".to_string(),
        ));
    }
    if sqlite_target {
        sqlite_file_is_sound(&copy).await?;
        let file = sqlite_path(&url).ok_or_else(|| refused("database.url names no SQLite file to restore into".to_string()))?;
        for leftover in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{leftover}", file.display()));
        }
        let bytes = std::fs::read(&copy).map_err(|e| CliError::Io(format!("cannot read {}: {e}", copy.display())))?;
        write_private(&file, &bytes)?;
    } else {
        pg_restore(&url, &copy)?;
    }
    // A backup of an earlier version is brought up to this one's migrations.
    open_store(config).await?.close().await;
    println!(
        "restored {}; at its next start the portal takes up the sessions whose containers still run on this engine and ends the others",
        copy.display()
    );
    Ok(())
}

fn pg_dump(url: &str, file: &Path) -> Result<std::path::PathBuf, CliError> {
    write_private(file, b"")?;
    run("pg_dump", &["--format=custom", "--no-owner", "--no-privileges", "--file", path_str(file)?, "--dbname", url], url)?;
    run("pg_restore", &["--list", path_str(file)?], url)?;
    Ok(file.to_path_buf())
}

fn pg_restore(url: &str, file: &Path) -> Result<(), CliError> {
    run("pg_restore", &["--no-owner", "--no-privileges", "--exit-on-error", "--dbname", url, path_str(file)?], url).map(|_| ())
}

/// Runs one of PostgreSQL's tools; its complaint, with the database URL's password hidden,
/// when it fails.
fn run(tool: &str, args: &[&str], url: &str) -> Result<String, CliError> {
    let out = Command::new(tool).args(args).output().map_err(|e| {
        CliError::Io(format!("{tool} cannot be run ({e}): install PostgreSQL's client tools (Debian: postgresql-client)"))
    })?;
    if !out.status.success() {
        let said = String::from_utf8_lossy(&out.stderr).replace(url, &redact_url(url));
        let said = said.lines().take(5).collect::<Vec<_>>().join("; ");
        return Err(CliError::Io(format!("{tool} failed: {said}")));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

fn path_str(path: &Path) -> Result<&str, CliError> {
    path.to_str().ok_or_else(|| refused(format!("{} is not a UTF-8 path", path.display())))
}

fn write_private(file: &Path, bytes: &[u8]) -> Result<(), CliError> {
    let mut out = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(file)
        .map_err(|e| CliError::Io(format!("cannot write {}: {e}", file.display())))?;
    out.write_all(bytes).map_err(|e| CliError::Io(format!("cannot write {}: {e}", file.display())))?;
    private(file)
}

fn private(file: &Path) -> Result<(), CliError> {
    std::fs::set_permissions(file, std::fs::Permissions::from_mode(0o600))
        .map_err(|e| CliError::Io(format!("cannot make {} private: {e}", file.display())))
}

fn refused(words: String) -> CliError {
    CliError::Core(CoreError::InvalidRequest(words))
}
