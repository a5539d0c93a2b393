//! Sessions left between states by a failed write or an engine error, with nobody in this
//! process working on them for a while: launches fail (their container and slice are
//! cleaned up), stops are finished. A stop whose container still cannot be removed stays
//! `stopping` and is tried again next pass. (Stops are safe to finish twice: removal and
//! release are idempotent and the database lets one transition win.)

use crate::sessions::service::Sessions;
use crate::sessions::model::SessionState;
use crate::sessions::pools::pool;
use crate::CoreError;

/// How long a session nobody in this process works on may sit between states before the
/// repair pass takes it over.
const STUCK_MS: i64 = 5_000;

/// Repairs them; how many were repaired.
pub(super) async fn pass(sessions: &Sessions, now: i64) -> Result<usize, CoreError> {
    use SessionState::*;
    let mut repaired = 0;
    for session in sessions.ctx.store.gpu_sessions_in(&[Allocating, Creating, Starting, Stopping]).await? {
        if now - session.updated_at_ms < STUCK_MS || sessions.ctx.is_in_flight(&session.id) {
            continue;
        }
        // Launches in a pool that does not run here are its watcher's; only their stops
        // are repaired here.
        if !pool(session.pool).runs_here() && session.state != Stopping {
            continue;
        }
        let _working = sessions.ctx.mark_in_flight(&session.id);
        let outcome = if session.state == Stopping {
            let (to, why) = sessions.intended_end(&session.id, "stopped (finished by the portal's repair pass)").await;
            sessions.ctx.complete_stop(&session.id, to, &why).await
        } else {
            sessions.ctx.fail(&session.id, "the launch stopped midway (the container engine or the database failed); start it again").await
        };
        match outcome {
            Ok(()) => repaired += 1,
            Err(e) => tracing::warn!(session = %session.id, state = session.state.as_str(), error = %e, "repair: not yet"),
        }
    }
    Ok(repaired)
}
