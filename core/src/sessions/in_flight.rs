//! Which sessions this process is working on (launching or stopping), so the repair pass
//! of the reconciler does not take over work that is merely slow. A count per session:
//! a second worker that gives up (a second Stop that lost the race) leaves the first
//! one's mark in place.

use std::sync::Arc;

use super::context::{Ctx, InFlightMarks};

/// Marks a session as in flight until dropped.
pub(super) struct InFlight {
    marks: Arc<InFlightMarks>,
    id: String,
}

impl Ctx {
    pub(super) fn mark_in_flight(&self, id: &str) -> InFlight {
        *self.in_flight.lock().unwrap_or_else(|e| e.into_inner()).entry(id.to_string()).or_default() += 1;
        InFlight {
            marks: self.in_flight.clone(),
            id: id.to_string(),
        }
    }

    pub(super) fn is_in_flight(&self, id: &str) -> bool {
        self.in_flight.lock().unwrap_or_else(|e| e.into_inner()).contains_key(id)
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let mut marks = self.marks.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(count) = marks.get_mut(&self.id) {
            *count -= 1;
            if *count == 0 {
                marks.remove(&self.id);
            }
        }
    }
}
