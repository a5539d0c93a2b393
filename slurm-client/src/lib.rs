//! SliceHub's Slurm boundary: `slurmrestd` over HTTP, as the portal's user for reads and
//! as each student (a JWT signed with the cluster's key, or the one configured token) for
//! their jobs. It implements `slicehub_core::slurm::SlurmCluster`.

mod client;
mod connect;
mod tokens;

pub use client::SlurmClient;
pub use connect::connect;
pub use tokens::SlurmIdentity;
