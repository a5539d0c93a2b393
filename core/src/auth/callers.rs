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

/// SHA-256 of the token → (access changes seen, when resolved, the caller). `T` is what a
/// token resolves to: a login's [`Caller`], or an API token's `TokenCaller`.
#[derive(Clone)]
pub struct RecentCallers<T = Caller>(Arc<Mutex<HashMap<String, (u64, i64, T)>>>);

impl<T> Default for RecentCallers<T> {
    fn default() -> Self {
        RecentCallers(Arc::default())
    }
}

impl<T: Clone> RecentCallers<T> {
    pub fn get(&self, token: &str, changes: u64, now_ms: i64) -> Option<T> {
        let map = self.0.lock().unwrap_or_else(|p| p.into_inner());
        match map.get(&token_sha256(token)) {
            Some((seen, at, caller)) if *seen == changes && (0..FRESH_MS).contains(&(now_ms - at)) => {
                Some(caller.clone())
            }
            _ => None,
        }
    }

    pub fn put(&self, token: &str, changes: u64, now_ms: i64, caller: &T) {
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
