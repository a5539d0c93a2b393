//! The portal's background work as named tasks in one `JoinSet` under one cancellation
//! token: a task that panics is logged, counted and started again after a pause; at
//! shutdown the token is cancelled, each task ends at its next pause, and whatever has not
//! ended within the limit is aborted.

use std::future::Future;
use std::time::Duration;

use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::sessions::supervised;

/// How long a task that panicked waits before it starts again.
const RESTART_AFTER: Duration = Duration::from_secs(1);

#[must_use = "the tasks stop when the set is dropped"]
pub struct TaskSet {
    tasks: JoinSet<()>,
    stop: CancellationToken,
}

impl Default for TaskSet {
    fn default() -> Self {
        TaskSet::new()
    }
}

impl TaskSet {
    pub fn new() -> TaskSet {
        TaskSet {
            tasks: JoinSet::new(),
            stop: CancellationToken::new(),
        }
    }

    /// Runs the task `make` returns until it ends or the set stops; a panic in it is
    /// logged and `make` is called again after a pause.
    pub fn spawn<F, Fut>(&mut self, name: &'static str, make: F)
    where
        F: Fn(CancellationToken) -> Fut + Send + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let stop = self.stop.clone();
        self.tasks.spawn(async move {
            loop {
                if supervised::long_pass(name, make(stop.clone())).await {
                    return;
                }
                tracing::error!(task = name, "the background task panicked; it starts again in {} s", RESTART_AFTER.as_secs());
                if pause(&stop, RESTART_AFTER).await {
                    return;
                }
            }
        });
    }

    /// How many tasks are still running.
    pub fn running(&self) -> usize {
        self.tasks.len()
    }

    /// Tells every task to stop, waits up to `within` for them to end, and aborts the rest.
    pub async fn shut_down(mut self, within: Duration) {
        self.stop.cancel();
        let ended = tokio::time::timeout(within, async {
            while self.tasks.join_next().await.is_some() {}
        })
        .await;
        if ended.is_err() {
            tracing::warn!(left = self.tasks.len(), "background tasks still running {} s after the stop; aborted", within.as_secs());
            self.tasks.shutdown().await;
        }
    }
}

/// Waits `period`; `true` when the stop came first (the task ends).
pub async fn pause(stop: &CancellationToken, period: Duration) -> bool {
    tokio::select! {
        _ = tokio::time::sleep(period) => stop.is_cancelled(),
        _ = stop.cancelled() => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    #[tokio::test(start_paused = true)]
    async fn a_task_that_panics_starts_again_and_all_stop_at_shutdown() {
        let starts = Arc::new(AtomicUsize::new(0));
        let mut tasks = TaskSet::new();
        let counted = starts.clone();
        tasks.spawn("test-task", move |stop| {
            let counted = counted.clone();
            async move {
                if counted.fetch_add(1, Ordering::SeqCst) == 0 {
                    panic!("first start fails");
                }
                while !pause(&stop, Duration::from_secs(5)).await {}
            }
        });
        tokio::time::sleep(Duration::from_secs(3)).await;
        assert_eq!(starts.load(Ordering::SeqCst), 2, "started again after the panic");
        assert_eq!(tasks.running(), 1);
        tasks.shut_down(Duration::from_secs(2)).await;
    }

    #[tokio::test(start_paused = true)]
    async fn a_task_that_ignores_the_stop_is_aborted() {
        let mut tasks = TaskSet::new();
        tasks.spawn("deaf-task", |_stop| std::future::pending::<()>());
        let begun = tokio::time::Instant::now();
        tasks.shut_down(Duration::from_secs(2)).await;
        assert!(begun.elapsed() >= Duration::from_secs(2) && begun.elapsed() < Duration::from_secs(3));
    }
}
