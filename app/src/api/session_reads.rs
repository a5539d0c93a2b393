//! The sessions page's answers, remembered per person: a page (or a script) asking again
//! and again gets the same answer without a database round trip until one of that
//! person's sessions changes state in this process, or [`FRESH`] passes (queue places,
//! budgets and changes made by another process catch up then).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::views::SessionView;
use crate::views::UserId;

pub const FRESH: Duration = Duration::from_secs(2);

/// user id → (their change count when read, when, the answer).
#[derive(Clone, Default)]
pub struct SessionReads(Arc<Mutex<HashMap<UserId, (u64, Instant, Vec<SessionView>)>>>);

impl SessionReads {
    pub fn get(&self, user_id: UserId, changes: u64) -> Option<Vec<SessionView>> {
        let map = self.0.lock().unwrap_or_else(|p| p.into_inner());
        match map.get(&user_id) {
            Some((seen, at, views)) if *seen == changes && at.elapsed() < FRESH => Some(views.clone()),
            _ => None,
        }
    }

    pub fn put(&self, user_id: UserId, changes: u64, views: &[SessionView]) {
        let mut map = self.0.lock().unwrap_or_else(|p| p.into_inner());
        map.retain(|_, (_, at, _)| at.elapsed() < FRESH);
        map.insert(user_id, (changes, Instant::now(), views.to_vec()));
    }
}
