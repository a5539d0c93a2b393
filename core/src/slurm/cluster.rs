//! The port to a Slurm cluster: what the sessions ask of it, and what it answers. The
//! slurmrestd client that implements it is the `slicehub-slurm` crate.

use serde::Serialize;

use super::gres::GresCount;
use super::job::{JobPhase, JobRequest};
use crate::CoreError;

/// A Slurm cluster as the portal uses it: jobs submitted and cancelled as their student,
/// read as the portal.
#[async_trait::async_trait]
pub trait SlurmCluster: Send + Sync {
    /// Whether each student's jobs run as their own user.
    fn per_student(&self) -> bool;
    /// The portal names the administrator's file links to cluster users.
    fn linked_portal_names(&self) -> Vec<String>;
    /// The cluster account portal user `student`'s jobs run as.
    fn cluster_user(&self, student: &str) -> Result<String, CoreError>;
    async fn ping(&self) -> Result<(), CoreError>;
    /// Submits the job as `student`; its id.
    async fn submit(&self, job: &JobRequest, student: &str) -> Result<u64, CoreError>;
    /// Every job Slurm still knows (finished ones for `MinJobAge`).
    async fn jobs(&self) -> Result<Vec<SlurmJob>, CoreError>;
    /// One job, or `None` when Slurm no longer knows it.
    async fn job(&self, id: u64) -> Result<Option<SlurmJob>, CoreError>;
    /// Cancels a job as its owner; one already over is not an error.
    async fn cancel(&self, id: u64, owner: &str) -> Result<(), CoreError>;
    /// Cancels a job as the portal's own user (`slurm.user`).
    async fn cancel_as_portal(&self, id: u64) -> Result<(), CoreError>;
    /// The compute nodes with their GPU GRES.
    async fn nodes(&self) -> Result<Vec<SlurmNode>, CoreError>;
}

/// One job as Slurm reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlurmJob {
    pub id: u64,
    /// `PENDING`, `RUNNING`, `COMPLETED`, `CANCELLED`, `NODE_FAIL`…
    pub state: String,
    /// Why it waits (`Resources`, `Priority`) or why it ended.
    pub reason: String,
    pub comment: String,
    /// The Slurm account it is charged to (the portal's jobs: the course code, lowercase).
    pub account: String,
    /// The Unix user it runs as.
    pub user: String,
    pub partition: String,
    /// The node it runs on (one node per session).
    pub node: Option<String>,
    /// Expected start while pending (Slurm's backfill estimate), start once running.
    pub start_ms: Option<i64>,
    /// The job's exit code (128 + N when signal N killed it).
    pub exit_code: Option<i64>,
    /// When it ended, once it has (epoch ms).
    pub end_ms: Option<i64>,
    pub priority: u64,
}

impl SlurmJob {
    pub fn phase(&self) -> JobPhase {
        JobPhase::of(&self.state)
    }
}

/// One compute node, its GPU GRES and what is allocated of them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SlurmNode {
    pub name: String,
    /// Where the portal reaches services on the node (`NodeAddr`).
    pub address: String,
    /// `idle`, `mixed`, `allocated`, `down`…
    pub state: String,
    /// `DRAIN`, `NOT_RESPONDING`…
    pub flags: Vec<String>,
    pub reason: String,
    pub partitions: Vec<String>,
    pub gres: Vec<GresCount>,
    pub used: Vec<GresCount>,
    /// The request words of the node's shards that are not offered (`shard:l40s`):
    /// `gres_for` asks for no shard that could land on them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub left_out_shards: Vec<String>,
}

impl SlurmNode {
    /// Down: the jobs that ran there are gone. (A drained node lets them finish.)
    pub fn down(&self) -> bool {
        self.state == "down"
    }

    /// Down, drained or not answering: no new job starts there.
    pub fn unavailable(&self) -> bool {
        self.state == "down"
            || self.flags.iter().any(|f| f == "DRAIN" || f == "NOT_RESPONDING" || f == "FAIL")
    }
}

