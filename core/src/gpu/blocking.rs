//! Every GPU call from async code goes through here: run off the async runtime, and given
//! up on after a limit. A call into NVML can hang (a GPU falling off the bus); its thread is
//! left behind, and the caller, and any lock it holds, go on with an error.

use std::sync::Arc;
use std::time::Duration;

use super::GpuBackend;
use crate::CoreError;

pub async fn on_gpus<T: Send + 'static>(
    gpus: &Arc<dyn GpuBackend>,
    limit: Duration,
    work: impl FnOnce(&dyn GpuBackend) -> Result<T, CoreError> + Send + 'static,
) -> Result<T, CoreError> {
    let gpus = gpus.clone();
    match tokio::time::timeout(limit, tokio::task::spawn_blocking(move || work(gpus.as_ref()))).await {
        Ok(Ok(answer)) => answer,
        Ok(Err(e)) => Err(CoreError::Gpu(format!("GPU call crashed: {e}"))),
        Err(_) => {
            tracing::error!(limit_s = limit.as_secs(), "a GPU call did not answer in time; it is left behind");
            Err(CoreError::Gpu(format!("the GPU did not answer within {} s", limit.as_secs())))
        }
    }
}
