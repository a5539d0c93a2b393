//! Every GPU call from async code goes through here: run off the async runtime, and given
//! up on after a limit. A call into NVML can hang (a GPU falling off the bus); its thread is
//! left behind, and the caller, and any lock it holds, go on with an error. While such a
//! call of a backend is still stuck, further calls to that backend are refused at once, and
//! at no time do more than [`AT_ONCE`] of its calls wait on threads, so a hung driver parks
//! a bounded number of them.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex};
use std::time::Duration;

use super::GpuBackend;
use crate::CoreError;

/// Calls of one backend running at once, at most.
const AT_ONCE: usize = 32;

/// Per backend (by address): calls running, and those of them left behind.
#[derive(Default)]
struct Calls {
    running: usize,
    stuck: usize,
}

static CALLS: LazyLock<Mutex<HashMap<usize, Calls>>> = LazyLock::new(Default::default);

/// One call's fate, settled by whichever comes first: its answer or its time limit.
#[derive(Default)]
struct Call {
    answered: bool,
    abandoned: bool,
}

/// Counts a running call out when its thread ends, whatever way it ends.
struct Running {
    key: usize,
    call: Arc<Mutex<Call>>,
}

impl Drop for Running {
    fn drop(&mut self) {
        let mut call = self.call.lock().unwrap_or_else(|e| e.into_inner());
        call.answered = true;
        let mut all = calls();
        if let Some(c) = all.get_mut(&self.key) {
            c.running = c.running.saturating_sub(1);
            if call.abandoned {
                c.stuck = c.stuck.saturating_sub(1);
                tracing::info!("a GPU call left behind has returned");
            }
        }
    }
}

pub async fn on_gpus<T: Send + 'static>(
    gpus: &Arc<dyn GpuBackend>,
    limit: Duration,
    work: impl FnOnce(&dyn GpuBackend) -> Result<T, CoreError> + Send + 'static,
) -> Result<T, CoreError> {
    let key = Arc::as_ptr(gpus) as *const () as usize;
    {
        let mut all = calls();
        let c = all.entry(key).or_default();
        if c.stuck > 0 {
            return Err(CoreError::Gpu(
                "the GPU driver has not answered an earlier call yet; GPU calls wait until it does".into(),
            ));
        }
        if c.running >= AT_ONCE {
            return Err(CoreError::Gpu("the GPU driver is slow to answer; try again in a moment".into()));
        }
        c.running += 1;
    }
    let call = Arc::new(Mutex::new(Call::default()));
    let running = Running { key, call: call.clone() };
    let gpus = gpus.clone();
    let thread = tokio::task::spawn_blocking(move || {
        let _running = running;
        work(gpus.as_ref())
    });
    match tokio::time::timeout(limit, thread).await {
        Ok(Ok(answer)) => answer,
        Ok(Err(e)) => Err(CoreError::Gpu(format!("GPU call crashed: {e}"))),
        Err(_) => {
            let mut call = call.lock().unwrap_or_else(|e| e.into_inner());
            if !call.answered {
                call.abandoned = true;
                calls().entry(key).or_default().stuck += 1;
            }
            tracing::error!(limit_s = limit.as_secs(), "a GPU call did not answer in time; it is left behind");
            Err(CoreError::Gpu(format!("the GPU did not answer within {} s", limit.as_secs())))
        }
    }
}

fn calls() -> std::sync::MutexGuard<'static, HashMap<usize, Calls>> {
    CALLS.lock().unwrap_or_else(|e| e.into_inner())
}
