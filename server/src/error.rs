use slicehub_core::config::ConfigError;
use slicehub_core::CoreError;
use thiserror::Error;

/// Why the `slicehub` command stopped. The exit code tells scripts which kind it was.
#[derive(Debug, Error)]
pub enum CliError {
    #[error("{0}")]
    Config(#[from] ConfigError),
    #[error("{0}")]
    Core(#[from] CoreError),
    #[error("{0}")]
    Io(String),
    #[error("check found problems: {0}")]
    CheckFailed(String),
}

impl CliError {
    /// 2 for bad configuration (as for bad command-line usage), 1 for everything else.
    pub fn exit_code(&self) -> u8 {
        match self {
            CliError::Config(_) | CliError::Core(CoreError::Config(_)) => 2,
            _ => 1,
        }
    }
}
