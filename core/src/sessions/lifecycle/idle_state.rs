//! What the idle rule keeps between passes.

use std::collections::HashMap;

/// What the idle rule keeps between passes.
pub(in crate::sessions) struct IdleState {
    /// When the proxy last saw each session's student change something.
    pub seen_active: std::sync::Mutex<HashMap<String, i64>>,
    /// Set by this process's first idle pass.
    pub culled_before: std::sync::atomic::AtomicBool,
    /// Reads JupyterLab's kernels and terminals; one connection pool.
    pub jupyter_client: reqwest::Client,
}

impl Default for IdleState {
    fn default() -> Self {
        IdleState {
            seen_active: Default::default(),
            culled_before: Default::default(),
            jupyter_client: crate::sessions::jupyter_activity::container_client(),
        }
    }
}
