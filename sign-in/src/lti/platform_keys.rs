//! Platforms' published keys (JWKS), read through a client that follows no redirects, kept
//! for an hour, read again for a key id not seen yet (a platform rotating its keys), at
//! most once every ten seconds.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::JwkSet;
use tokio::sync::Mutex;

use crate::error::SignInError;

const FRESH_FOR: Duration = Duration::from_secs(3600);
const REREAD_AFTER: Duration = Duration::from_secs(10);

/// A platform's key set as last read.
struct Held {
    set: JwkSet,
    read_at: Instant,
    /// When a key id missing from the set last made it read again.
    reread_at: Option<Instant>,
}

#[derive(Default)]
pub struct PlatformKeys {
    held: Mutex<HashMap<String, Held>>,
}

impl PlatformKeys {
    /// The key set at `url` that has `kid` (any set when the token names none).
    pub async fn for_kid(&self, http: &reqwest::Client, url: &str, kid: Option<&str>) -> Result<JwkSet, SignInError> {
        let mut held = self.held.lock().await;
        let has = |set: &JwkSet| kid.is_none_or(|k| set.find(k).is_some());
        let mut reread_at = None;
        if let Some(h) = held.get(url) {
            if h.read_at.elapsed() < FRESH_FOR {
                // A key id not seen makes it read again, unless one did a moment ago (any
                // launch may name any key id).
                if has(&h.set) || h.reread_at.is_some_and(|at| at.elapsed() < REREAD_AFTER) {
                    return Ok(h.set.clone());
                }
                reread_at = Some(Instant::now());
            }
        }
        let set: JwkSet = http
            .get(url)
            .send()
            .await
            .and_then(|r| r.error_for_status())
            .map_err(|e| SignInError::Provider(format!("the platform's keys at {url}: {e}")))?
            .json()
            .await
            .map_err(|e| SignInError::Provider(format!("the platform's keys at {url}: {e}")))?;
        held.insert(url.to_string(), Held { set: set.clone(), read_at: Instant::now(), reread_at });
        Ok(set)
    }
}
