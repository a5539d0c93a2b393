//! Which sessions this process is working on (launching or stopping), so the repair pass
//! of the reconciler does not take over work that is merely slow.

use super::manager::Sessions;

/// Marks a session as in flight until dropped.
pub(super) struct InFlight {
    sessions: Sessions,
    id: String,
}

impl Sessions {
    pub(super) fn mark_in_flight(&self, id: &str) -> InFlight {
        self.inner.in_flight.lock().unwrap_or_else(|e| e.into_inner()).insert(id.to_string());
        InFlight {
            sessions: self.clone(),
            id: id.to_string(),
        }
    }

    pub(super) fn is_in_flight(&self, id: &str) -> bool {
        self.inner.in_flight.lock().unwrap_or_else(|e| e.into_inner()).contains(id)
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.sessions
            .inner
            .in_flight
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&self.id);
    }
}
