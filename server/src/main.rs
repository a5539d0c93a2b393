//! `slicehub`: the portal's one binary.

mod api_v1;
mod cli;
mod deployment;
mod error;
mod http;
mod hub_api;
mod lms_roster;
mod proxy;
mod serve;
mod sign_in;
mod startup;
mod telemetry;

use clap::Parser;
use slicehub_core::config::Config;

use cli::{Cli, Command, GpuCommand, LmsCommand, SlurmCommand};
use error::CliError;

fn main() -> std::process::ExitCode {
    keep_large_allocations_out_of_the_heap();
    let cli = Cli::parse();
    let ran = match (&cli.url, &cli.token_file) {
        (Some(url), Some(file)) => cli::remote::run(url, file, cli.command.unwrap_or(cli::Command::Serve)),
        _ => run(cli),
    };
    match ran {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("slicehub: {e}");
            std::process::ExitCode::from(e.exit_code())
        }
    }
}

/// Each password hash allocates 19 MiB. glibc raises its mmap threshold after the first
/// such block is freed and then serves the next ones from the heap, where they stay:
/// 300 logins left the portal at 360 MiB. A fixed threshold keeps every large block
/// mapped and returned on free, so memory follows the number of hashes running at once.
fn keep_large_allocations_out_of_the_heap() {
    // SAFETY: mallopt only changes allocator tuning; it is called before any other thread
    // exists, and a refusal (return 0) leaves the default behaviour.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 1 << 20);
    }
}

fn run(cli: Cli) -> Result<(), CliError> {
    let config = startup::load_config(&cli)?;
    telemetry::init(&config, cli.log_json);
    match cli.command.unwrap_or(Command::Serve) {
        // Needs neither the database nor the async runtime.
        Command::Gpu {
            command: GpuCommand::Inspect { json, activity },
        } => cli::gpu_inspect::run(&config, json, activity),
        command => run_async(config, command, config_file(&cli.config)),
    }
}

/// The configuration file this run read, if any (`--config`, or `./slicehub.toml`).
fn config_file(named: &Option<std::path::PathBuf>) -> Option<std::path::PathBuf> {
    named.clone().or_else(|| {
        let default = std::path::PathBuf::from("slicehub.toml");
        default.is_file().then_some(default)
    })
}

fn run_async(config: Config, command: Command, config_file: Option<std::path::PathBuf>) -> Result<(), CliError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::Io(format!("cannot start the async runtime: {e}")))?;
    let done = runtime.block_on(async move {
        match command {
            Command::Serve => serve::run(config).await,
            Command::Migrate => startup::migrate_only(&config).await,
            Command::Check { json } => cli::check::run(&config, json).await,
            Command::Routes => {
                cli::routes::run();
                Ok(())
            }
            Command::User { command } => cli::accounts::user(&config, command).await,
            Command::Course { command } => cli::accounts::course(&config, command).await,
            Command::Session { command } => cli::sessions::run(&config, command).await,
            Command::Usage { command } => cli::usage::run(&config, command).await,
            Command::Token { command } => cli::tokens::run(&config, command).await,
            Command::Backup { dir } => cli::backup::backup(&config, &dir, config_file.as_deref()).await,
            Command::Restore { dir } => cli::backup::restore(&config, &dir).await,
            Command::Slurm {
                command: SlurmCommand::Link { username },
            } => cli::slurm::link(&config, &username).await,
            Command::Lms { command } => match command {
                LmsCommand::Add { name, issuer, client_id, deployments, login_url, token_url, jwks_url } => {
                    let form = slicehub_core::courses::lms_platforms::PlatformForm {
                        name,
                        issuer,
                        client_id,
                        deployment_ids: deployments.join(","),
                        auth_login_url: login_url,
                        auth_token_url: token_url,
                        jwks_url,
                    };
                    cli::lms::add(&config, form).await
                }
                LmsCommand::List { json } => cli::lms::list(&config, json).await,
                LmsCommand::Remove { name } => cli::lms::remove(&config, &name).await,
            },
            Command::Gpu {
                command: GpuCommand::Inspect { json, activity },
            } => cli::gpu_inspect::run(&config, json, activity),
            Command::Gpu {
                command: GpuCommand::Layout { index, layout },
            } => cli::gpu_layout::run(config, index, &layout).await,
            Command::Gpu {
                command: GpuCommand::Drain { index },
            } => cli::gpu_layout::drain(config, index, true).await,
            Command::Gpu {
                command: GpuCommand::Undrain { index },
            } => cli::gpu_layout::drain(config, index, false).await,
        }
    });
    // A GPU or firewall call that hangs holds a blocking thread: the process does not wait
    // for it.
    runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    done
}
