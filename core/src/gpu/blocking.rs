//! Every GPU call from async code goes through here: run off the async runtime, and given
//! up on after a limit. A call into NVML can hang (a GPU falling off the bus); its thread is
//! left behind, and the caller, and any lock it holds, go on with an error. While such a
//! call of a backend is still stuck, further calls to that backend are refused at once
//! rather than each parking another thread behind the driver's lock.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex};
use std::time::Duration;

use super::GpuBackend;
use crate::CoreError;

/// Per backend (by address): its calls left behind and not yet returned.
static STUCK: LazyLock<Mutex<HashMap<usize, usize>>> = LazyLock::new(Default::default);

/// One call's fate, settled by whichever comes first: its answer or its time limit.
#[derive(Default)]
struct Call {
    answered: bool,
    abandoned: bool,
}

pub async fn on_gpus<T: Send + 'static>(
    gpus: &Arc<dyn GpuBackend>,
    limit: Duration,
    work: impl FnOnce(&dyn GpuBackend) -> Result<T, CoreError> + Send + 'static,
) -> Result<T, CoreError> {
    let key = Arc::as_ptr(gpus) as *const () as usize;
    if stuck().get(&key).is_some_and(|n| *n > 0) {
        return Err(CoreError::Gpu(
            "the GPU driver has not answered an earlier call yet; GPU calls wait until it does".into(),
        ));
    }
    let call = Arc::new(Mutex::new(Call::default()));
    let (gpus, settled) = (gpus.clone(), call.clone());
    let running = tokio::task::spawn_blocking(move || {
        let answer = work(gpus.as_ref());
        let mut call = settled.lock().unwrap_or_else(|e| e.into_inner());
        call.answered = true;
        if call.abandoned {
            if let Some(n) = stuck().get_mut(&key) {
                *n = n.saturating_sub(1);
            }
            tracing::info!("a GPU call left behind has returned");
        }
        answer
    });
    match tokio::time::timeout(limit, running).await {
        Ok(Ok(answer)) => answer,
        Ok(Err(e)) => Err(CoreError::Gpu(format!("GPU call crashed: {e}"))),
        Err(_) => {
            let mut call = call.lock().unwrap_or_else(|e| e.into_inner());
            if !call.answered {
                call.abandoned = true;
                *stuck().entry(key).or_default() += 1;
            }
            tracing::error!(limit_s = limit.as_secs(), "a GPU call did not answer in time; it is left behind");
            Err(CoreError::Gpu(format!("the GPU did not answer within {} s", limit.as_secs())))
        }
    }
}

fn stuck() -> std::sync::MutexGuard<'static, HashMap<usize, usize>> {
    STUCK.lock().unwrap_or_else(|e| e.into_inner())
}
