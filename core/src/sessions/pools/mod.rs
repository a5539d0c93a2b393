//! Where a session runs: on this host's GPUs in a container the portal starts
//! ([`LocalPool`]), or as a job of a Slurm cluster ([`SlurmPool`]). Each pool answers
//! what the claim and the reconciler's rules ask of it (profiles, a course's share, taking
//! a claim on, who follows its sessions, which sizes wait), so those rules do not branch
//! on the pool. Still outside: the local queue's own position (`model::queue_position`)
//! and share count (`course_share.rs`), and the Slurm pool's recovery and watcher.

mod local;
mod slurm;

use std::collections::HashSet;

use async_trait::async_trait;

use super::model::SessionPool;
use super::service::Sessions;
use crate::config::Config;
use crate::CoreError;
use crate::CourseId;

pub(in crate::sessions) use local::LocalPool;
pub(in crate::sessions) use slurm::SlurmPool;

/// A place sessions run.
#[async_trait]
pub(in crate::sessions) trait SlicePool: Send + Sync {
    /// Refuses a profile this pool does not offer, naming those it does.
    async fn require_profile(&self, sessions: &Sessions, profile: &str) -> Result<(), CoreError>;

    /// Checks the course's share of this pool's slices for a claim of `profile`; the
    /// guard, when there is one, is held until the claim is written.
    async fn hold_course_share<'a>(
        &self,
        sessions: &'a Sessions,
        course_id: CourseId,
        course_code: &str,
        profile: &str,
    ) -> Result<Option<tokio::sync::MutexGuard<'a, ()>>, CoreError>;

    /// Takes a written claim on: places it on a slice (or it waits), or hands it to the
    /// cluster.
    async fn take_claim(&self, sessions: &Sessions, id: &str, limit_minutes: i64) -> Result<(), CoreError>;

    /// The profiles claims wait for in this pool now (idle sessions of those sizes are
    /// stopped early).
    async fn waiting_profiles(&self, sessions: &Sessions) -> Result<HashSet<String>, CoreError>;

    /// Whether the pool's sessions run in containers of this host, so that the
    /// reconciler's container rules follow them (a launch cut off, a container gone);
    /// otherwise the pool's own watcher does.
    fn runs_here(&self) -> bool;

    /// Whether the pool can read how busy a running job's slice is at all (a job without
    /// that signal is never judged idle; on this host a MIG slice without GPM has none
    /// either, which the idle rule checks per session).
    fn reports_job_activity(&self) -> bool;
}

/// The pool a session of this kind runs in.
pub(in crate::sessions) fn pool(which: SessionPool) -> &'static dyn SlicePool {
    match which {
        SessionPool::Local => &LocalPool,
        SessionPool::Slurm => &SlurmPool,
    }
}

/// Every pool.
pub(in crate::sessions) const POOLS: [SessionPool; 2] = [SessionPool::Local, SessionPool::Slurm];

/// Where a course's claims go: the cluster when `slurm.url` is set and `slurm.courses`
/// names the course (or `*`), else this host.
pub(in crate::sessions) fn pool_for_course(config: &Config, course_code: &str) -> SessionPool {
    if config.runs_on_slurm(course_code) {
        SessionPool::Slurm
    } else {
        SessionPool::Local
    }
}
