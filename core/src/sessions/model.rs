//! What a GPU session is: its state machine and the row that records it.

use serde::Serialize;

pub use slicehub_types::{SessionKind, SessionPool, SessionState};
use crate::{CourseId, UserId};

/// Where a session's slice is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SlicePlacement {
    pub gpu_uuid: String,
    pub gpu_index: u32,
    pub profile_id: u32,
    pub start: u8,
    /// e.g. `3g.40gb@4`
    pub label: String,
}

/// One session as the database holds it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GpuSession {
    pub id: String,
    pub user_id: UserId,
    pub username: String,
    pub course_id: CourseId,
    pub course_code: String,
    pub kind: SessionKind,
    pub pool: SessionPool,
    /// The Slurm job, once Slurm accepted it (`SessionPool::Slurm`).
    pub slurm_job: Option<i64>,
    /// The Slurm node its job started on.
    pub slurm_node: Option<String>,
    pub profile: String,
    pub image: String,
    /// A job's command; empty for notebooks.
    pub argv: Vec<String>,
    pub state: SessionState,
    /// Why it ended or failed, in words for the student.
    pub reason: String,
    pub placement: Option<SlicePlacement>,
    pub created_instance: bool,
    pub released: bool,
    pub mig_uuid: Option<String>,
    pub container: Option<String>,
    /// `IP:PORT` of JupyterLab on the session network (or the Slurm node), reachable from
    /// the portal host.
    pub notebook_address: Option<String>,
    #[serde(skip)]
    pub token: String,
    pub exit_code: Option<i64>,
    pub log_tail: String,
    pub requested_at_ms: i64,
    pub updated_at_ms: i64,
    pub ready_at_ms: Option<i64>,
    pub ended_at_ms: Option<i64>,
    pub deadline_at_ms: i64,
}

impl GpuSession {
    /// The path the portal serves this session's JupyterLab under.
    pub fn base_url(&self) -> String {
        format!("/user/{}/{}/", self.username, self.id)
    }
}

/// One step of a session, as shown on its page.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SessionEvent {
    pub session_id: String,
    pub user_id: UserId,
    pub at_ms: i64,
    pub state: SessionState,
    pub detail: String,
}

/// Where a queued session of this machine's GPUs stands among the queued claims of its
/// profile (`queued`, oldest request first, the order the queue is served in): 1 is placed
/// next. A Slurm session's place is Slurm's (`Sessions::slurm_waits`).
pub fn queue_position(queued: &[GpuSession], session: &GpuSession) -> Option<usize> {
    if session.state != SessionState::Queued || session.pool != SessionPool::Local {
        return None;
    }
    queued
        .iter()
        .filter(|s| s.profile == session.profile && s.pool == SessionPool::Local)
        .position(|s| s.id == session.id)
        .map(|i| i + 1)
}

/// The longest MIG profile name a claim or booking may give (real ones are like `1g.10gb`).
pub const MAX_PROFILE_CHARS: usize = 64;

/// The longest image reference a claim may give (course policies allow at most 255).
pub const MAX_IMAGE_CHARS: usize = 255;
