//! The Slurm boundary: a cluster partition reached through `slurmrestd` (REST with a JWT
//! the admin configures). Sessions of the courses configured for Slurm become Slurm jobs;
//! Slurm places them on nodes and their MIG-typed GPU GRES.

mod client;
mod gres;
mod job;
mod notebook_secret;
mod tokens;
mod users;

pub use client::{SlurmClient, SlurmJob, SlurmNode};
pub use tokens::SlurmIdentity;
pub use users::ClusterUsers;
pub use gres::{parse_gres, GresCount};
pub use job::{never_starts, pending_words, JobPhase, JobRequest, JobWork};
pub use notebook_secret::{listener_proof, notebook_port, notebook_ports, NOTEBOOK_PORTS_TRIED};
