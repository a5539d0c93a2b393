//! Usage (the slice-hour ledger) left open by a crash between a session's end and the
//! ledger's close is closed at the moment the session ended, with its reason.

use crate::sessions::service::Sessions;
use crate::CoreError;

/// Closes it; how many intervals were closed.
pub(super) async fn pass(sessions: &Sessions) -> Result<usize, CoreError> {
    let store = &sessions.ctx.store;
    let mut closed = 0;
    for (id, ended_at, reason) in store.open_usage_of_final_sessions().await? {
        match store.close_usage(&id, ended_at, &reason).await {
            Ok(true) => closed += 1,
            Ok(false) => {}
            Err(e) => tracing::warn!(session = %id, error = %e, "usage not closed yet"),
        }
    }
    Ok(closed)
}
