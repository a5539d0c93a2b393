//! How many event streams (`/api/v1/sessions/events`, a hub server's progress) one person
//! holds open through the APIs at once: a script that opens them in a loop is refused
//! past [`MOST`], instead of holding the portal's connections and database reads.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::body::Body;
use axum::http::StatusCode;
use axum::response::Response;
use futures_util::StreamExt;
use slicehub_core::UserId;

use super::answer::ApiError;

pub const MOST: usize = 8;

#[derive(Clone, Default)]
pub struct PerPerson(Arc<Mutex<HashMap<UserId, usize>>>);

/// One open stream; the count goes down when the answer's body is dropped.
struct Held {
    all: PerPerson,
    person: UserId,
}

impl Drop for Held {
    fn drop(&mut self) {
        let mut counts = self.all.0.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(n) = counts.get_mut(&self.person) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                counts.remove(&self.person);
            }
        }
    }
}

impl PerPerson {
    fn take(&self, person: UserId) -> Result<Held, ApiError> {
        let mut counts = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let n = counts.entry(person).or_default();
        if *n >= MOST {
            return Err(ApiError::new(
                StatusCode::TOO_MANY_REQUESTS,
                format!("You have {MOST} event streams open already; close one first."),
            ));
        }
        *n += 1;
        Ok(Held { all: self.clone(), person })
    }

    /// `answer` (a stream) counted against `person` for as long as it is open.
    pub fn counted(&self, person: UserId, answer: Response) -> Result<Response, ApiError> {
        let held = self.take(person)?;
        let (parts, body) = answer.into_parts();
        let body = body.into_data_stream().map(move |chunk| {
            let _open = &held;
            chunk
        });
        Ok(Response::from_parts(parts, Body::from_stream(body)))
    }
}
