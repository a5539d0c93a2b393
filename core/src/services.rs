use std::sync::Arc;

use crate::auth::Authenticator;
use crate::config::Config;
use crate::gpu::GpuBackend;
use crate::notebook_access::NotebookAccess;
use crate::runtime::ContainerEngine;
use crate::sessions::Sessions;
use crate::store::Store;
use crate::CoreError;

/// Everything the portal's handlers reach the outside world through. Cheap to clone.
#[derive(Clone)]
pub struct Services {
    pub config: Arc<Config>,
    pub store: Store,
    pub gpus: Arc<dyn GpuBackend>,
    /// Why the configured GPU backend was replaced by the simulated one, if it was.
    pub gpu_fallback_reason: Option<crate::gpu::GpuFallback>,
    pub engine: Arc<dyn ContainerEngine>,
    /// Logins, sessions and password changes; shares one hashing limit per process.
    pub auth: Authenticator,
    /// GPU sessions: claims, launches, stops and the reconciler.
    pub sessions: Sessions,
    /// Launch tickets and notebook grants: the way into a notebook's own origin.
    pub notebooks: NotebookAccess,
}

impl Services {
    /// Runs `work` against the GPU backend off the async runtime (NVML calls block), given
    /// up on after `gpu.call_timeout_seconds`: the session service's one way to the GPUs.
    pub async fn on_gpus<T: Send + 'static>(
        &self,
        work: impl FnOnce(&dyn GpuBackend) -> Result<T, CoreError> + Send + 'static,
    ) -> Result<T, CoreError> {
        self.sessions.on_gpus(work).await
    }
}
