//! A `gpu_sessions` row as the database holds it (joined with its user's name and its
//! course's code), decoded column by column by sqlx, and turned into the domain's
//! [`GpuSession`]. States, kinds and pools are words in the table; flags are 0 or 1; a
//! job's command is JSON.

use crate::sessions::{GpuSession, SessionKind, SessionPool, SessionState, SlicePlacement};
use super::flag::Flag;
use crate::CoreError;
use crate::{CourseId, UserId};

#[derive(sqlx::FromRow)]
pub(super) struct GpuSessionRow {
    id: String,
    user_id: UserId,
    username: String,
    course_id: CourseId,
    #[sqlx(rename = "code")]
    course_code: String,
    #[sqlx(try_from = "String")]
    kind: SessionKind,
    #[sqlx(try_from = "String")]
    pool: SessionPool,
    slurm_job: Option<i64>,
    slurm_node: Option<String>,
    profile: String,
    image: String,
    #[sqlx(try_from = "String")]
    argv: Argv,
    #[sqlx(try_from = "String")]
    state: SessionState,
    reason: String,
    gpu_uuid: Option<String>,
    gpu_index: Option<i64>,
    profile_id: Option<i64>,
    start_slice: Option<i64>,
    placement: Option<String>,
    #[sqlx(try_from = "i64")]
    created_instance: Flag,
    #[sqlx(try_from = "i64")]
    released: Flag,
    mig_uuid: Option<String>,
    container: Option<String>,
    notebook_address: Option<String>,
    token: String,
    exit_code: Option<i64>,
    log_tail: String,
    requested_at: i64,
    updated_at: i64,
    ready_at: Option<i64>,
    ended_at: Option<i64>,
    deadline_at: i64,
}

/// A job's command, stored as a JSON list; empty text for a notebook.
struct Argv(Vec<String>);

impl TryFrom<String> for Argv {
    type Error = CoreError;
    fn try_from(text: String) -> Result<Self, CoreError> {
        if text.is_empty() {
            return Ok(Argv(Vec::new()));
        }
        serde_json::from_str(&text)
            .map(Argv)
            .map_err(|e| CoreError::Database(format!("stored command is not JSON: {e}")))
    }
}

impl From<GpuSessionRow> for GpuSession {
    fn from(row: GpuSessionRow) -> GpuSession {
        // A placement is all five columns or none (a claim not yet placed).
        let placement = match (row.gpu_uuid, row.gpu_index, row.profile_id, row.start_slice, row.placement) {
            (Some(gpu_uuid), Some(index), Some(profile_id), Some(start), Some(label)) => Some(SlicePlacement {
                gpu_uuid,
                gpu_index: index as u32,
                profile_id: profile_id as u32,
                start: start as u8,
                label,
            }),
            _ => None,
        };
        GpuSession {
            id: row.id,
            user_id: row.user_id,
            username: row.username,
            course_id: row.course_id,
            course_code: row.course_code,
            kind: row.kind,
            pool: row.pool,
            slurm_job: row.slurm_job,
            slurm_node: row.slurm_node,
            profile: row.profile,
            image: row.image,
            argv: row.argv.0,
            state: row.state,
            reason: row.reason,
            placement,
            created_instance: row.created_instance.0,
            released: row.released.0,
            mig_uuid: row.mig_uuid,
            container: row.container,
            notebook_address: row.notebook_address,
            token: row.token,
            exit_code: row.exit_code,
            log_tail: row.log_tail,
            requested_at_ms: row.requested_at,
            updated_at_ms: row.updated_at,
            ready_at_ms: row.ready_at,
            ended_at_ms: row.ended_at,
            deadline_at_ms: row.deadline_at,
        }
    }
}
