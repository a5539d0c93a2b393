//! Who a login session token belonged to a moment ago. A page and its scripts send
//! several requests a second, and resolving each caller costs two database reads. An
//! answer is reused only while no write of this process has changed anyone's access
//! (password, disabled or admin flag, course role, a login session ended) and for at most
//! [`FRESH_MS`]: changes made by another process (the CLI) take effect within that.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use super::guard::Caller;
use super::tokens::token_sha256;

pub const FRESH_MS: i64 = 2_000;
/// Callers kept at most; stale ones go first when it is reached.
const MOST: usize = 8192;

/// SHA-256 of the token → (access changes seen, when resolved, the caller).
#[derive(Clone, Default)]
pub struct RecentCallers(Arc<Mutex<HashMap<String, (u64, i64, Caller)>>>);

impl RecentCallers {
    pub fn get(&self, token: &str, changes: u64, now_ms: i64) -> Option<Caller> {
        let map = self.0.lock().unwrap_or_else(|p| p.into_inner());
        match map.get(&token_sha256(token)) {
            Some((seen, at, caller)) if *seen == changes && (0..FRESH_MS).contains(&(now_ms - at)) => {
                Some(caller.clone())
            }
            _ => None,
        }
    }

    pub fn put(&self, token: &str, changes: u64, now_ms: i64, caller: &Caller) {
        let mut map = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if map.len() >= MOST {
            map.retain(|_, (seen, at, _)| *seen == changes && now_ms - *at < FRESH_MS);
        }
        if map.len() >= MOST {
            map.clear();
        }
        map.insert(token_sha256(token), (changes, now_ms, caller.clone()));
    }
}
