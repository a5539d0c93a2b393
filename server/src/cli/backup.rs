//! `slicehub backup DIR` and `slicehub restore DIR`: the database (and the configuration
//! file) copied while the portal runs, and put back into an empty database.
//!
//! PostgreSQL is copied by its own tools (`pg_dump -Fc`, `pg_restore`), which every
//! PostgreSQL client installation has and which no crate replaces; SQLite by `VACUUM INTO`.
//! Neither command creates or migrates the database it copies from.

use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
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
    let url = config.effective_database_url();
    let source = existing_database(&url).await?;
    // Made here, not found: a directory someone else prepared is not written into.
    let made = std::fs::DirBuilder::new().mode(0o700).create(dir);
    if let Err(e) = made {
        source.close().await;
        return Err(match e.kind() {
            std::io::ErrorKind::AlreadyExists => refused(format!("{} exists already: give a new directory for the backup", dir.display())),
            _ => CliError::Io(format!("cannot create {}: {e}", dir.display())),
        });
    }
    let copied = match source.is_sqlite() {
        true => {
            let file = dir.join(SQLITE_FILE);
            source.copy_sqlite_into(&file).await.map(|()| file).map_err(CliError::from)
        }
        false => pg_dump(&url, &dir.join(POSTGRES_FILE)),
    };
    source.close().await;
    let file = match copied {
        Ok(file) => file,
        Err(e) => {
            let _ = std::fs::remove_dir_all(dir);
            return Err(e);
        }
    };
    private(&file)?;
    if let Some(config_file) = config_file {
        let text = std::fs::read(config_file).map_err(|e| CliError::Io(format!("cannot read {}: {e}", config_file.display())))?;
        write_private(&dir.join(CONFIG_FILE), &text)?;
    }
    println!("backed up the database {} to {}", redact_url(&url), file.display());
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
        return Err(refused(format!(
            "the database {} is not empty: restore only into a new data directory or a new PostgreSQL database",
            redact_url(&url)
        )));
    }
    if sqlite_target {
        sqlite_file_is_sound(&copy).await?;
        let file = sqlite_path(&url).ok_or_else(|| refused("database.url names no SQLite file to restore into".to_string()))?;
        // Only what the emptiness check's own connection just made (an empty file).
        for made in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{made}", file.display()));
        }
        let bytes = std::fs::read(&copy).map_err(|e| CliError::Io(format!("cannot read {}: {e}", copy.display())))?;
        write_private(&file, &bytes)?;
    } else {
        pg_restore(&url, &copy)?;
    }
    // A backup of an earlier version is brought up to this one's migrations.
    open_store(config).await?.close().await;
    println!(
        "restored {} into {}; at its next start the portal takes up the sessions whose containers still run on its engine and ends the others",
        copy.display(),
        redact_url(&url)
    );
    Ok(())
}

/// The database to back up, as it is: refused when it does not exist or has no tables (a
/// backup run with another configuration than the portal's would otherwise copy a new,
/// empty database and call it done).
async fn existing_database(url: &str) -> Result<Store, CliError> {
    if let Some(file) = sqlite_path(url) {
        if !file.is_file() {
            return Err(refused(format!(
                "there is no database at {}: run the backup with the portal's configuration (--config, SLICEHUB_DATA_DIR, SLICEHUB_DATABASE_URL)",
                file.display()
            )));
        }
    }
    let store = Store::connect(url, 1).await?;
    match store.has_no_tables().await {
        Ok(false) => Ok(store),
        Ok(true) => {
            store.close().await;
            Err(refused(format!("the database {} has no tables: nothing to back up", redact_url(url))))
        }
        Err(e) => {
            store.close().await;
            Err(e.into())
        }
    }
}

fn pg_dump(url: &str, file: &Path) -> Result<PathBuf, CliError> {
    write_private(file, b"")?;
    let target = path_str(file)?;
    pg_tool("pg_dump", &["--format=custom", "--no-owner", "--no-privileges", "--file", target], url)?;
    pg_tool("pg_restore", &["--list", target], "")?;
    Ok(file.to_path_buf())
}

/// All or nothing: a restore that fails half-way leaves the database empty, so it can be
/// run again.
fn pg_restore(url: &str, file: &Path) -> Result<(), CliError> {
    let args = ["--no-owner", "--no-privileges", "--exit-on-error", "--single-transaction", path_str(file)?];
    pg_tool("pg_restore", &args, url).map(|_| ())
}

/// Runs one of PostgreSQL's tools against `url` (none: no connection). The password goes in
/// `PGPASSWORD`, not on the command line where other users of the machine could read it.
fn pg_tool(tool: &str, args: &[&str], url: &str) -> Result<String, CliError> {
    let mut command = Command::new(tool);
    command.args(args);
    if !url.is_empty() {
        let (without_password, password) = split_password(url)?;
        command.arg("--dbname").arg(without_password);
        if let Some(password) = password {
            command.env("PGPASSWORD", password);
        }
    }
    let out = command.output().map_err(|e| {
        CliError::Io(format!("{tool} cannot be run ({e}): install PostgreSQL's client tools (Debian: postgresql-client)"))
    })?;
    if !out.status.success() {
        let said = String::from_utf8_lossy(&out.stderr);
        let said = said.lines().take(5).collect::<Vec<_>>().join("; ");
        return Err(CliError::Io(format!("{tool} failed: {said}")));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// `postgres://user:secret@host/db` (or `…/db?password=secret`) → (`postgres://user@host/db`,
/// `secret`).
fn split_password(url: &str) -> Result<(String, Option<String>), CliError> {
    let not_a_url = || refused(format!("database.url {} is not a URL", redact_url(url)));
    let mut parsed = url::Url::parse(url).map_err(|_| not_a_url())?;
    let mut password = parsed
        .password()
        .map(|p| percent_encoding::percent_decode_str(p).decode_utf8_lossy().into_owned());
    parsed.set_password(None).map_err(|()| not_a_url())?;
    let (given, kept): (Vec<(String, String)>, Vec<(String, String)>) =
        parsed.query_pairs().into_owned().partition(|(k, _)| k == "password");
    if let Some((_, p)) = given.into_iter().last() {
        password = Some(p);
    }
    if kept.is_empty() {
        parsed.set_query(None);
    } else {
        parsed.query_pairs_mut().clear().extend_pairs(kept);
    }
    Ok((parsed.to_string(), password))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_password_leaves_the_url_decoded() {
        let (url, password) = split_password("postgres://slicehub:p%40ss%3Aword@db.example:5432/portal").unwrap();
        assert_eq!(url, "postgres://slicehub@db.example:5432/portal");
        assert_eq!(password.as_deref(), Some("p@ss:word"));
        let (url, password) = split_password("postgres://slicehub@db.example/portal").unwrap();
        assert_eq!((url.as_str(), password), ("postgres://slicehub@db.example/portal", None));
        let (url, password) = split_password("postgres://slicehub@db.example/portal?sslmode=require&password=s%26cret").unwrap();
        assert_eq!(url, "postgres://slicehub@db.example/portal?sslmode=require");
        assert_eq!(password.as_deref(), Some("s&cret"));
    }
}
