//! Requests a grant was admitted for, remembered for a moment: a notebook makes dozens of
//! requests a second (kernels, contents, WebSocket reconnects), and each would otherwise
//! read its session and its grant from the database. An entry is forgotten as soon as its
//! session changes state (an event of this process) or this process changes anyone's
//! access (an account disabled, say), and in any case after [`FRESH`], which bounds how
//! long a change made by another process (a CLI stop) takes to reach the proxy.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use slicehub_core::auth::token_sha256;
use slicehub_core::sessions::{GpuSession, Sessions};
use tokio::sync::broadcast::error::RecvError;

pub const FRESH: Duration = Duration::from_secs(2);
/// Entries kept at most; older ones go first when it is reached.
const MOST: usize = 4096;

/// (session id, SHA-256 of the grant) → (the store's access changes then, when, the
/// session as it was when the grant admitted).
type Entries = HashMap<(String, String), (u64, Instant, Arc<GpuSession>)>;

#[derive(Clone, Default)]
pub struct Admitted(Arc<Mutex<Entries>>);

impl Admitted {
    /// Starts forgetting sessions as their state changes.
    pub fn following(sessions: &Sessions) -> Admitted {
        let admitted = Admitted::default();
        let mut events = sessions.subscribe();
        let weak = Arc::downgrade(&admitted.0);
        tokio::spawn(async move {
            loop {
                let changed = events.recv().await;
                let Some(map) = weak.upgrade() else { return };
                let mut map = map.lock().unwrap_or_else(|p| p.into_inner());
                match changed {
                    Ok(event) => map.retain(|(id, _), _| *id != event.session_id),
                    Err(RecvError::Lagged(_)) => map.clear(),
                    Err(RecvError::Closed) => return,
                }
            }
        });
        admitted
    }

    /// The session one of `grants` was admitted to within [`FRESH`], with no access
    /// change since (`changes` is the store's count now).
    pub fn get(&self, session_id: &str, grants: &[String], changes: u64) -> Option<Arc<GpuSession>> {
        let map = self.0.lock().unwrap_or_else(|p| p.into_inner());
        grants.iter().find_map(|grant| {
            let key = (session_id.to_string(), token_sha256(grant));
            match map.get(&key) {
                Some((seen, at, session)) if *seen == changes && at.elapsed() < FRESH => Some(session.clone()),
                _ => None,
            }
        })
    }

    /// Only the grant that admitted: another value in the same request (a sibling host
    /// may toss one in) admits nothing.
    pub fn remember(&self, grant: &str, session: &GpuSession, changes: u64) {
        let mut map = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if map.len() >= MOST {
            map.retain(|_, (_, at, _)| at.elapsed() < FRESH);
        }
        if map.len() >= MOST {
            map.clear();
        }
        let key = (session.id.clone(), token_sha256(grant));
        map.insert(key, (changes, Instant::now(), Arc::new(session.clone())));
    }
}
