//! Platforms' published keys (JWKS), read through a client that follows no redirects, kept
//! for an hour, read again for a key id not seen yet (a platform rotating its keys), at
//! most once every ten seconds; its body at most 256 KB. Each URL has a lock of its own,
//! so one slow platform holds up no other's launches.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::JwkSet;
use tokio::sync::Mutex;

use crate::error::SignInError;

const FRESH_FOR: Duration = Duration::from_secs(3600);
const REREAD_AFTER: Duration = Duration::from_secs(10);
/// The largest key set read.
const MAX_JWKS_BYTES: usize = 256 * 1024;

/// A platform's key set as last read.
struct Held {
    set: JwkSet,
    read_at: Instant,
    /// When a key id missing from the set last made it read again.
    reread_at: Option<Instant>,
}

/// One lock per key set URL: launches of one platform wait for its read, no other's do.
#[derive(Default)]
pub struct PlatformKeys {
    held: std::sync::Mutex<HashMap<String, Arc<Mutex<Option<Held>>>>>,
}

impl PlatformKeys {
    /// The key set at `url` that has `kid` (any set when the token names none).
    pub async fn for_kid(&self, http: &reqwest::Client, url: &str, kid: Option<&str>) -> Result<JwkSet, SignInError> {
        let slot = self.held.lock().unwrap_or_else(|e| e.into_inner()).entry(url.to_string()).or_default().clone();
        let mut held = slot.lock().await;
        let has = |set: &JwkSet| kid.is_none_or(|k| set.find(k).is_some());
        let mut reread_at = None;
        if let Some(h) = held.as_ref() {
            if h.read_at.elapsed() < FRESH_FOR {
                // A key id not seen makes it read again, unless one did a moment ago (any
                // launch may name any key id).
                if has(&h.set) || h.reread_at.is_some_and(|at| at.elapsed() < REREAD_AFTER) {
                    return Ok(h.set.clone());
                }
                reread_at = Some(Instant::now());
            }
        }
        let problem = |e: &dyn std::fmt::Display| SignInError::Provider(format!("the platform's keys at {url}: {e}"));
        let answer = http.get(url).send().await.and_then(|r| r.error_for_status()).map_err(|e| problem(&e))?;
        let body = super::names_roles::body_bytes(answer, MAX_JWKS_BYTES, "the platform's keys").await?;
        let set: JwkSet = serde_json::from_slice(&body).map_err(|e| problem(&e))?;
        *held = Some(Held { set: set.clone(), read_at: Instant::now(), reread_at });
        Ok(set)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpListener;

    /// A server on a free port answering every request with `body` (None: never answering).
    async fn serve(body: Option<String>) -> String {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/jwks", listener.local_addr().unwrap());
        tokio::spawn(async move {
            let mut held = Vec::new();
            while let Ok((mut socket, _)) = listener.accept().await {
                match &body {
                    Some(body) => {
                        let mut request = [0u8; 4096];
                        let _ = socket.read(&mut request).await;
                        let answer = format!(
                            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                            body.len()
                        );
                        let _ = socket.write_all(answer.as_bytes()).await;
                    }
                    None => held.push(socket),
                }
            }
        });
        url
    }

    #[tokio::test]
    async fn a_slow_platform_holds_up_no_other_and_a_huge_key_set_is_refused() {
        let http = reqwest::Client::builder().timeout(Duration::from_secs(20)).build().unwrap();
        let keys = Arc::new(PlatformKeys::default());
        let (slow, quick) = (serve(None).await, serve(Some(r#"{"keys":[]}"#.to_string())).await);
        let stalled = {
            let (keys, http) = (keys.clone(), http.clone());
            tokio::spawn(async move { keys.for_kid(&http, &slow, None).await.map(|_| ()) })
        };
        tokio::time::sleep(Duration::from_millis(200)).await;
        let read = tokio::time::timeout(Duration::from_secs(5), keys.for_kid(&http, &quick, None)).await;
        assert!(matches!(read, Ok(Ok(ref set)) if set.keys.is_empty()), "another platform's keys while one stalls");
        assert!(!stalled.is_finished());
        stalled.abort();

        let huge = serve(Some(format!(r#"{{"keys":[],"pad":"{}"}}"#, "x".repeat(MAX_JWKS_BYTES)))).await;
        let err = keys.for_kid(&http, &huge, None).await.err().expect("refused");
        assert!(err.to_string().contains("larger than"), "{err}");
    }
}
