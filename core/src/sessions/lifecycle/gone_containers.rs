//! A running local session whose container stopped or vanished without the engine's death
//! event reaching the portal (it was down, the event stream broke) ends here, with the
//! container's exit code when the engine still knows it.

use std::collections::HashSet;

use crate::runtime::ManagedContainer;
use crate::sessions::service::Sessions;
use crate::sessions::model::SessionState;
use crate::sessions::pools::pool;
use crate::CoreError;

/// Ends them, given this portal's containers as the pass read them; how many ended.
pub(super) async fn pass(sessions: &Sessions, containers: &[ManagedContainer]) -> Result<usize, CoreError> {
    let engine = &sessions.ctx.engine;
    let running: HashSet<&str> = containers
        .iter()
        .filter(|c| c.running)
        .filter_map(|c| c.session_id.as_deref())
        .collect();
    let mut ended = 0;
    for session in sessions.ctx.store.gpu_sessions_in(&[SessionState::Ready]).await? {
        if running.contains(session.id.as_str()) || !pool(session.pool).runs_here() {
            continue;
        }
        // Not running in the list read above, but that list may predate the session's own
        // launch: only a container that is not running now (or gone) ends it. A running
        // one reports exit code 0 and would end a job that has just begun.
        let code = match &session.container {
            Some(name) => match engine.status(name).await {
                Ok(Some(status)) if status.running => continue,
                Ok(Some(status)) => status.exit_code,
                Ok(None) => None,
                Err(e) => {
                    tracing::warn!(session = %session.id, error = %e, "reconcile: container state unreadable");
                    continue;
                }
            },
            None => None,
        };
        match sessions.ctx.container_exited(&session.id, code).await {
            Ok(()) => ended += 1,
            Err(e) => tracing::warn!(session = %session.id, error = %e, "reconcile: could not end a session whose container is gone"),
        }
    }
    Ok(ended)
}
