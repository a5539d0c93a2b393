//! Containers of this portal that no live session owns (a session that ended while the
//! portal was down, a launch recorded nowhere) are removed.

use crate::runtime::ManagedContainer;
use crate::sessions::service::Sessions;
use crate::CoreError;

/// Removes them from `containers` (this portal's, as the pass read them); how many went.
pub(super) async fn pass(sessions: &Sessions, containers: &[ManagedContainer]) -> Result<usize, CoreError> {
    let store = &sessions.ctx.store;
    let engine = &sessions.ctx.engine;
    let mut removed = 0;
    for container in containers.iter().filter(|c| !c.daemon) {
        let owner = match &container.session_id {
            Some(id) => match store.gpu_session(id).await {
                Ok(session) => session,
                Err(e) => {
                    tracing::warn!(container = %container.name, error = %e, "reconcile: session unreadable");
                    continue;
                }
            },
            None => None,
        };
        if owner.is_some_and(|s| !s.state.is_final()) {
            continue;
        }
        match engine.remove(&container.name).await {
            Ok(()) => {
                tracing::info!(container = %container.name, "removed a container no session owns");
                removed += 1;
            }
            Err(e) => tracing::warn!(container = %container.name, error = %e, "reconcile: orphan not removed yet"),
        }
    }
    Ok(removed)
}
