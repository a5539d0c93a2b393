//! An ended session whose slice is still held (its stop was cut off, or its container could
//! not be removed then) gives the slice back once its container is gone.

use crate::sessions::service::Sessions;
use crate::CoreError;

/// Releases them; how many slices were released.
pub(super) async fn pass(sessions: &Sessions) -> Result<usize, CoreError> {
    let mut released = 0;
    for session in sessions.ctx.store.unreleased_final_sessions().await? {
        if let Some(name) = &session.container {
            if let Err(e) = sessions.ctx.engine.remove(name).await {
                tracing::warn!(session = %session.id, error = %e, "container not removed yet; its slice stays held");
                continue;
            }
        }
        match sessions.ctx.release(&session).await {
            Ok(()) => released += 1,
            Err(e) => tracing::warn!(session = %session.id, error = %e, "slice not released yet"),
        }
    }
    Ok(released)
}
