//! The Slurm boundary: a cluster partition reached through `slurmrestd`. Sessions of the
//! courses configured for Slurm become Slurm jobs; Slurm places them on nodes and their
//! GPU GRES (MIG-typed or whole GPUs) or shards. Here: the port (`SlurmCluster`) and what
//! needs no network (job scripts, GRES words and the profiles they are offered as, the
//! users file, the notebook's listener secret); the client is the `slicehub-slurm` crate.

mod cluster;
mod gres;
mod gres_choice;
mod gres_profiles;
mod job;
mod notebook_secret;
mod users;

pub use cluster::{SlurmCluster, SlurmJob, SlurmNode};
pub use gres::{is_plain_type, parse_gres_items, GresCount, GresItem, GresName, GresRequest};
pub use gres_choice::gres_for;
pub use gres_profiles::{gpu_type_profile, is_mig_type, log_skipped, node_gres, NodeGres};
pub use job::{never_starts, pending_words, JobPhase, JobRequest, JobWork};
pub use notebook_secret::{listener_proof, notebook_port, notebook_ports, NOTEBOOK_PORTS_TRIED};
pub use users::{refusal, ClusterUsers};
