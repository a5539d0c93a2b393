//! The Slurm boundary: a cluster partition reached through `slurmrestd`. Sessions of the
//! courses configured for Slurm become Slurm jobs; Slurm places them on nodes and their
//! MIG-typed GPU GRES. Here: the port (`SlurmCluster`) and what needs no network (job
//! scripts, GRES words, the users file, the notebook's listener secret); the client is
//! the `slicehub-slurm` crate.

mod cluster;
mod gres;
mod job;
mod notebook_secret;
mod users;

pub use cluster::{SlurmCluster, SlurmJob, SlurmNode};
pub use gres::{parse_gres, GresCount};
pub use job::{never_starts, pending_words, JobPhase, JobRequest, JobWork};
pub use notebook_secret::{listener_proof, notebook_port, notebook_ports, NOTEBOOK_PORTS_TRIED};
pub use users::{refusal, ClusterUsers};
