//! SliceHub's domain and the boundaries to the outside systems it drives:
//! the database (`store`), the GPUs (`gpu`) and the container engine (`runtime`).
//! Nothing here knows about HTTP or the UI.

pub use slicehub_types::{CourseId, UserId};

pub mod argv;
pub mod audit_log;
pub mod auth;
pub mod clock;
pub mod config;
pub mod courses;
pub mod csv_export;
pub mod error;
pub mod fleet;
pub mod gpu;
pub mod health;
pub mod metrics;
pub mod notebook_access;
pub mod quotas;
pub mod reports;
pub mod runtime;
pub mod services;
pub mod sessions;
pub mod slurm;
pub mod store;
pub mod tasks;

pub use error::CoreError;
pub use services::Services;
