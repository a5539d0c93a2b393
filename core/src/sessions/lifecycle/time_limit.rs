//! The course's time limit (`max_minutes`): it is written as a deadline at the claim, and
//! counts from the moment the session is ready, so a session that waited in the queue or
//! started slowly keeps its whole limit (while it starts, `sessions.ready_timeout_seconds`
//! bounds it instead). Running sessions past their deadline are stopped, several at once.
//! The queue projects the same deadline for its promised starts (`queue.rs`).

use futures_util::StreamExt;

use crate::sessions::context::Ctx;
use crate::sessions::model::{GpuSession, SessionEvent, SessionState};
use crate::CoreError;

/// Sessions stopped at their time limit at the same time by one pass: a booked lab's
/// thirty sessions share one deadline, and the queue promised their slices free again
/// within a fixed slack.
const STOPS_AT_ONCE: usize = 8;

/// The deadline written at the claim, `limit_minutes` after it.
pub(in crate::sessions) fn deadline_at_claim(requested_at_ms: i64, limit_minutes: i64) -> i64 {
    requested_at_ms + limit_minutes * 60_000
}

/// The session's limit in milliseconds, as the claim wrote it.
pub(in crate::sessions) fn limit_ms(session: &GpuSession) -> i64 {
    session.deadline_at_ms - session.requested_at_ms
}

/// The deadline once the session is ready at `ready_at_ms`: the whole limit from then.
pub(in crate::sessions) fn deadline_once_ready(session: &GpuSession, ready_at_ms: i64) -> i64 {
    ready_at_ms + limit_ms(session)
}

/// Whether the running session is past its deadline at `now`.
fn is_over(session: &GpuSession, now: i64) -> bool {
    session.state == SessionState::Ready && session.deadline_at_ms <= now
}

/// What the student reads as the reason their session ended.
fn reason(session: &GpuSession) -> String {
    let minutes = (session.deadline_at_ms - session.ready_at_ms.unwrap_or(session.requested_at_ms)) / 60_000;
    format!("stopped at the course's time limit ({minutes} min)")
}

impl Ctx {
    /// Moves a starting session to ready, its deadline now counted from this moment.
    pub(in crate::sessions) async fn mark_ready(&self, session: &GpuSession, detail: &str) -> Result<Option<SessionEvent>, CoreError> {
        let now = self.now_ms();
        self.store.mark_ready(&session.id, detail, now, deadline_once_ready(session, now)).await
    }
}

/// Stops every running session past its deadline at `now`; how many were stopped.
pub(super) async fn pass(ctx: &Ctx, now: i64) -> Result<usize, CoreError> {
    let over: Vec<GpuSession> = ctx
        .store
        .gpu_sessions_in(&[SessionState::Ready])
        .await?
        .into_iter()
        .filter(|s| is_over(s, now))
        .collect();
    Ok(futures_util::stream::iter(over)
        .map(|session| async move {
            match ctx.stop(&session.id, &reason(&session)).await {
                Ok(_) => 1,
                Err(e) => {
                    tracing::warn!(session = %session.id, error = %e, "reconcile: could not stop at the time limit");
                    0
                }
            }
        })
        .buffer_unordered(STOPS_AT_ONCE)
        .fold(0, |n, stopped| async move { n + stopped })
        .await)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sessions::model::{SessionKind, SessionPool};

    fn claimed(requested_at_ms: i64, limit_minutes: i64) -> GpuSession {
        GpuSession {
            id: "s".into(),
            user_id: crate::UserId(1),
            username: "ada".into(),
            course_id: crate::CourseId(1),
            course_code: "CS-101".into(),
            kind: SessionKind::Job,
            pool: SessionPool::Local,
            slurm_job: None,
            slurm_node: None,
            profile: "1g.10gb".into(),
            image: "busybox".into(),
            argv: vec!["true".into()],
            state: SessionState::Requested,
            reason: String::new(),
            placement: None,
            created_instance: false,
            released: false,
            mig_uuid: None,
            container: None,
            notebook_address: None,
            token: String::new(),
            exit_code: None,
            log_tail: String::new(),
            requested_at_ms,
            updated_at_ms: requested_at_ms,
            ready_at_ms: None,
            ended_at_ms: None,
            deadline_at_ms: deadline_at_claim(requested_at_ms, limit_minutes),
        }
    }

    #[test]
    fn the_limit_counts_from_ready_not_from_the_claim() {
        let mut session = claimed(1_000_000, 90);
        // Forty minutes in the queue and at start-up.
        let ready_at = 1_000_000 + 40 * 60_000;
        session.deadline_at_ms = deadline_once_ready(&session, ready_at);
        session.ready_at_ms = Some(ready_at);
        session.state = SessionState::Ready;
        assert_eq!(session.deadline_at_ms, ready_at + 90 * 60_000);
        assert!(!is_over(&session, ready_at + 89 * 60_000));
        assert!(is_over(&session, ready_at + 90 * 60_000));
        assert_eq!(reason(&session), "stopped at the course's time limit (90 min)");
    }

    #[test]
    fn only_running_sessions_are_over() {
        let mut session = claimed(0, 1);
        for state in [SessionState::Queued, SessionState::Starting, SessionState::Stopping, SessionState::Ended] {
            session.state = state;
            assert!(!is_over(&session, i64::MAX), "{state:?}");
        }
    }
}
