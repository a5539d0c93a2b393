use thiserror::Error;

/// The one error type of `slicehub-core`. Each variant's message is written for the
/// person running the portal: it says what failed and, where possible, what to do.
#[derive(Debug, Error)]
pub enum CoreError {
    #[error("configuration: {0}")]
    Config(String),

    #[error("cannot reach the database at {url}: {reason}")]
    DatabaseUnreachable { url: String, reason: String },

    #[error("database migration failed (nothing from the failed migration was kept): {0}")]
    Migration(String),

    #[error("database error: {0}")]
    Database(String),

    #[error("GPU backend: {0}")]
    Gpu(String),

    /// The GPU has no room for the request: the placement overlaps an instance, is not an
    /// allowed start, or compute / instance limits are reached (NVML's
    /// `NVML_ERROR_INSUFFICIENT_RESOURCES`; the simulated backend answers the same).
    #[error("insufficient GPU resources: {0}")]
    InsufficientResources(String),

    #[error("not found: {0}")]
    NotFound(String),

    #[error("not supported: {0}")]
    NotSupported(String),

    #[error("permission denied: {0}")]
    NoPermission(String),

    /// The request names something the target cannot have, e.g. a MIG profile of another model.
    #[error("invalid request: {0}")]
    InvalidRequest(String),

    /// Something with that name already exists (a username, a course code).
    #[error("conflict: {0}")]
    Conflict(String),

    /// Authentication could not be completed: not logged in, a wrong current password,
    /// too many attempts, or the password hasher or random source failed.
    #[error("authentication: {0}")]
    Auth(String),

    /// The simulated GPUs' state file cannot be used; it is never modified in that case.
    #[error("simulated GPU state file {path}: {reason} (the file was left untouched; fix it, or move it aside to start with no MIG instances)")]
    GpuStateFile { path: String, reason: String },

    #[error("container engine: {0}")]
    Engine(String),

    /// The Slurm cluster (slurmrestd) cannot be reached or refused a request.
    #[error("Slurm: {0}")]
    Cluster(String),
}

impl From<sqlx::Error> for CoreError {
    fn from(e: sqlx::Error) -> Self {
        CoreError::Database(e.to_string())
    }
}
